/**
 * Two sessions in one folder: what checking the other session's turns adds
 * to line provenance. Ours: two sessions of one server recording one folder,
 * their turns overlapping round by round — window a's `Edit` of the file,
 * then window b's (every other round an `Edit` of the same file, so those
 * lines are `mixed`; otherwise of another file) — and `provenance/lines`
 * for the file asked of window a, whose record walks every version and, at
 * each change, reads window b's turns. The anchor: one session over another
 * folder recording the same versions of the file (one turn per round, one
 * step before both edits: window a's record too sees both edits of a round
 * as one change), asked the same, where nothing is shared. Both are asked
 * from scratch each time (what was worked out is dropped first), in turn,
 * who goes first swapping; processor time of this process (server and
 * client) and elapsed time, medians and their ratio.
 *
 *   npm run bench -- shared-folder [--lines 2000] [--rounds 60] [--reps 11]
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetLineProvenance } from '../../server/provenance/line-provenance.js';
import type { RecordingSession } from '../../server/session/recording-session.js';
import { ChangesetService } from '../../server/service.js';
import { BenchClient } from '../common/bench-client.js';
import { alternated, git, median } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const LINES = Number(args.get('lines') ?? 2000);
const ROUNDS = Number(args.get('rounds') ?? 60);
const REPS = Number(args.get('reps') ?? 11);
const FILE = 'src/app.ts';

/** The file's lines after an edit: two lines rewritten and one inserted, somewhere else each time. */
function edit(lines: string[], n: number, who: string): void {
  const at = (n * 7919) % Math.max(1, lines.length - 3);
  lines[at] = `  const ${who}${n} = compute(${n}); // ${who}, edit ${n}`;
  lines.splice(at + 1, 0, `  log('${who} ${n}');`);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-shared-folder-'));
  try {
    const shared = join(work, 'shared');
    const alone = join(work, 'alone');
    const lines = Array.from({ length: LINES }, (_, i) => `  export const line${i} = ${i};`);
    for (const dir of [shared, alone]) {
      mkdirSync(join(dir, 'src'), { recursive: true });
      git(dir, ['init', '-q', '-b', 'main']);
      writeFileSync(join(dir, FILE), `${lines.join('\n')}\n`);
      writeFileSync(join(dir, 'notes.md'), '# notes\n');
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', 'initial']);
    }
    const ours = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state-shared'), log: () => undefined });
    const anchor = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state-alone'), log: () => undefined });
    const oursClient = await BenchClient.connect((await ours.start()).url);
    const anchorClient = await BenchClient.connect((await anchor.start()).url);
    const a = await ours.sessions.create({ id: 'window-a', workingDirectories: [shared], agent: 'Claude Code' });
    const b = await ours.sessions.create({ id: 'window-b', workingDirectories: [shared], agent: 'Claude Code' });
    const one = await anchor.sessions.create({ id: 'alone', workingDirectories: [alone], agent: 'Claude Code' });
    const call = (client: BenchClient, session: RecordingSession, turnId: string, method: string, params: Record<string, unknown> = {}) =>
      client.request(method, { channel: session.uri, turnId, ...params });
    const write = () => {
      const text = `${lines.join('\n')}\n`;
      writeFileSync(join(shared, FILE), text);
      writeFileSync(join(alone, FILE), text);
    };

    console.log(`recording ${ROUNDS} rounds of two overlapping turns over a ${LINES.toLocaleString('en-US')}-line file…`);
    const recordStart = performance.now();
    for (let r = 0; r < ROUNDS; r++) {
      const both = r % 2 === 1;
      await call(oursClient, a, `a${r}`, 'harness/turnStarted', { message: `round ${r} in a` });
      await call(oursClient, b, `b${r}`, 'harness/turnStarted', { message: `round ${r} in b` });
      await call(anchorClient, one, `t${r}`, 'harness/turnStarted', { message: `round ${r}` });
      await call(oursClient, a, `a${r}`, 'harness/beforeEdit', { paths: [FILE], tool: 'Edit' });
      await call(anchorClient, one, `t${r}`, 'harness/beforeEdit', { paths: [FILE], tool: 'Edit' });
      edit(lines, 2 * r, 'a');
      write();
      await call(oursClient, b, `b${r}`, 'harness/beforeEdit', { paths: [both ? FILE : 'notes.md'], tool: 'Edit' });
      if (both) {
        edit(lines, 2 * r + 1, 'b');
        write();
      } else {
        appendFileSync(join(shared, 'notes.md'), `round ${r}\n`);
      }
      await call(oursClient, a, `a${r}`, 'harness/turnEnded');
      await call(oursClient, b, `b${r}`, 'harness/turnEnded');
      await call(anchorClient, one, `t${r}`, 'harness/turnEnded');
    }
    console.log(`  recorded in ${((performance.now() - recordStart) / 1000).toFixed(1)} s`);

    const ask = async (client: BenchClient, session: RecordingSession): Promise<{ ms: number; cpu: number; mixed: number }> => {
      forgetLineProvenance(session);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const answer = await client.request('provenance/lines', { session: session.uri, path: FILE });
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      const result = answer['result'] as { lineCount: number; authors: { kind: string }[] } | undefined;
      if (!result || result.lineCount !== lines.length) throw new Error(`unexpected answer: ${JSON.stringify(answer).slice(0, 300)}`);
      return { ms, cpu: (c.user + c.system) / 1000, mixed: result.authors.filter((x) => x.kind === 'mixed').length };
    };
    // One of each first (modules, the stores' first reads), not counted.
    const first = { ours: await ask(oursClient, a), anchor: await ask(anchorClient, one) };
    const {
      ours: o,
      anchor: n,
      loads,
    } = await alternated(
      REPS,
      () => ask(oursClient, a),
      () => ask(anchorClient, one),
    );
    oursClient.ws.close();
    anchorClient.ws.close();
    await ours.stop();
    await anchor.stop();

    const cpuRatios = o.map((x, i) => x.cpu / n[i]!.cpu).sort((x, y) => x - y);
    const msRatios = o.map((x, i) => x.ms / n[i]!.ms).sort((x, y) => x - y);
    const med = (xs: { ms: number; cpu: number }[], k: 'ms' | 'cpu') => median(xs.map((x) => x[k]));
    console.log(`\n${LINES.toLocaleString('en-US')}-line file, ${ROUNDS} rounds (${2 * ROUNDS} edits), ${first.ours.mixed} mixed author(s) in ours' answer`);
    console.log(
      `  ours:   window a's record, window b's turns read at each change   ${med(o, 'cpu').toFixed(1)} ms processor, ${med(o, 'ms').toFixed(1)} ms elapsed`,
    );
    console.log(
      `  anchor: one session, the same versions, nothing shared             ${med(n, 'cpu').toFixed(1)} ms processor, ${med(n, 'ms').toFixed(1)} ms elapsed`,
    );
    console.log(
      `  ratio ours/anchor: processor ${median(cpuRatios).toFixed(2)}x (per-pair ${cpuRatios[0]!.toFixed(2)}–${cpuRatios.at(-1)!.toFixed(2)}), elapsed ${median(msRatios).toFixed(2)}x (per-pair ${msRatios[0]!.toFixed(2)}–${msRatios.at(-1)!.toFixed(2)})`,
    );
    console.log(`  load average (1 min) during the queries: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
