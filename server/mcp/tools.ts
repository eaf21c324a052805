import { basename, relative, resolve, sep } from 'node:path';
import { formatChangesetUri, parseChannel, type ChangesetState } from '../../protocol/index.js';
import { readyChangeset } from '../client/changeset-state.js';
import { findChangedFile, parseLineRange, runOperation, type OperationReport, type OperationRequest } from '../client/operation-request.js';
import type { RpcClient } from '../client/rpc-client.js';
import { pickSession, type Picked } from '../client/target.js';
import { resolveTurn } from '../client/turn-ref.js';
import type { WorkspaceFileDiff } from '../diff/file-diff.js';
import type { SessionStatusInfo, TurnStatus } from '../../protocol/index.js';
import { CommandError } from '../client/errors.js';
import { MCP_HINTS } from '../client/hints.js';
import { commentBody, commentCode, commentPlace } from '../client/comment-words.js';
import type { ReviewComment } from '../../protocol/extensions/comments.js';
import { authorSentence, lineWords, rangesInWords, turnsOf, type BlameContext } from '../client/blame-words.js';

/** A JSON Schema for a tool's arguments (MCP sends them as a plain object). */
export interface ArgumentSchema {
  type: 'object';
  properties: Record<string, { type: string | readonly string[]; description: string; enum?: string[] }>;
  required?: string[];
  additionalProperties: false;
}

/** What a tool needs to reach the server and the session it works on. */
export interface ToolContext {
  client: RpcClient;
  /** The agent's working directory: relative paths start here, and its session is the default one. */
  cwd: string;
}

/** One tool an agent can call. */
export interface ChangesetTool {
  name: string;
  title: string;
  /** Written for a model: when to use it, what it returns, what it changes. */
  description: string;
  inputSchema: ArgumentSchema;
  /** True when the tool writes files. */
  destructive: boolean;
  /** False for a tool that changes something other than files (a comment's state); read-only when omitted and not destructive. */
  readOnly?: boolean;
  run(args: ToolArguments, context: ToolContext): Promise<unknown>;
}

/** A tool call's arguments, checked against the schema's property types before `run`. */
export type ToolArguments = Record<string, string | number | boolean | undefined>;

const SESSION_ARG = { type: 'string', description: 'Session id or URI (from list_sessions). Default: the session recording your working directory.' } as const;
const TURN_ARG = {
  type: ['string', 'number'],
  description: 'The turn: its number as list_turns shows it, "last" (default), -1 for the last, -2 for the one before, or its id.',
} as const;
const DRY_RUN_ARG = { type: 'boolean', description: 'Report what would change and any conflicts, writing nothing. Use it first when unsure.' } as const;
const OUTSIDE_LINKS_ARG = {
  type: 'boolean',
  description:
    'Only for a session imported from a mirror: also create symbolic links that point outside the working directory (otherwise listed as skipped). Set it only when the user asked for it.',
} as const;

export const CHANGESET_TOOLS: readonly ChangesetTool[] = [
  {
    name: 'list_sessions',
    title: 'List recorded sessions',
    description:
      'Lists the agent sessions changeset-server has recorded for this workspace, newest last: id, title, agent, whether it is still recording, and how many turns it has. Read-only.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    destructive: false,
    run: async (_args, { client }) => {
      const status = await client.request('harness/status', { turns: 0 });
      return {
        sessions: status.sessions.map((s) => ({
          session: parseChannel(s.channel)?.id ?? s.channel,
          title: s.title,
          ...(s.agent !== undefined ? { agent: s.agent } : {}),
          recording: s.endedAt === undefined,
          turns: s.turnCount,
          createdAt: s.createdAt,
          workingDirectories: s.workingDirectories,
        })),
      };
    },
  },
  {
    name: 'list_turns',
    title: 'List the turns of a session',
    description:
      'Lists the turns (one per prompt) of a session with what each changed: number, id, title, state, files changed, lines added and deleted. Use the number to name a turn in the other tools. Read-only.',
    inputSchema: { type: 'object', properties: { session: SESSION_ARG }, additionalProperties: false },
    destructive: false,
    run: async (args, context) => {
      const { session } = await sessionFor(args, context);
      return { session: session.channel, title: session.title, turns: session.turns.map(turnSummary) };
    },
  },
  {
    name: 'show_changes',
    title: 'Show the files a turn changed',
    description:
      'Lists the files one turn changed (or, with turn "session", everything since the session began): path, how it changed, lines added and deleted. Read-only; follow with show_file_diff for one file.',
    inputSchema: {
      type: 'object',
      properties: { turn: { ...TURN_ARG, description: `${TURN_ARG.description} "session" for every change since the session began.` }, session: SESSION_ARG },
      additionalProperties: false,
    },
    destructive: false,
    run: async (args, context) => {
      const { turn, state } = await namedChangeset(args, context);
      return {
        ...(turn ? { turn: turnSummary(turn) } : { scope: 'session' }),
        ...(turn?.steps ? { steps: turn.steps } : {}),
        files: state.files.map((f) => ({
          path: (f._meta?.['path'] as string | undefined) ?? f.id,
          change: (f._meta?.['kind'] as string | undefined) ?? (f.edit.before ? (f.edit.after ? 'modified' : 'deleted') : 'added'),
          added: f.edit.diff?.added ?? 0,
          deleted: f.edit.diff?.removed ?? 0,
        })),
      };
    },
  },
  {
    name: 'show_file_diff',
    title: "Show one file's diff",
    description:
      'Shows the unified diff (3 lines of context, line numbers as editors count them) of one file in one turn, or since the session began with turn "session". Read-only.',
    inputSchema: {
      type: 'object',
      properties: {
        file: { type: 'string', description: 'The file: a path relative to your working directory, absolute, or as show_changes lists it.' },
        turn: { ...TURN_ARG, description: `${TURN_ARG.description} "session" for the change since the session began.` },
        session: SESSION_ARG,
      },
      required: ['file'],
      additionalProperties: false,
    },
    destructive: false,
    run: async (args, context) => {
      const { channel, turn, state } = await namedChangeset(args, context);
      const file = await findChangedFile(context.client, channel, state, String(args['file']), context.cwd);
      if (!file) throw new CommandError(`${turn ? `turn ${turn.index}` : 'the session'} did not change ${String(args['file'])}`);
      const diff = await context.client.request('changesetFileDiff', { channel, fileId: file.id });
      const path = (file._meta?.['path'] as string | undefined) ?? file.id;
      return { path, ...(turn ? { turn: turn.index } : {}), diff: unifiedText(path, diff) };
    },
  },
  {
    name: 'revert',
    title: 'Revert a turn, a file or lines',
    description:
      "Undoes what one turn changed, keeping later edits to other lines: the whole turn, one file, or the changes touching a line range of one file. If a file was edited since on the same lines, nothing is written and the conflicts are listed. Files that hold edits no turn made (by the user, between or after turns) are listed in userEdits, with when and whether they are kept. Writes files; 'undo' puts them back.",
    inputSchema: {
      type: 'object',
      properties: {
        turn: TURN_ARG,
        file: { type: 'string', description: 'Only this file (relative to your working directory, absolute, or as show_changes lists it).' },
        lines: { type: 'string', description: 'Only the changes touching these lines of file, "A-B" or "A", numbered from 1 as editors show them.' },
        side: { type: 'string', enum: ['after', 'before'], description: 'Count lines in the file after the turn (default) or before it.' },
        dry_run: DRY_RUN_ARG,
        allow_outside_symlinks: OUTSIDE_LINKS_ARG,
        session: SESSION_ARG,
      },
      additionalProperties: false,
    },
    destructive: true,
    run: (args, context) => operate({ command: 'revert', ...fileRequest(args) }, args, context),
  },
  {
    name: 'restore_checkpoint',
    title: 'Restore files to the start of a turn',
    description:
      "Puts every file of the workspace back as it was when a turn started, overwriting edits made since ('undo' brings them back); files that hold edits no turn made (by the user, between or after turns) are listed in userEdits, with when they were made. With and_later_turns, the turn and every later one are also removed from the session. Writes files.",
    inputSchema: {
      type: 'object',
      properties: {
        turn: { ...TURN_ARG, description: 'The turn whose start to go back to: its number as list_turns shows it, "last", -1, or its id.' },
        step: {
          type: 'number',
          description:
            "Go back to just before this tool call of the turn (its number among the turn's file edits, from show_changes steps) instead of the turn's start.",
        },
        and_later_turns: { type: 'boolean', description: 'Also remove this turn and every later turn from the session.' },
        dry_run: DRY_RUN_ARG,
        allow_outside_symlinks: OUTSIDE_LINKS_ARG,
        session: SESSION_ARG,
      },
      required: ['turn'],
      additionalProperties: false,
    },
    destructive: true,
    run: (args, context) =>
      operate(
        { command: 'restore', andTurns: args['and_later_turns'] === true, ...(typeof args['step'] === 'number' ? { step: args['step'] } : {}) },
        args,
        context,
      ),
  },
  {
    name: 'undo',
    title: 'Undo the last revert or restore',
    description:
      'Puts back, byte for byte, every file the last revert, restore or discard wrote. Refuses (writing nothing) when one of those files was edited since. Writes files.',
    inputSchema: {
      type: 'object',
      properties: { dry_run: DRY_RUN_ARG, allow_outside_symlinks: OUTSIDE_LINKS_ARG, session: SESSION_ARG },
      additionalProperties: false,
    },
    destructive: true,
    run: (args, context) => operate({ command: 'undo' }, args, context),
  },
  {
    name: 'redo',
    title: 'Redo what the last undo took back',
    description:
      "Takes back the last undo: the files it put back get again what the undone revert, restore or discard wrote. Only right after an undo ('Nothing to redo' otherwise); refuses (writing nothing) when one of those files was edited since the undo. Writes files.",
    inputSchema: {
      type: 'object',
      properties: { dry_run: DRY_RUN_ARG, allow_outside_symlinks: OUTSIDE_LINKS_ARG, session: SESSION_ARG },
      additionalProperties: false,
    },
    destructive: true,
    run: (args, context) => operate({ command: 'redo' }, args, context),
  },
  {
    name: 'list_comments',
    title: "List the reviewer's comments",
    description:
      "Lists the review comments a person left on your changes (open ones by default), oldest first: the comment's number, the file and lines it is on now (or that it is outdated: the lines were removed or rewritten since), the turn it was written on, the code it points at, and what the reviewer wrote. Address the open ones, then mark each addressed with resolve_comment. Read-only.",
    inputSchema: {
      type: 'object',
      properties: {
        state: { type: 'string', enum: ['open', 'resolved', 'all'], description: 'Which comments: open (default), resolved or all.' },
        file: { type: 'string', description: 'Only comments on this file (relative to your working directory, absolute, or as show_changes lists it).' },
        session: SESSION_ARG,
      },
      additionalProperties: false,
    },
    destructive: false,
    run: async (args, context) => {
      const { session } = await sessionFor(args, context);
      const state = (args['state'] as 'open' | 'resolved' | 'all' | undefined) ?? 'open';
      const { comments } = await context.client.request('comments/list', { channel: session.channel, state });
      const file = args['file'] === undefined ? undefined : displayPathOf(session, String(args['file']), context.cwd);
      const listed = file === undefined ? comments : comments.filter((c) => c.anchor.kind === 'lines' && (c.anchor.path === file || c.now?.path === file));
      const open = listed.filter((c) => c.state === 'open').length;
      return {
        summary:
          listed.length === 0
            ? `No ${state === 'all' ? '' : `${state} `}review comments${file !== undefined ? ` on ${file}` : ''}.`
            : `${listed.length} ${state === 'all' ? '' : `${state} `}review comment${listed.length === 1 ? '' : 's'}${file !== undefined ? ` on ${file}` : ''}${state === 'all' ? ` (${open} open)` : ''}.`,
        comments: listed.map(commentForModel),
      };
    },
  },
  {
    name: 'resolve_comment',
    title: 'Mark a review comment addressed',
    description:
      "Marks one of the reviewer's comments (its number from list_comments) as addressed by you, with a note of what you did; the reviewer sees it resolved by the agent with your note and can reopen it. Writes no files.",
    inputSchema: {
      type: 'object',
      properties: {
        comment: { type: ['number', 'string'], description: 'The comment\'s number as list_comments shows it (3 or "#3").' },
        note: { type: 'string', description: 'What you did about it, in a sentence.' },
        session: SESSION_ARG,
      },
      required: ['comment', 'note'],
      additionalProperties: false,
    },
    destructive: false,
    readOnly: false,
    run: async (args, context) => {
      const { session } = await sessionFor(args, context);
      const number = commentNumber(args['comment']);
      const note = String(args['note']).trim();
      if (note.length === 0) throw new CommandError('"note" must say what you did about the comment');
      const comment = await context.client.request('comments/resolve', { channel: session.channel, id: number, by: 'agent', note });
      return { summary: `Comment #${comment.id} is marked addressed by you.`, comment: commentForModel(comment) };
    },
  },
  {
    name: 'who_wrote',
    title: 'Who wrote these lines',
    description:
      "Says who last wrote each line of a file (or of a line range of it), from the session's record: a turn (its number, prompt, agent, and the step and tool call that wrote it), the user by hand (an edit no turn made, between turns or during one), or the repository's history before recording began (the commit). Ask it before changing or deleting lines you did not write yourself in this turn: lines the user wrote by hand are theirs. Read-only.",
    inputSchema: {
      type: 'object',
      properties: {
        file: { type: 'string', description: 'The file: a path relative to your working directory, absolute, or as show_changes lists it.' },
        lines: { type: 'string', description: 'Only these lines, "A-B" or "A", numbered from 1 as editors show them. Default: the whole file.' },
        session: SESSION_ARG,
      },
      required: ['file'],
      additionalProperties: false,
    },
    destructive: false,
    run: (args, context) => whoWrote(args, context),
  },
];

/** `who_wrote`: each range of lines with its author in a sentence, a summary, and each turn's prompt once. */
async function whoWrote(args: ToolArguments, context: ToolContext): Promise<unknown> {
  const picked = await sessionFor(args, context);
  const session = picked.session;
  const file = String(args['file']);
  let lines: { start: number; end: number } | undefined;
  if (args['lines'] !== undefined) {
    lines = parseLineRange(String(args['lines']));
    if (!lines) throw new CommandError(`"lines" must be "A-B" or "A" with 1 <= A <= B, got "${String(args['lines'])}"`);
  }
  const abs = resolve(context.cwd, file);
  if (!session.workingDirectories.some((d) => abs === d || abs.startsWith(d.endsWith(sep) ? d : d + sep))) {
    throw new CommandError(`${file} is not in a folder the session "${session.title}" records (${session.workingDirectories.join(', ')})`);
  }
  const result = await context.client.request('provenance/lines', {
    session: session.channel,
    path: abs,
    ...(lines ? { startLine: lines.start, endLine: lines.end } : {}),
  });
  if (result.missing) throw new CommandError(`${result.path} does not exist in the working tree as last recorded`);
  if (result.binary) return { file: result.path, summary: `${result.path} is a binary file: it has no lines.` };
  if (lines && lines.start > result.lineCount)
    throw new CommandError(`${result.path} has ${result.lineCount === 1 ? 'only 1 line' : `only ${result.lineCount} lines`}`);
  const ctx: BlameContext = { session, others: picked.others, user: 'the user' };
  const ranges = rangesInWords(result, ctx);
  const first = ranges[0]?.startLine ?? 1;
  const last = ranges.at(-1)?.endLine ?? 0;
  const count = (kind: string) => ranges.filter((r) => r.author.kind === kind).reduce((n, r) => n + r.endLine - r.startLine + 1, 0);
  const parts = [
    [count('turn'), 'by turns of the session'],
    [count('user'), 'by the user by hand'],
    [count('before-recording'), 'from before recording began'],
    [count('mixed'), 'by one of several sessions at once (the record cannot tell which)'],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${n === 1 ? 'line' : 'lines'} ${what}`);
  const restored = ranges.filter((r) => r.restored).reduce((n, r) => n + r.endLine - r.startLine + 1, 0);
  return {
    file: result.path,
    summary:
      ranges.length === 0
        ? `${result.path} is empty.`
        : `${result.path}, ${lineWords(first, last)} of ${result.lineCount}: ${parts.join(', ')}${restored > 0 ? `; ${restored} of them put back by a revert, restore or undo` : ''}.`,
    ranges: ranges.map((r, i) => ({
      lines: r.startLine === r.endLine ? `${r.startLine}` : `${r.startLine}-${r.endLine}`,
      author: authorSentence(result.authors[result.ranges[i]!.author]!, ctx),
      ...(r.restored ? { restored: 'put back by a revert, restore or undo; written first by this author' } : {}),
    })),
    turns: turnsOf(result, ctx).map(({ name, prompt, agent, at }) => ({
      turn: name,
      ...(prompt !== undefined ? { prompt } : {}),
      ...(agent !== undefined ? { agent } : {}),
      at,
    })),
  };
}

/** Checks a call's arguments against the tool's schema; returns the problem, or undefined. */
export function argumentProblem(tool: ChangesetTool, args: unknown): string | undefined {
  if (args === undefined) args = {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return 'arguments must be an object';
  const given = args as Record<string, unknown>;
  for (const name of tool.inputSchema.required ?? []) if (given[name] === undefined) return `"${name}" is required`;
  for (const [name, value] of Object.entries(given)) {
    const spec = tool.inputSchema.properties[name];
    if (!spec) return `unknown argument "${name}" (${tool.name} takes ${Object.keys(tool.inputSchema.properties).join(', ') || 'no arguments'})`;
    const types: readonly string[] = typeof spec.type === 'string' ? [spec.type] : spec.type;
    if (!types.includes(typeof value)) return `"${name}" must be a ${types.join(' or ')}`;
    if (spec.enum && !spec.enum.includes(String(value))) return `"${name}" must be one of ${spec.enum.join(', ')}`;
    if (typeof value === 'string' && value.length > 4096) return `"${name}" is too long`;
  }
  return undefined;
}

async function operate(request: Omit<OperationRequest, 'cwd'>, args: ToolArguments, context: ToolContext): Promise<OperationReport> {
  const picked = await sessionFor(args, context);
  return runOperation(context.client, picked.session, {
    ...request,
    ...(args['turn'] !== undefined ? { turn: String(args['turn']) } : {}),
    dryRun: args['dry_run'] === true,
    ...(args['allow_outside_symlinks'] === true ? { allowOutsideSymlinks: true } : {}),
    cwd: context.cwd,
    hints: MCP_HINTS,
  });
}

function fileRequest(args: ToolArguments): Partial<OperationRequest> {
  const out: Partial<OperationRequest> = {};
  if (args['file'] !== undefined) out.file = String(args['file']);
  if (args['lines'] !== undefined) {
    if (out.file === undefined) throw new CommandError('"lines" needs "file"');
    const lines = parseLineRange(String(args['lines']));
    if (!lines) throw new CommandError(`"lines" must be "A-B" or "A" with 1 <= A <= B, got "${String(args['lines'])}"`);
    out.lines = lines;
  }
  if (args['side'] === 'before' || args['side'] === 'after') out.side = args['side'];
  return out;
}

function sessionFor(args: ToolArguments, context: ToolContext): Promise<Picked> {
  return pickSession(context.client, { cwd: context.cwd, hints: MCP_HINTS, ...(args['session'] !== undefined ? { session: String(args['session']) } : {}) });
}

function changesetOf(session: SessionStatusInfo, ref: ToolArguments[string]): { channel: string; turn?: TurnStatus } {
  const sessionId = parseChannel(session.channel)?.id;
  if (!sessionId) throw new CommandError(`not a session URI: ${session.channel}`);
  if (ref === 'session') return { channel: formatChangesetUri({ sessionId, kind: 'session' }) };
  const turn = resolveTurn(session, ref === undefined ? undefined : String(ref), MCP_HINTS);
  return { channel: formatChangesetUri({ sessionId, kind: 'turn', turnId: turn.turnId }), turn };
}

/** The changeset a call's `session` and `turn` name, ready to read. */
async function namedChangeset(args: ToolArguments, context: ToolContext): Promise<{ channel: string; turn?: TurnStatus; state: ChangesetState }> {
  const { session } = await sessionFor(args, context);
  const { channel, turn } = changesetOf(session, args['turn']);
  return { channel, ...(turn ? { turn } : {}), state: await readyState(context.client, channel) };
}

async function readyState(client: RpcClient, channel: string): Promise<ChangesetState> {
  const state = await readyChangeset(client, channel, 60_000);
  if (state.status === 'error') throw new CommandError(`cannot read the changes: ${state.error?.message ?? 'unknown error'}`);
  return state;
}

function turnSummary(turn: TurnStatus): Record<string, unknown> {
  return {
    number: turn.index,
    id: turn.turnId,
    ...((turn.title ?? turn.message) ? { title: turn.title ?? turn.message } : {}),
    state: turn.state ?? 'recording',
    startedAt: turn.startedAt,
    ...(turn.changes ? { files: turn.changes.files, added: turn.changes.added, deleted: turn.changes.deleted } : {}),
  };
}

/** A diff as `git diff` prints it, for a model to read. */
function unifiedText(path: string, diff: WorkspaceFileDiff): string {
  const header = `--- ${diff.before ? `a/${path}` : '/dev/null'}\n+++ ${diff.after ? `b/${path}` : '/dev/null'}\n`;
  if (diff.kind !== 'text') return `${header}(${diff.kind} file: no line diff)\n`;
  const range = (start: number, count: number) => `${count === 0 ? start - 1 : start}${count === 1 ? '' : `,${count}`}`;
  const hunks = diff.hunks.map((h) => `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@\n${h.lines.join('\n')}\n`);
  return header + hunks.join('');
}

/** A comment as a model reads it: its number, where it is now, the code, the text, and who resolved it. */
function commentForModel(c: ReviewComment): Record<string, unknown> {
  const lines =
    c.anchor.kind === 'lines'
      ? (c.now ?? (c.now === null ? undefined : { path: c.anchor.path, startLine: c.anchor.startLine, endLine: c.anchor.endLine }))
      : undefined;
  const code = commentCode(c);
  return {
    number: Number(c.id),
    on: commentPlace(c),
    ...(c.anchor.kind === 'lines' ? { file: lines?.path ?? c.anchor.path } : {}),
    ...(lines ? { lines: lines.startLine === lines.endLine ? `${lines.startLine}` : `${lines.startLine}-${lines.endLine}` } : {}),
    ...(c.turn !== undefined ? { turn: c.turn } : {}),
    ...(c.anchor.kind === 'lines' ? { outdated: c.now === null } : {}),
    ...(code.length > 0 ? { code: code.join('\n') } : {}),
    comment: commentBody(c),
    author: c.author,
    state: c.state,
    ...(c.resolution
      ? { resolvedBy: c.resolution.by === 'agent' ? 'the agent' : 'the reviewer', ...(c.resolution.note ? { note: c.resolution.note } : {}) }
      : {}),
  };
}

/** A comment's number from 3, "3" or "#3". */
function commentNumber(value: ToolArguments[string]): string {
  const match = /^#?([1-9]\d{0,15})$/.exec(String(value).trim());
  if (!match) throw new CommandError(`"comment" must be a comment's number as list_comments shows it, such as 3, got ${JSON.stringify(value)}`);
  return match[1]!;
}

/** A file named by the agent as the session's changesets show it: relative to its working directory (the directory's name first when it has several). */
function displayPathOf(session: SessionStatusInfo, file: string, cwd: string): string {
  const abs = resolve(cwd, file);
  const dirs = session.workingDirectories;
  const dir = dirs.filter((d) => abs === d || abs.startsWith(d.endsWith(sep) ? d : d + sep)).sort((a, b) => b.length - a.length)[0];
  if (dir === undefined) return file.split(sep).join('/');
  const rel = relative(dir, abs).split(sep).join('/');
  return dirs.length > 1 ? `${basename(dir)}/${rel}` : rel;
}
