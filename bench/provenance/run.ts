/**
 * Line provenance benchmark: `provenance/lines` for a 10,000-line file that
 * 300 recorded turns changed (over a real WebSocket, the whole product in
 * this process), against `git blame --porcelain` of the same file over an
 * equivalent history: a repository with one commit per turn holding the
 * same versions of the file. Each turn rewrites a few lines and inserts
 * one, at a position that moves from turn to turn. After a first (cold)
 * query each (ours forgets first what the server worked out as the turns
 * ended, so it walks the whole record), ours and git alternate query by
 * query, who goes first swapping. Then one more turn, and the query after it: what extending the
 * kept answer by one turn costs.
 *
 *   npm run bench -- provenance [--lines 10000] [--turns 300] [--reps 15]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetLineProvenance } from '../../server/provenance/line-provenance.js';
import { ChangesetService } from '../../server/service.js';
import { BenchClient } from '../common/bench-client.js';
import { alternated, git, gitEnv, median } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const LINES = Number(args.get('lines') ?? 10_000);
const TURNS = Number(args.get('turns') ?? 300);
const REPS = Number(args.get('reps') ?? 15);
const FILE = 'src/big.ts';

/** The file's lines after turn `t`: a few rewritten and one inserted, somewhere else each turn. */
function editLines(lines: string[], t: number): void {
  const at = (t * 7919) % Math.max(1, lines.length - 5);
  for (let k = 0; k < 3; k++) lines[at + k] = `  const t${t}_${k} = compute(${t}, ${k}); // turn ${t}`;
  lines.splice(at + 3, 0, `  log('turn ${t}');`);
}

/** `1m2.5s` (what `times` prints) in seconds. */
function seconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-provenance-'));
  try {
    const repo = join(work, 'repo');
    const anchor = join(work, 'anchor');
    for (const dir of [repo, anchor]) {
      mkdirSync(join(dir, 'src'), { recursive: true });
      git(dir, ['init', '-q', '-b', 'main']);
      git(dir, ['config', 'gc.auto', '0']);
    }
    const lines = Array.from({ length: LINES }, (_, i) => `  export const line${i} = ${i}; // written before recording`);
    const text = () => `${lines.join('\n')}\n`;
    for (const dir of [repo, anchor]) {
      writeFileSync(join(dir, FILE), text());
      writeFileSync(join(dir, 'README.md'), 'bench\n');
      git(dir, ['add', '-A']);
      git(dir, ['commit', '-q', '-m', 'initial']);
    }

    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, 'state'), log: () => undefined });
    const { url } = await service.start();
    const session = await service.openWorkspace([repo], { resume: false });
    const client = await BenchClient.connect(url);
    const turn = async (t: number) => {
      const turnId = `t${t}`;
      await client.request('harness/turnStarted', { channel: session.uri, turnId, message: `turn ${t}` });
      editLines(lines, t);
      writeFileSync(join(repo, FILE), text());
      await client.request('harness/turnEnded', { channel: session.uri, turnId });
      // The anchor's history: the same version, one commit per turn.
      writeFileSync(join(anchor, FILE), text());
      git(anchor, ['commit', '-q', '-am', turnId]);
    };
    console.log(`recording ${TURNS} turns over a ${LINES.toLocaleString('en-US')}-line file…`);
    const recordStart = performance.now();
    for (let t = 0; t < TURNS; t++) await turn(t);
    console.log(`  recorded in ${((performance.now() - recordStart) / 1000).toFixed(1)} s`);

    let ranges = 0;
    // Processor time too (user + system): ours is this process (the server runs in it), git's its process's.
    const oursCpu: number[] = [];
    const gitCpu: number[] = [];
    const ours = async (): Promise<number> => {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const answer = await client.request('provenance/lines', { session: session.uri, path: FILE });
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      oursCpu.push((c.user + c.system) / 1000);
      const result = answer['result'] as { lineCount: number; ranges: unknown[] } | undefined;
      if (!result || result.lineCount !== lines.length) throw new Error(`unexpected answer: ${JSON.stringify(answer).slice(0, 300)}`);
      ranges = result.ranges.length;
      return ms;
    };
    let blamed = 0;
    const theirs = (): number => {
      const t0 = performance.now();
      // `times` prints the shell's and then its children's user and system time: git's.
      const out = spawnSync('sh', ['-c', `git blame --porcelain -- ${FILE}; times >&2`], { cwd: anchor, env: gitEnv, encoding: 'utf8', maxBuffer: 1 << 28 });
      const ms = performance.now() - t0;
      const children = out.stderr.trim().split('\n').at(-1)!.split(/\s+/).map(seconds);
      gitCpu.push((children[0]! + children[1]!) * 1000);
      blamed = out.stdout.split('\n').filter((l) => l.startsWith('\t')).length;
      if (blamed !== lines.length) throw new Error(`git blame answered ${blamed} lines`);
      return ms;
    };

    const loadBefore = loadavg()[0]!;
    // The first query walks the whole record: what the server worked out at each turn's end is forgotten first.
    forgetLineProvenance(session);
    const cold = { ours: await ours(), git: theirs() };
    const coldCpu = { ours: oursCpu.pop()!, git: gitCpu.pop()! };
    const { ours: o, anchor: g, loads } = await alternated(REPS, ours, theirs);
    // One more turn: the kept answer is extended by one diff.
    const extended: number[] = [];
    const extendedCpu: number[] = [];
    for (let k = 0; k < 5; k++) {
      await turn(TURNS + k);
      extended.push(await ours());
      extendedCpu.push(oursCpu.pop()!);
    }
    client.ws.close();
    await service.stop();

    // Both must say the same lines are the turns': the file's lines that git blames on the initial commit are ours' before-recording lines.
    const firstCommitLines = readFileSync(join(anchor, FILE), 'utf8')
      .split('\n')
      .filter((l) => l.endsWith('// written before recording')).length;

    const om = median(o);
    const gm = median(g);
    const ratios = o.map((x, i) => x / g[i]!).sort((a, b) => a - b);
    console.log(
      `\n${lines.length.toLocaleString('en-US')}-line file, ${TURNS} turns that changed it (${firstCommitLines.toLocaleString('en-US')} lines from before recording), ${ranges} ranges in the answer`,
    );
    console.log(`  ours: provenance/lines over a WebSocket, warm   ${om.toFixed(1)} ms   (runs: ${o.map((x) => x.toFixed(1)).join(' ')})`);
    console.log(`  git:  blame --porcelain (a process)             ${gm.toFixed(1)} ms   (runs: ${g.map((x) => x.toFixed(1)).join(' ')})`);
    console.log(`  ratio ours/git: ${(om / gm).toFixed(2)}x (per-query ratios ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)})`);
    const cpuRatios = oursCpu.map((x, i) => x / gitCpu[i]!).sort((a, b) => a - b);
    console.log(
      `  processor time (user+sys): ours ${median(oursCpu).toFixed(1)} ms, git ${median(gitCpu).toFixed(1)} ms, ratio ${(median(oursCpu) / median(gitCpu)).toFixed(3)}x (per-query ${cpuRatios[0]!.toFixed(3)}–${cpuRatios.at(-1)!.toFixed(3)})`,
    );
    console.log(
      `  first query (ours walks all ${TURNS} turns and the repository's history): ours ${cold.ours.toFixed(1)} ms (processor ${coldCpu.ours.toFixed(0)} ms), git ${cold.git.toFixed(1)} ms (processor ${coldCpu.git.toFixed(0)} ms)`,
    );
    console.log(
      `  the query after one more turn (one diff more): median ${median(extended).toFixed(1)} ms, processor ${median(extendedCpu).toFixed(1)} ms (runs: ${extended.map((x) => x.toFixed(1)).join(' ')})`,
    );
    console.log(
      `  load average (1 min): ${loadBefore.toFixed(1)} before, ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} during the queries`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
