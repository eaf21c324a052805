/**
 * Soak benchmark: memory of the server over a long session, and under a wide
 * fan-out. The server runs in a child process (this same bundle started with
 * `--server`), so its peak RSS is its own; the harness and the clients talk to
 * it over real WebSockets from this process.
 *
 * - turns: `--turns` turns of `--changed` files each on a `--files`-file
 *   repository; RSS and peak RSS after every turn. Flat means the peak after
 *   the last turn is within 10% of the peak after turn 20.
 * - fanout: `--clients` clients subscribed to the turn changeset of a turn
 *   that changes `--fanout-files` files; the server's peak RSS, how long the
 *   harness waits for `turnEnded`, and how long until every client has the
 *   changeset ready.
 *
 *   npm run bench -- soak [--part turns,fanout] [--files 100000] [--turns 300] [--changed 10]
 *                         [--clients 100] [--fanout-files 5000] [--every 20] [--live] [--heap-at 20,60]
 *                         [--spaces] [--idle 30]
 *
 * `--live` adds the heap after a forced collection to each report (telling
 * retained memory from garbage); `--spaces` adds each V8 heap space (used of
 * committed) and the collections so far; `--idle` reports once more after that
 * many seconds without turns; `--heap-at` writes heap snapshots of the server after those turns (into the
 * current directory) for comparing what a turn leaves behind; `--cpu-prof`
 * writes a CPU profile of the server there when it stops.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { constants as perfConstants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { limitHeapGrowth } from '../../server/cli/heap-growth.js';
import { ChangesetService } from '../../server/service.js';
import { BenchClient } from '../common/bench-client.js';
import { editFiles, generateRepository, median } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (!a.startsWith('--')) continue;
  const next = process.argv[i + 1];
  if (next === undefined || next.startsWith('--')) args.set(a.slice(2), '');
  else args.set(a.slice(2), next), i++;
}
const num = (name: string, fallback: number): number => Number(args.get(name) ?? fallback);

/** Messages from the server child. */
type FromServer = { type: 'ready'; url: string; session: string; sessionId: string } | ({ type: 'memory'; id: number } & ServerMemory);
/** One V8 heap space: bytes in live-or-garbage objects, committed, and resident. */
type HeapSpace = { name: string; used: number; committed: number; physical: number };
/** Garbage collections so far: count and milliseconds spent, full (mark-compact) and young-generation. */
type GcTotals = { major: number; majorMs: number; minor: number; minorMs: number };
type ServerMemory = {
  rss: number;
  peak: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  spaces: HeapSpace[];
  gc: GcTotals;
  serverSeq: number;
  heapFile?: string;
};
/** Messages to the server child. */
type ToServer = { type: 'memory'; id: number; heapSnapshot?: boolean; live?: boolean } | { type: 'stop' };

// ---------------------------------------------------------------- server child

async function serverMain(): Promise<void> {
  // As `changeset-server serve` runs.
  limitHeapGrowth();
  const repo = args.get('repo')!;
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: args.get('state')!, log: () => undefined });
  const { url } = await service.start();
  const session = await service.openWorkspace([repo], { resume: false });
  const send = (m: FromServer): void => void process.send!(m);
  const gc: GcTotals = { major: 0, majorMs: 0, minor: 0, minorMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) gc.major++, (gc.majorMs += entry.duration);
      else if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gc.minor++, (gc.minorMs += entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('message', (m: ToServer) => {
    if (m.type === 'stop') {
      void service.stop().then(() => process.exit(0));
      return;
    }
    const globalGc = (globalThis as { gc?: () => void }).gc;
    let heapFile: string | undefined;
    if (m.heapSnapshot) {
      globalGc?.();
      heapFile = writeHeapSnapshot();
    }
    // Peak first: a forced collection for the live-heap figure must not hide it.
    const peak = process.resourceUsage().maxRSS * 1024;
    if (m.live) globalGc?.();
    const usage = process.memoryUsage();
    const spaces = getHeapSpaceStatistics().map((s) => ({
      name: s.space_name.replace(/_space$/, ''),
      used: s.space_used_size,
      committed: s.space_size,
      physical: s.physical_space_size,
    }));
    send({
      type: 'memory',
      id: m.id,
      rss: usage.rss,
      peak,
      heapUsed: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      spaces,
      gc: { ...gc },
      serverSeq: service.server.store.serverSeq,
      ...(heapFile ? { heapFile } : {}),
    });
  });
  send({ type: 'ready', url, session: session.uri, sessionId: session.id });
}

// ---------------------------------------------------------------- harness

class ServerProcess {
  private nextId = 0;
  private readonly waiting = new Map<number, (m: FromServer & { type: 'memory' }) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly session: string,
    readonly sessionId: string,
  ) {
    child.on('message', (m: FromServer) => {
      if (m.type === 'memory') this.waiting.get(m.id)?.(m);
    });
  }

  static start(repo: string, state: string): Promise<ServerProcess> {
    const child = fork(fileURLToPath(import.meta.url), ['--server', '--repo', repo, '--state', state], {
      execArgv: ['--expose-gc', ...(args.has('cpu-prof') ? ['--cpu-prof'] : [])],
      stdio: 'inherit',
    });
    // A failing bench must not leave its server behind.
    process.once('exit', () => child.kill());
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
      child.once('message', (m: FromServer) => {
        if (m.type === 'ready') resolve(new ServerProcess(child, m.url, m.session, m.sessionId));
      });
    });
  }

  memory(heapSnapshot = false, live = false): Promise<ServerMemory> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.waiting.set(id, (m) => {
        this.waiting.delete(id);
        resolve(m);
      });
      this.child.send({ type: 'memory', id, heapSnapshot, live } satisfies ToServer);
    });
  }

  stop(): Promise<void> {
    this.child.removeAllListeners('exit');
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.send({ type: 'stop' } satisfies ToServer);
    });
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function soakTurns(work: string): Promise<void> {
  const files = num('files', 100_000);
  const turns = num('turns', 300);
  const changed = num('changed', 10);
  const every = num('every', 20);
  const heapAt = new Set((args.get('heap-at') ?? '').split(',').filter(Boolean).map(Number));
  const repo = join(work, 'turns-repo');
  mkdirSync(repo);
  console.log(`turns: generating ${files} files…`);
  generateRepository(repo, files);
  const server = await ServerProcess.start(repo, join(work, 'turns-state'));
  const harness = await BenchClient.connect(server.url, 'soak');
  const peaks: number[] = [];
  const durations: number[] = [];
  try {
    for (let turn = 1; turn <= turns; turn++) {
      const t0 = performance.now();
      await harness.request('harness/turnStarted', { channel: server.session, turnId: `t${turn}` });
      editFiles(repo, files, changed, turn);
      await harness.request('harness/turnEnded', { channel: server.session, turnId: `t${turn}` });
      durations.push(performance.now() - t0);
      const report = turn <= 5 || turn % every === 0 || turn === turns;
      // --live: the heap after a forced collection at each report, to tell retained memory from garbage.
      const m = await server.memory(heapAt.has(turn), report && args.has('live'));
      peaks[turn] = m.peak;
      if (m.heapFile) console.log(`  heap snapshot after turn ${turn}: ${m.heapFile}`);
      if (report) {
        console.log(
          `  turn ${String(turn).padStart(4)}: rss ${mb(m.rss)}, peak ${mb(m.peak)} (heap ${mb(m.heapUsed)} of ${mb(m.heapTotal)}, external ${mb(m.external)} of which array buffers ${mb(m.arrayBuffers)}, ${m.serverSeq} envelopes), turn median so far ${median(durations).toFixed(0)} ms`,
        );
        // --spaces: where the committed heap is, space by space (used / committed MB).
        if (args.has('spaces')) {
          const spaces = m.spaces.filter((s) => s.committed > 0).map((s) => `${s.name} ${(s.used / 2 ** 20).toFixed(1)}/${(s.committed / 2 ** 20).toFixed(1)}`);
          console.log(
            `             ${spaces.join(', ')}; gc ${m.gc.major} full (${m.gc.majorMs.toFixed(0)} ms), ${m.gc.minor} young (${m.gc.minorMs.toFixed(0)} ms)`,
          );
        }
      }
    }
    // --idle: memory once the session has been quiet a while, as between a user's prompts (V8 shrinks its heap
    // when allocation stops; back-to-back turns never let it).
    const idleSeconds = num('idle', 0);
    if (idleSeconds > 0) {
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
      const m = await server.memory();
      const old = m.spaces.find((s) => s.name === 'old');
      console.log(
        `  after ${idleSeconds} s idle: rss ${mb(m.rss)} (heap ${mb(m.heapUsed)} of ${mb(m.heapTotal)}, old space ${mb(old?.used ?? 0)} of ${mb(old?.committed ?? 0)}; gc ${m.gc.major} full, ${m.gc.minor} young)`,
      );
    }
    // Full walks and verification walks allocate like a first snapshot: say how many there were.
    const status = await harness.request('harness/status', { channel: server.session, turns: 0 });
    console.log(`  snapshots: ${JSON.stringify((status['result'] as { sessions: { snapshots?: unknown }[] }).sessions[0]?.snapshots ?? 'watching off')}`);
  } finally {
    harness.ws.close();
    await server.stop();
  }
  const at20 = peaks[Math.min(20, turns)]!;
  const last = peaks[turns]!;
  console.log(`\nturns: ${files} files, ${turns} turns of ${changed} changed files`);
  console.log(`  peak RSS after turn ${Math.min(20, turns)}: ${mb(at20)}; after turn ${turns}: ${mb(last)} (${((last / at20 - 1) * 100).toFixed(1)}%)`);
  console.log(`  target: within 10% and under 300 MB — ${last <= at20 * 1.1 && last < 300 * 1024 * 1024 ? 'met' : 'NOT met'}`);
}

async function soakFanout(work: string): Promise<void> {
  const files = num('fanout-files', 5000);
  const clientCount = num('clients', 100);
  const repo = join(work, 'fanout-repo');
  mkdirSync(repo);
  console.log(`fanout: generating ${files} files…`);
  generateRepository(repo, files);
  const server = await ServerProcess.start(repo, join(work, 'fanout-state'));
  const clients = await Promise.all(Array.from({ length: clientCount }, () => BenchClient.connect(server.url, 'soak')));
  const harness = clients[0]!;
  const before = await server.memory();
  const answered: number[] = [];
  const readyAll: number[] = [];
  try {
    for (let round = 1; round <= 3; round++) {
      const turnId = `wide-${round}`;
      await harness.request('harness/turnStarted', { channel: server.session, turnId });
      const uri = expandChangesetUri(changesetUriTemplate(server.sessionId, 'turn'), { turnId });
      await Promise.all(clients.map((c) => c.request('subscribe', { channel: uri })));
      editFiles(repo, files, files, round);
      const ready = Promise.all(clients.map((c) => c.waitReady(uri)));
      const t0 = performance.now();
      await harness.request('harness/turnEnded', { channel: server.session, turnId });
      answered.push(performance.now() - t0);
      await ready;
      readyAll.push(performance.now() - t0);
      for (const c of clients) c.notify('unsubscribe', { channel: uri });
    }
  } finally {
    for (const c of clients) c.ws.close();
  }
  const after = await server.memory();
  await server.stop();
  console.log(`\nfanout: ${clientCount} clients on a ${files}-file turn changeset, 3 rounds (median)`);
  console.log(`  turnEnded answered after ${median(answered).toFixed(0)} ms; ready at every client after ${median(readyAll).toFixed(0)} ms`);
  console.log(
    `  server peak RSS ${mb(after.peak)} (before the turns ${mb(before.peak)}) — target under 400 MB ${after.peak < 400 * 1024 * 1024 ? 'met' : 'NOT met'}`,
  );
}

async function main(): Promise<void> {
  const parts = (args.get('part') ?? 'turns,fanout').split(',');
  const work = mkdtempSync(join(tmpdir(), 'bench-soak-'));
  try {
    if (parts.includes('turns')) await soakTurns(work);
    if (parts.includes('fanout')) await soakFanout(work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (args.has('server')) await serverMain();
else await main();
