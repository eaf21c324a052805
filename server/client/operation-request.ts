import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChangesetFile, ChangesetOperationTarget } from '../../protocol/index.js';
import { formatChangesetUri } from '../../protocol/changeset/uris.js';
import { parseChannel } from '../../protocol/common/channels.js';
import type { SessionStatusInfo, TurnStatus } from '../../protocol/index.js';
import { readyChangeset } from './changeset-state.js';
import { RemoteError } from './remote-error.js';
import type { RpcClient } from './rpc-client.js';

import { resolveTurn, turnLabel } from './turn-ref.js';
import { CommandError } from './errors.js';
import { CLI_HINTS, type Hints } from './hints.js';

/** The client commands that change files through `invokeChangesetOperation`. */
export type OperationCommand = 'revert' | 'restore' | 'discard' | 'undo' | 'redo';

/** What a user (or an agent) asks an operation to do, in their own terms. */
export interface OperationRequest {
  command: OperationCommand;
  /** The turn: the number `status` shows, `last`, `-1`, … or an id (revert and restore). */
  turn?: string;
  /** One file: a path relative to `cwd`, absolute, or as the changeset shows it. */
  file?: string;
  /** Lines of that file, 1-based and inclusive, as editors number them. */
  lines?: { start: number; end: number };
  /** Which version of the file `lines` count in (default: after the turn). */
  side?: 'after' | 'before';
  /** restore: also remove the turn and every later one. */
  andTurns?: boolean;
  /** restore: back to before this tool call (step) of the turn instead of the turn's start. */
  step?: number;
  /** Report what would change; write nothing. */
  dryRun?: boolean;
  /** From an imported session: also create symbolic links pointing outside the working directory (skipped otherwise). */
  allowOutsideSymlinks?: boolean;
  /** Where relative paths start (the current directory by default). */
  cwd?: string;
  /** Where errors send the reader next (the command line's by default). */
  hints?: Hints;
}

/** What an operation did, or would do on a dry run. */
export interface OperationReport {
  session: string;
  operationId: string;
  turn?: { index: number; turnId: string; label: string };
  dryRun: boolean;
  /** The server's one-line account ("Reverted 2 files"). */
  message: string;
  /** The timeline's line for it, when the server gives one ("Reverted lines 3–9 of src/app.ts (turn 2)"). */
  action?: string;
  /** Files written (paths), or on a dry run the files that would change with how. */
  files: string[] | { path: string; action: string }[];
  /** Files already as wanted. */
  unchanged: string[];
  /** Files left alone on purpose, with why. */
  skipped: { path: string; reason: string }[];
  /** Files written (or that would be) holding edits no turn made. */
  userEdited: string[];
  /** The same files, each with when those edits were made and what became of them. */
  userEdits: { path: string; reason: string }[];
}

/** What a person reads when undo or redo has nothing to do. */
const DISABLED: Partial<Record<OperationCommand, string>> = {
  undo: 'Nothing to undo.',
  redo: 'Nothing to redo: redo takes back the last undo, and there is none since the last revert, restore or discard.',
};

/** Carries out an operation request against one session of a connected server. */
export async function runOperation(client: RpcClient, session: SessionStatusInfo, request: OperationRequest): Promise<OperationReport> {
  const { command } = request;
  const sessionId = parseChannel(session.channel)?.id;
  if (!sessionId) throw new CommandError(`not a session URI: ${session.channel}`);
  let turn: TurnStatus | undefined;
  let channel: string;
  let operationId: string;
  switch (command) {
    case 'revert':
    case 'restore':
      turn = resolveTurn(session, request.turn, request.hints);
      if (turn.state === undefined) throw new CommandError(`${turnLabel(turn)} is still being recorded; ${(request.hints ?? CLI_HINTS).endTurn}`);
      channel = formatChangesetUri({ sessionId, kind: 'turn', turnId: turn.turnId });
      operationId = command === 'revert' ? 'revert' : request.andTurns ? 'restore-checkpoint-and-turns' : 'restore-checkpoint';
      break;
    case 'discard':
      channel = formatChangesetUri({ sessionId, kind: 'uncommitted' });
      operationId = 'discard';
      break;
    case 'undo':
    case 'redo':
      channel = formatChangesetUri({ sessionId, kind: 'session' });
      operationId = command;
      break;
  }
  const state = await readyChangeset(client, channel, 60_000);
  if (state.status === 'error') throw new CommandError(`cannot read ${turn ? turnLabel(turn) : 'the changes'}: ${state.error?.message ?? 'unknown error'}`);
  const op = state.operations?.find((o) => o.id === operationId);
  if (!op) throw new CommandError(`the server offers no ${command} here`);
  if (op.status === 'disabled') throw new CommandError(DISABLED[command] ?? `${command} is not available here`);

  let target: ChangesetOperationTarget | undefined;
  if (request.file !== undefined) {
    const file = await findChangedFile(client, channel, state, request.file, request.cwd);
    if (!file) {
      const known = state.files.map((f) => (f._meta?.['path'] as string | undefined) ?? f.id);
      const what = turn ? turnLabel(turn) : 'the uncommitted changes';
      throw new CommandError(`${what} did not change ${request.file}${known.length ? ` (it changed: ${known.join(', ')})` : ''}`);
    }
    const side = request.side ?? 'after';
    const resource = side === 'before' ? (file.edit.before?.uri ?? file.id) : (file.edit.after?.uri ?? file.id);
    const { lines } = request;
    target = lines
      ? { kind: 'range', resource, side, range: { start: { line: lines.start - 1, character: 0 }, end: { line: lines.end - 1, character: 0 } } }
      : { kind: 'resource', resource, side };
  }
  const dryRun = request.dryRun === true;
  const invocationMeta = {
    ...(dryRun ? { dryRun: true } : {}),
    ...(command === 'restore' && request.step !== undefined ? { step: request.step } : {}),
    ...(request.allowOutsideSymlinks === true ? { allowOutsideSymlinks: true } : {}),
  };
  const result = await client
    .request('invokeChangesetOperation', {
      channel,
      operationId,
      ...(target ? { target } : {}),
      ...(Object.keys(invocationMeta).length > 0 ? { _meta: invocationMeta } : {}),
    })
    .catch((error: unknown) => {
      throw asTypedLines(error, request);
    });
  const meta = ((result as { _meta?: unknown } | null)?._meta ?? {}) as {
    action?: string;
    files?: unknown;
    unchanged?: string[];
    skipped?: unknown;
    userEdited?: unknown;
    userEdits?: unknown;
  };
  const message = typeof result?.message === 'string' ? result.message : (result?.message?.markdown ?? '');
  const files = (Array.isArray(meta.files) ? meta.files : []) as OperationReport['files'];
  return {
    session: session.channel,
    operationId,
    ...(turn ? { turn: { index: turn.index, turnId: turn.turnId, label: turnLabel(turn) } } : {}),
    dryRun,
    message,
    ...(meta.action !== undefined ? { action: meta.action } : {}),
    files,
    unchanged: meta.unchanged ?? [],
    skipped: Array.isArray(meta.skipped) ? (meta.skipped as OperationReport['skipped']) : [],
    userEdited: Array.isArray(meta.userEdited) ? (meta.userEdited as string[]) : [],
    userEdits: Array.isArray(meta.userEdits) ? (meta.userEdits as OperationReport['userEdits']) : [],
  };
}

/** The server counts lines from 0; a person typed them from 1, so a range it refuses is said back in their numbers. */
function asTypedLines(error: unknown, request: OperationRequest): unknown {
  const outside = error instanceof RemoteError ? /range lines \d+-\d+ are outside the file's (\d+) lines/.exec(error.message) : null;
  if (!outside || !request.lines) return error;
  const { start, end } = request.lines;
  const which = request.side === 'before' ? 'before the turn' : 'after the turn';
  return new CommandError(
    `${(request.hints ?? CLI_HINTS).lines} ${start === end ? start : `${start}-${end}`}: ${request.file} has ${outside[1]} lines ${which}`,
  );
}

/** The changeset file a user's path names: by file URI (either side) or by its display path. */
function findFile(files: readonly ChangesetFile[], path: string, cwd?: string): ChangesetFile | undefined {
  const uri = pathToFileURL(resolve(cwd ?? process.cwd(), path)).href;
  return (
    files.find((f) => f.id === uri || f.edit.after?.uri === uri || f.edit.before?.uri === uri) ??
    files.find((f) => f._meta?.['path'] === path || f._meta?.['oldPath'] === path)
  );
}

/**
 * A file of a changeset by path or URI: among the files its state carries,
 * else — when the state is cut (`_meta.truncated`) — among every file,
 * looked for by name with `changesetFiles`.
 */
export async function findChangedFile(
  client: RpcClient,
  channel: string,
  state: { files: readonly ChangesetFile[]; _meta?: Record<string, unknown> },
  path: string,
  cwd?: string,
): Promise<ChangesetFile | undefined> {
  const found = findFile(state.files, path, cwd);
  if (found || state._meta?.['truncated'] !== true) return found;
  const name = path.slice(path.lastIndexOf('/') + 1);
  const page = await client.request('changesetFiles', { channel, filter: { text: name }, form: 'full' });
  return findFile(page.files ?? [], path, cwd);
}

/** `A-B` (1-based, inclusive, as editors number lines) or a single line `A`; undefined when malformed. */
export function parseLineRange(text: string): { start: number; end: number } | undefined {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  const start = match ? Number(match[1]) : NaN;
  const end = match?.[2] !== undefined ? Number(match[2]) : start;
  return !match || start < 1 || end < start ? undefined : { start, end };
}
