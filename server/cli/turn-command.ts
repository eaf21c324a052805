import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { Output } from '../client/output.js';

import { connect, pickSession, sessionNote } from '../client/target.js';
import { CommandError, UsageError } from '../client/errors.js';
import { progressLine } from './progress.js';

export const TURN_USAGE = [
  'Usage: changeset-server turn start [--message TEXT] [--id ID] [options]',
  '       changeset-server turn end [--state complete|cancelled|error] [--id ID] [options]',
  '',
  'Marks the start and end of an agent turn for a running server, for agents',
  'that run shell commands. "start" returns once the baseline is recorded and',
  'prints the turn id; a turn still being recorded is ended first, as cancelled.',
  '"end" (default: the active turn) prints what changed.',
  '',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server turn start|end`. */
export async function turnCommand(argv: readonly string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === undefined || action === '--help' || action === '-h') {
    process.stdout.write(TURN_USAGE);
    return action === undefined ? 2 : 0;
  }
  if (action !== 'start' && action !== 'end') throw new UsageError(`unknown turn action "${action}" (expected start or end)`);
  const { values } = parseClientArgs(rest, ['message', 'id', 'state']);
  if (values.help) {
    process.stdout.write(TURN_USAGE);
    return 0;
  }
  if (values.id === '') throw new UsageError('--id must not be empty');
  if (action === 'start' && values.state !== undefined) throw new UsageError('--state belongs to "turn end"');
  if (action === 'end' && values.message !== undefined) throw new UsageError('--message belongs to "turn start"');
  const state = values.state;
  if (state !== undefined && state !== 'complete' && state !== 'cancelled' && state !== 'error') {
    throw new UsageError(`--state must be complete, cancelled or error, got "${state}"`);
  }
  const out = new Output(values.json === true);
  const target = targetOf(values);
  const { client } = await connect(target);
  try {
    const picked = await pickSession(client, target);
    const session = picked.session;
    const report: Record<string, unknown> = { channel: session.channel };
    out.note(sessionNote(picked), report);
    if (action === 'start') {
      const active = session.activeTurn;
      // A server still reading the working directory (started moments ago) says how far it is; shown after a second.
      const waiting = progressLine(process.stderr, 'Waiting for the working directory to be read…');
      const progress = client.onNotification('root/progress', (p) => {
        if (p.progressToken === 'turn-start') waiting.update(p.progress, p.total);
      });
      const result = await client
        .request('harness/turnStarted', {
          channel: session.channel,
          ...(values.id !== undefined ? { turnId: values.id } : {}),
          ...(values.message !== undefined ? { message: values.message } : {}),
          progressToken: 'turn-start',
        })
        .finally(() => {
          progress.dispose();
          waiting.done();
        });
      const index = session.turnCount + 1;
      if (active) {
        const said = `Turn ${active.index} was still being recorded: it ended as cancelled, with its changes so far, before turn ${index} started.`;
        out.note(said, report);
        report['cancelled'] = active.turnId;
      }
      // The id on stdout is for scripts (TURN=$(changeset-server turn start)); the person reads the number.
      if (!out.json) process.stderr.write(`Started turn ${index}.\n`);
      out.result(result.turnId, { ...report, ...result, index });
      return 0;
    }
    const turnId = values.id ?? session.activeTurn?.turnId;
    if (turnId === undefined) throw new CommandError(`no turn is active in "${session.title}"`);
    const { summary } = await client.request('harness/turnEnded', {
      channel: session.channel,
      turnId,
      ...(state !== undefined ? { state } : {}),
    });
    const files = summary.total === 1 ? '1 file' : `${summary.total} files`;
    const index = session.turns.find((t) => t.turnId === turnId)?.index ?? session.activeTurn?.index;
    const lines = [`turn ${index ?? `"${turnId}"`}: ${files} changed, +${summary.added} -${summary.deleted}`];
    for (const f of summary.files) lines.push(`  ${f.display}  ${f.binary ? 'binary' : f.oversized ? 'oversized' : `+${f.added} -${f.deleted}`}`);
    if (summary.total > summary.files.length) lines.push(`  … and ${summary.total - summary.files.length} more`);
    out.result(lines.join('\n'), { ...report, summary });
    return 0;
  } finally {
    await client.close();
  }
}
