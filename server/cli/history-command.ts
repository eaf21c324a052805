import { resolve } from 'node:path';
import type { FileHistoryEntry } from '../../protocol/index.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { Output } from '../client/output.js';
import { connectToSession } from '../client/target.js';
import { plural } from '../client/turn-ref.js';
import { UsageError } from '../client/errors.js';

export const HISTORY_USAGE = [
  'Usage: changeset-server history FILE [options]',
  '',
  'Lists every turn, and every step (tool call) of a turn, that changed FILE, oldest',
  'first, with the lines it added and removed. "(edited by you before)" marks a change',
  'that started from another version than the one before it left: edits no turn made.',
  '',
  '  FILE                 relative to the current directory, or absolute',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server history FILE`. */
export async function historyCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseClientArgs(argv, [], { positionals: 1 });
  if (values.help) {
    process.stdout.write(HISTORY_USAGE);
    return 0;
  }
  const file = positionals[0];
  if (file === undefined) throw new UsageError('history needs a FILE');
  const out = new Output(values.json === true);
  const target = { ...targetOf(values), startForHistory: true };
  const { client, picked, report } = await connectToSession(target, out);
  try {
    const answer = await client.request('fileHistory', { session: picked.session.channel, path: resolve(file) });
    const entries = answer.entries.map(({ changeset: _c, fileId: _f, turnId: _t, ...rest }) => rest);
    const head =
      entries.length === 0
        ? `${answer.path}: no turn changed it`
        : `${answer.path}: ${plural(entries.length, 'change')}${answer.truncated ? ' (the newest; older ones left out)' : ''}, oldest first`;
    out.result([head, ...answer.entries.map(entryLine)].join('\n'), {
      ...report,
      session: picked.session.channel,
      path: answer.path,
      entries,
      ...(answer.truncated ? { truncated: true } : {}),
    });
    return 0;
  } finally {
    await client.close();
  }
}

/** One change as a line: "turn 1, step 3 (Edit)  2026-12-02 10:04  modified  +1 -0". */
function entryLine(e: FileHistoryEntry): string {
  const where = `turn ${e.turn}${e.step !== undefined ? `, step ${e.step}${e.tool ? ` (${e.tool})` : ''}` : ''}`;
  const when = `${e.at.slice(0, 10)} ${e.at.slice(11, 16)} UTC`;
  const lines = e.binary ? 'binary' : `+${e.added} -${e.removed}`;
  return `  ${where.padEnd(28)} ${when}  ${e.kind.padEnd(8)} ${lines}${e.editedBefore ? '  (edited by you before)' : ''}`;
}
