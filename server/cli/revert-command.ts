import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  formatChangesetUri,
  parseChannel,
  type ChangesetFile,
  type ChangesetOperationTarget,
  type InvokeChangesetOperationResult,
} from '../../protocol/index.js';
import { readyChangeset } from './changeset-state.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { UsageError } from './serve-args.js';
import { CommandError, connectTarget, pickSession } from './target.js';

export const REVERT_USAGE = [
  'Usage: changeset-server revert [--turn ID] [--file PATH [--lines A-B] [--side after|before]] [options]',
  '',
  'Reverts what a turn changed: the whole turn, one file, or a line range of',
  'one file. Files changed since the turn are refused as conflicts; nothing',
  'is written then.',
  '',
  '  --turn ID            the turn (default: the last ended turn)',
  '  --file PATH          only this file (relative to the current directory, or absolute)',
  '  --lines A-B          only lines A to B (1-based, inclusive) of --file',
  '  --side after|before  which side of the file --lines counts in (default after)',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server revert`: `invokeChangesetOperation` with operation `revert` on the turn's changeset. */
export async function revertCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, ['turn', 'file', 'lines', 'side']);
  if (values.help) {
    process.stdout.write(REVERT_USAGE);
    return 0;
  }
  if (values.lines !== undefined && values.file === undefined) throw new UsageError('--lines needs --file');
  const side = values.side ?? 'after';
  if (side !== 'after' && side !== 'before') throw new UsageError(`--side must be after or before, got "${side}"`);
  const lines = values.lines === undefined ? undefined : parseLines(values.lines);
  const target = targetOf(values);
  const client = await connectTarget(target);
  try {
    const session = await pickSession(client, target);
    const sessionId = parseChannel(session.channel)?.id;
    if (!sessionId) throw new CommandError(`not a session URI: ${session.channel}`);
    const turnId = values.turn ?? [...session.turns].reverse().find((t) => t.state !== undefined)?.turnId;
    if (turnId === undefined) throw new CommandError(`no ended turn in ${session.channel} to revert`);
    const channel = formatChangesetUri({ sessionId, kind: 'turn', turnId });
    const state = await readyChangeset(client, channel, 60_000);
    if (state.status === 'error') throw new CommandError(`the changeset of turn ${turnId} failed: ${state.error?.message ?? 'unknown error'}`);
    const operation = state.operations?.find((op) => op.id === 'revert');
    if (!operation) throw new CommandError(`the server offers no revert operation on turn ${turnId}`);

    let invocation: ChangesetOperationTarget | undefined;
    if (values.file !== undefined) {
      const file = findFile(state.files, values.file);
      if (!file) {
        const known = state.files.map((f) => (f._meta?.['path'] as string | undefined) ?? f.id).join(', ');
        throw new CommandError(`turn ${turnId} did not change ${values.file}${known ? ` (it changed: ${known})` : ''}`);
      }
      const resource = side === 'before' ? (file.edit.before?.uri ?? file.id) : (file.edit.after?.uri ?? file.id);
      invocation = lines
        ? { kind: 'range', resource, side, range: { start: { line: lines.start - 1, character: 0 }, end: { line: lines.end - 1, character: 0 } } }
        : { kind: 'resource', resource, side };
    }
    const result = await client.request<InvokeChangesetOperationResult>('invokeChangesetOperation', {
      channel,
      operationId: 'revert',
      ...(invocation ? { target: invocation } : {}),
    });
    const message = typeof result?.message === 'string' ? result.message : (result?.message?.markdown ?? 'Reverted');
    process.stdout.write(values.json ? `${JSON.stringify({ channel, turnId, result })}\n` : `${message}\n`);
    return 0;
  } finally {
    await client.close();
  }
}

/** `A-B` (1-based, inclusive) or a single line `A`. */
function parseLines(text: string): { start: number; end: number } {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text);
  const start = match ? Number(match[1]) : NaN;
  const end = match?.[2] !== undefined ? Number(match[2]) : start;
  if (!match || start < 1 || end < start) throw new UsageError(`--lines must be A-B with 1 <= A <= B, got "${text}"`);
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
