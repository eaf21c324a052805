import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  formatChangesetUri,
  parseChannel,
  type ChangesetFile,
  type ChangesetOperationTarget,
  type InvokeChangesetOperationResult,
} from '../../protocol/index.js';
import type { TurnStatus } from '../harness/status.js';
import { readyChangeset } from './changeset-state.js';
import { parseClientArgs, TARGET_USAGE, targetOf, type ClientValues } from './client-args.js';
import { Output } from './output.js';
import { UsageError } from './serve-args.js';
import { CommandError, connect, pickSession, sessionNote } from './target.js';
import { plural, resolveTurn, turnLabel } from './turn-ref.js';

/** The commands that change files through `invokeChangesetOperation`. */
export type OperationCommand = 'revert' | 'restore' | 'discard' | 'undo';

const TURN_HELP = '  --turn T             the turn: the number "status" shows, "last", -1 (the last), -2, …, or its id';
const DRY_RUN_HELP = '  --dry-run            show the files it would change and any conflicts; write nothing';

export const OPERATION_USAGE: Record<OperationCommand, string> = {
  revert: [
    'Usage: changeset-server revert [--turn T] [--file PATH [--lines A-B] [--side after|before]] [--dry-run] [options]',
    '',
    'Reverts what a turn changed: the whole turn, one file, or a line range of one',
    'file. Edits made since are kept where they do not overlap; a file edited since',
    'on the same lines is a conflict, and then nothing is written. "undo" puts it back.',
    '',
    `${TURN_HELP} (default: the last ended turn)`,
    '  --file PATH          only this file (relative to the current directory, or absolute)',
    '  --lines A-B          only the changes touching lines A to B of --file, as your editor numbers them',
    '  --side after|before  count --lines in the file after the turn (default) or before it',
    DRY_RUN_HELP,
  ].join('\n'),
  restore: [
    'Usage: changeset-server restore --turn T [--and-turns] [--dry-run] [options]',
    '',
    'Puts every file back as it was when turn T started. Edits made since are',
    'overwritten ("undo" brings them back).',
    '',
    TURN_HELP,
    '  --and-turns          also remove turn T and every later turn from the session',
    DRY_RUN_HELP,
  ].join('\n'),
  discard: [
    'Usage: changeset-server discard [--file PATH] [--dry-run] [options]',
    '',
    'Discards uncommitted changes (against git HEAD), of every file or of one.',
    '',
    '  --file PATH          only this file',
    DRY_RUN_HELP,
  ].join('\n'),
  undo: [
    'Usage: changeset-server undo [--dry-run] [options]',
    '',
    'Undoes the last revert, restore or discard: every file it wrote comes back',
    'byte for byte.',
    '',
    DRY_RUN_HELP,
  ].join('\n'),
};

const OWN_OPTIONS: Record<OperationCommand, (keyof ClientValues & string)[]> = {
  revert: ['turn', 'file', 'lines', 'side', 'dry-run'],
  restore: ['turn', 'and-turns', 'dry-run'],
  discard: ['file', 'dry-run'],
  undo: ['dry-run'],
};

/** Runs `revert`, `restore`, `discard` or `undo`. */
export async function operationCommand(command: OperationCommand, argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, OWN_OPTIONS[command] as never[]);
  if (values.help) {
    process.stdout.write(`${OPERATION_USAGE[command]}\n${TARGET_USAGE}\n`);
    return 0;
  }
  if (values.lines !== undefined && values.file === undefined) throw new UsageError('--lines needs --file');
  if (command === 'restore' && values.turn === undefined) throw new UsageError('restore needs --turn (the number "changeset-server status" shows, or "last")');
  const side = values.side ?? 'after';
  if (side !== 'after' && side !== 'before') throw new UsageError(`--side must be after or before, got "${side}"`);
  const lines = values.lines === undefined ? undefined : parseLines(values.lines);
  const dryRun = values['dry-run'] === true;
  const out = new Output(values.json === true);
  const target = { ...targetOf(values), startForHistory: true };
  const { client } = await connect(target);
  try {
    const picked = await pickSession(client, target);
    const session = picked.session;
    const sessionId = parseChannel(session.channel)?.id;
    if (!sessionId) throw new CommandError(`not a session URI: ${session.channel}`);
    const report: Record<string, unknown> = { session: session.channel };
    out.note(sessionNote(picked), report);

    let turn: TurnStatus | undefined;
    let channel: string;
    let operationId: string;
    switch (command) {
      case 'revert':
      case 'restore':
        turn = resolveTurn(session, values.turn);
        if (turn.state === undefined) throw new CommandError(`${turnLabel(turn)} is still being recorded; end it first ("changeset-server turn end")`);
        channel = formatChangesetUri({ sessionId, kind: 'turn', turnId: turn.turnId });
        operationId = command === 'revert' ? 'revert' : values['and-turns'] ? 'restore-checkpoint-and-turns' : 'restore-checkpoint';
        report['turn'] = { index: turn.index, turnId: turn.turnId };
        break;
      case 'discard':
        channel = formatChangesetUri({ sessionId, kind: 'uncommitted' });
        operationId = 'discard';
        break;
      case 'undo':
        channel = formatChangesetUri({ sessionId, kind: 'session' });
        operationId = 'undo';
        break;
    }
    const state = await readyChangeset(client, channel, 60_000);
    if (state.status === 'error') throw new CommandError(`cannot read ${turn ? turnLabel(turn) : 'the changes'}: ${state.error?.message ?? 'unknown error'}`);
    const op = state.operations?.find((o) => o.id === operationId);
    if (!op) throw new CommandError(`the server offers no ${command} here`);
    if (op.status === 'disabled') throw new CommandError(command === 'undo' ? 'Nothing to undo.' : `${command} is not available here`);

    let invocation: ChangesetOperationTarget | undefined;
    if (values.file !== undefined) {
      const file = findFile(state.files, values.file);
      if (!file) {
        const known = state.files.map((f) => (f._meta?.['path'] as string | undefined) ?? f.id);
        const what = turn ? turnLabel(turn) : 'the uncommitted changes';
        throw new CommandError(`${what} did not change ${values.file}${known.length ? ` (it changed: ${known.join(', ')})` : ''}`);
      }
      const resource = side === 'before' ? (file.edit.before?.uri ?? file.id) : (file.edit.after?.uri ?? file.id);
      invocation = lines
        ? { kind: 'range', resource, side, range: { start: { line: lines.start - 1, character: 0 }, end: { line: lines.end - 1, character: 0 } } }
        : { kind: 'resource', resource, side };
    }
    const result = await client.request<InvokeChangesetOperationResult>('invokeChangesetOperation', {
      channel,
      operationId,
      ...(invocation ? { target: invocation } : {}),
      ...(dryRun ? { _meta: { dryRun: true } } : {}),
    });
    const meta = ((result as { _meta?: unknown } | null)?._meta ?? {}) as { action?: string; files?: unknown; unchanged?: string[] };
    const message = typeof result?.message === 'string' ? result.message : (result?.message?.markdown ?? '');
    if (dryRun) {
      const files = (meta.files ?? []) as { path: string; action: string }[];
      const heading = `Dry run, nothing written: ${command} ${turn ? turnLabel(turn) : ''} would ${files.length === 0 ? 'change no file' : `change ${plural(files.length, 'file')}:`}`.replace(/ {2,}/g, ' ');
      const body = files.map((f) => `  ${f.action.padEnd(6)} ${f.path}`);
      out.result([heading, ...body].join('\n'), { ...report, operation: operationId, dryRun: true, files, unchanged: meta.unchanged ?? [], message });
      return 0;
    }
    const files = (Array.isArray(meta.files) ? meta.files : []) as string[];
    const heading = meta.action ?? message;
    const body = files.length > 0 ? files.map((f) => `  ${f}`) : ['  (no file needed a change)'];
    out.result([heading, ...body].join('\n'), { ...report, operation: operationId, action: heading, files, message });
    return 0;
  } finally {
    await client.close();
  }
}

/** `A-B` (1-based, inclusive, as editors number lines) or a single line `A`. */
function parseLines(text: string): { start: number; end: number } {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text);
  const start = match ? Number(match[1]) : NaN;
  const end = match?.[2] !== undefined ? Number(match[2]) : start;
  if (!match || start < 1 || end < start) throw new UsageError(`--lines must be A-B with 1 <= A <= B (line numbers as your editor shows them), got "${text}"`);
  return { start, end };
}

/** The changeset file a command-line path names: by file URI (either side) or by its display path. */
function findFile(files: readonly ChangesetFile[], path: string): ChangesetFile | undefined {
  const uri = pathToFileURL(resolve(path)).href;
  return (
    files.find((f) => f.id === uri || f.edit.after?.uri === uri || f.edit.before?.uri === uri) ??
    files.find((f) => f._meta?.['path'] === path || f._meta?.['oldPath'] === path)
  );
}
