/**
 * `serve` start-up benchmark: how long until a fresh `serve` answers, and
 * until it can record a turn, against git's own recipe over the same
 * repository in the same run.
 *
 * Each round, in alternating order:
 * - **ours, ready**: from spawning `node bin/changeset-server.js serve <dir>
 *   --port 0 --json --state-dir <fresh dir>` to a WebSocket handshake,
 *   `initialize` and a root `subscribe` answered (the ready line gives the
 *   URL and token);
 * - **ours, first turn**: then `harness/turnStarted` answered: the first
 *   snapshot is recorded and the turn's baseline with it;
 * - **git**: `cp .git/index` to a private index file, `git add -A`, `git
 *   write-tree`, from spawning the first to the last exit (the recipe agent
 *   hosts use, on a fresh copy of the index each round).
 *
 * Medians over the rounds, each ratio to git's median, the spread (lowest
 * and highest per-round ratio) and the load average at start and end.
 * `--compare <bin>` runs another build's `bin/changeset-server.js` in the
 * same rounds (before and after a change, alternated with git).
 *
 *   npm run build && npm run bench -- serve-start [--files 100000] [--rounds 7] [--compare /path/to/bin/changeset-server.js] [--repo <generated before>]
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { RpcClient } from '../../server/client/rpc-client.js';
import { generateRepository, gitEnv, median } from '../common/workspace.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string | undefined): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const FILES = Number(option('files', '100000'));
const ROUNDS = Number(option('rounds', '7'));
const COMPARE = option('compare', undefined);
/** A repository generated before (by this benchmark's generator, with as many files), to skip generating it again. */
const REPO = option('repo', undefined);

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const BIN = join(root, 'bin', 'changeset-server.js');
if (!existsSync(join(root, 'dist', 'server', 'cli', 'main.js'))) {
  console.error('serve-start bench: run "npm run build" first (it runs the built command)');
  process.exit(2);
}

/** Runs a process to exit; resolves with its stdout when it exits 0. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}: ${stderr}`))));
  });
}

/** Processor time (user + system) of a process so far, in milliseconds, from /proc (10 ms ticks). */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}
const TICKS = 100;

/** git's recipe on a fresh copy of the index; wall and processor milliseconds (bash's `times` of its children). */
async function gitRound(workspace: string, work: string): Promise<Times> {
  const index = join(work, 'git-index');
  rmSync(index, { force: true });
  const env = { ...gitEnv, GIT_INDEX_FILE: index };
  const t0 = performance.now();
  copyFileSync(join(workspace, '.git', 'index'), index);
  const out = await run('bash', ['-c', 'git add -A && git write-tree >/dev/null && times'], workspace, env);
  const wall = performance.now() - t0;
  const [user, sys] = out.trim().split('\n')[1]!.split(' ').map(minutesSeconds);
  return { wall, cpu: (user! + sys!) * 1000 };
}

/** `0m0.120s` in seconds. */
function minutesSeconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text.trim());
  if (!m) throw new Error(`cannot read a time from ${JSON.stringify(text)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

interface Times {
  wall: number;
  cpu: number;
}

/** One fresh `serve` of `bin`: milliseconds to answering, and to a first turn started. */
async function serveRound(bin: string, workspace: string, work: string): Promise<{ ready: Times; turn: Times }> {
  const stateDir = mkdtempSync(join(work, 'state-'));
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'serve', workspace, '--port', '0', '--json', '--state-dir', stateDir], {
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const info = await new Promise<{ url: string; token: string | null; sessions: string[] }>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (line) => {
        lines.close();
        resolve(JSON.parse(line));
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code} before it was ready: ${stderr}`)));
    });
    const client = await RpcClient.connect(info.url, { ...(info.token ? { token: info.token } : {}), timeoutMs: 600_000 });
    try {
      await client.request('subscribe', { channel: 'ahp-root://' });
      const ready = { wall: performance.now() - t0, cpu: cpuOf(child.pid!) };
      await client.request('harness/turnStarted', { channel: info.sessions[0]!, message: 'bench' });
      const turn = { wall: performance.now() - t0, cpu: cpuOf(child.pid!) };
      return { ready, turn };
    } finally {
      await client.close();
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

interface Side {
  name: string;
  bin: string;
  ready: Times[];
  turn: Times[];
}

async function main(): Promise<void> {
  console.log(`serve-start bench: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}`);
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'bench-serve-start-')));
  const workspace = REPO ?? join(work, 'repo');
  try {
    if (!REPO) {
      mkdirSync(workspace);
      generateRepository(workspace, FILES);
    }
    const sides: Side[] = [{ name: 'ours', bin: BIN, ready: [], turn: [] }];
    if (COMPARE) sides.push({ name: 'compared', bin: COMPARE, ready: [], turn: [] });
    const gitTimes: Times[] = [];
    const startLoad = loadavg()[0]!;
    console.log(`${FILES} files, ${ROUNDS} rounds after one warm-up, alternated; load average at start ${startLoad.toFixed(2)}`);
    for (let round = 0; round <= ROUNDS; round++) {
      const order = round % 2 === 0 ? ['git', ...sides.map((s) => s.name)] : [...sides.map((s) => s.name).reverse(), 'git'];
      const times: Record<string, Times | { ready: Times; turn: Times }> = {};
      for (const who of order) {
        if (who === 'git') times[who] = await gitRound(workspace, work);
        else times[who] = await serveRound(sides.find((s) => s.name === who)!.bin, workspace, work);
      }
      if (round === 0) continue;
      gitTimes.push(times['git'] as Times);
      for (const s of sides) {
        const t = times[s.name] as { ready: Times; turn: Times };
        s.ready.push(t.ready);
        s.turn.push(t.turn);
      }
      const ms = (t: Times): string => `${t.wall.toFixed(0)} ms (cpu ${t.cpu.toFixed(0)})`;
      const line = sides.map((s) => `${s.name} ready ${ms(s.ready.at(-1)!)}, first turn ${ms(s.turn.at(-1)!)}`).join('; ');
      console.log(`round ${round}: git ${ms(gitTimes.at(-1)!)}; ${line}; load ${loadavg()[0]!.toFixed(2)}`);
    }
    const row = (label: string, xs: Times[]): string => {
      const cells = (['wall', 'cpu'] as const).map((k) => {
        const g = median(gitTimes.map((t) => t[k]));
        const r = xs.map((x, i) => x[k] / gitTimes[i]![k]).sort((a, b) => a - b);
        const m = median(xs.map((x) => x[k]));
        return `${m.toFixed(0)} ms / ${g.toFixed(0)} ms, ${(m / g).toFixed(2)}x (${r[0]!.toFixed(2)}–${r.at(-1)!.toFixed(2)}x)`;
      });
      return `| ${label} | ${cells.join(' | ')} |`;
    };
    console.log('\n| side | wall: ours / git, ratio (per-round spread) | processor time: ours / git, ratio (spread) |');
    console.log('| --- | --- | --- |');
    for (const s of sides) {
      console.log(row(`${s.name}: ready (handshake + root subscribe)`, s.ready));
      console.log(row(`${s.name}: first turn started`, s.turn));
    }
    console.log(`load average at start ${startLoad.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}`);
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

await main();
