/**
 * Turn benchmark, over the wire as a harness sees it: `harness/turnStarted`,
 * N files edited, `harness/turnEnded`, against the real server over a
 * WebSocket — and native git's recipe on the same repository, with a warm
 * private index (turn start: `git add -A && git write-tree`; turn end: the
 * same plus `git diff --numstat <before> <after>`). Ours and git alternate
 * round by round in one process run. Also the first snapshot of the
 * repository (a fresh store and stat cache, seeded from the index) against
 * git starting from a copy of the repository's index, alternated round by
 * round, elapsed and processor time (ours: this process, the stat worker
 * included; git: its child processes), with the median of the rounds' ratios.
 *
 *   npm run bench -- turns [--sizes 20000,100000] [--changes 0,10,100,1000] [--rounds 7] [--first-rounds 3] [--no-watch] [--profile <dir>]
 *
 * `--profile <dir>` writes a CPU profile of each measured turn end of ours
 * (`turn-end-<files>-<changed>-<round>.cpuprofile`, for Chrome's DevTools).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { Harness } from '../common/harness.js';
import { ChangesetService } from '../../server/service.js';
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { openWorkspaceStore } from '../../server/store/index.js';
import { editFiles, generateRepository, git, gitEnv, median } from '../common/workspace.js';

const argv = process.argv.slice(2);
const flag = (name: string): boolean => argv.includes(`--${name}`);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const SIZES = option('sizes', '20000,100000').split(',').map(Number);
const CHANGES = option('changes', '0,10,100,1000').split(',').map(Number);
const ROUNDS = Number(option('rounds', '7'));
const FIRST_ROUNDS = Number(option('first-rounds', '3'));
const PROFILE_DIR = argv.includes('--profile') ? option('profile', '') : undefined;
if (flag('no-watch')) process.env['CHANGESET_SERVER_WATCH'] = 'off';
// No verification walk in the middle of the measured rounds.
process.env['CHANGESET_SERVER_VERIFY_IDLE_MS'] ??= '600000';

/**
 * User + system time of the waited-for child processes so far (git's side),
 * in microseconds like `process.cpuUsage()`, from /proc (clock ticks of 10 ms).
 */
function childrenCpu(): { user: number; system: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of the line (cutime, cstime), counted from the state field, the third.
  const ticks = Number(fields[13]) + Number(fields[14]);
  return { user: ticks * 10_000, system: 0 };
}

let editRound = 0;
/** Rewrites `count` files spread over the tree, with content no round wrote before. */
function edit(root: string, files: number, count: number): void {
  editFiles(root, files, count, ++editRound);
}

interface Row {
  files: number;
  changed: number;
  oursStart: number[];
  gitStart: number[];
  oursEnd: number[];
  gitEnd: number[];
  /** Processor time (user + system) of the turn ends: ours is this process (the server's threads), git's its child processes. */
  oursEndCpu: number[];
  gitEndCpu: number[];
  /** Parts of ours spent in the snapshot. */
  snapshotStart: number[];
  snapshotEnd: number[];
}

const ms = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`);

/** Each side edits its own copy of the repository, so neither sees the other's edits. */
async function turns(work: string, repo: string, gitRepo: string, files: number): Promise<Row[]> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: join(work, `state-${files}`), log: () => undefined });
  const { url } = await service.start();
  const session = await service.openWorkspace([repo], { resume: false });
  const harness = await Harness.connect(url, 'bench-turns');
  const index = join(work, `git-index-${files}`);
  copyFileSync(join(gitRepo, '.git', 'index'), index);
  const env = { ...gitEnv, GIT_INDEX_FILE: index };
  git(gitRepo, ['add', '-A'], env);
  let gitBefore = git(gitRepo, ['write-tree'], env).trim();
  // Diagnostics: how much of a turn step is the snapshot itself.
  const root = session.files.root(0);
  const snapshotMs: number[] = [];
  const snapshot = root.snapshot.bind(root);
  root.snapshot = async (onProgress) => {
    const t = performance.now();
    const result = await snapshot(onProgress);
    snapshotMs.push(performance.now() - t);
    return result;
  };
  const rows: Row[] = [];
  let turn = 0;
  const profiler = PROFILE_DIR ? new Session() : undefined;
  if (profiler) {
    mkdirSync(PROFILE_DIR!, { recursive: true });
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
  }
  try {
    for (const changed of CHANGES) {
      const row: Row = {
        files,
        changed,
        oursStart: [],
        gitStart: [],
        oursEnd: [],
        gitEnd: [],
        oursEndCpu: [],
        gitEndCpu: [],
        snapshotStart: [],
        snapshotEnd: [],
      };
      // One warm-up round per case, then measured rounds, ours and git alternating.
      for (let round = -1; round < ROUNDS; round++) {
        const turnId = `turn-${++turn}`;
        snapshotMs.length = 0;
        let t0 = performance.now();
        await harness.request('harness/turnStarted', { channel: session.uri, turnId });
        const oursStart = performance.now() - t0;
        edit(repo, files, changed);
        const profiling = profiler && round >= 0;
        if (profiling) await profiler.post('Profiler.start');
        let cpu0 = process.cpuUsage();
        t0 = performance.now();
        await harness.request('harness/turnEnded', { channel: session.uri, turnId });
        const oursEnd = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const oursEndCpu = (cpu.user + cpu.system) / 1000;
        if (profiling) {
          const { profile } = await profiler.post('Profiler.stop');
          await writeFile(join(PROFILE_DIR!, `turn-end-${files}-${changed}-${round}.cpuprofile`), JSON.stringify(profile));
        }
        if (round >= 0) row.snapshotStart.push(snapshotMs[0] ?? 0), row.snapshotEnd.push(snapshotMs[1] ?? 0);

        t0 = performance.now();
        git(gitRepo, ['add', '-A'], env);
        gitBefore = git(gitRepo, ['write-tree'], env).trim();
        const gitStart = performance.now() - t0;
        edit(gitRepo, files, changed);
        cpu0 = childrenCpu();
        t0 = performance.now();
        git(gitRepo, ['add', '-A'], env);
        const gitAfter = git(gitRepo, ['write-tree'], env).trim();
        git(gitRepo, ['diff', '--numstat', gitBefore, gitAfter], env);
        const gitEnd = performance.now() - t0;
        const gitEndCpu = (childrenCpu().user - cpu0.user) / 1000;
        gitBefore = gitAfter;
        if (round < 0) continue;
        row.oursStart.push(oursStart);
        row.oursEnd.push(oursEnd);
        row.gitStart.push(gitStart);
        row.gitEnd.push(gitEnd);
        row.oursEndCpu.push(oursEndCpu);
        row.gitEndCpu.push(gitEndCpu);
      }
      rows.push(row);
      const r = row;
      console.log(
        `  ${files} files, ${changed} changed: turn end ours ${ms(median(r.oursEnd))} git ${ms(median(r.gitEnd))} (${(median(r.oursEnd) / median(r.gitEnd)).toFixed(2)}x); ` +
          `turn start ours ${ms(median(r.oursStart))} git ${ms(median(r.gitStart))} (${(median(r.oursStart) / median(r.gitStart)).toFixed(2)}x); ` +
          `snapshot part of ours: end ${ms(median(r.snapshotEnd))}, start ${ms(median(r.snapshotStart))}; ` +
          `turn end processor time ours ${ms(median(r.oursEndCpu))} git ${ms(median(r.gitEndCpu))} (${(median(r.oursEndCpu) / median(r.gitEndCpu)).toFixed(2)}x)`,
      );
      console.log(`    turn end ratios by round: ${r.oursEnd.map((o, i) => (o / r.gitEnd[i]!).toFixed(2)).join(' ')}`);
    }
    const tracking = root.changeTracking;
    if (tracking)
      console.log(
        `  change tracking: ${tracking.incremental} incremental, ${tracking.reused} reused, ${tracking.fullWalks} full walks (last: ${tracking.lastFullWalkReason ?? '-'})`,
      );
  } finally {
    profiler?.disconnect();
    harness.close();
    await service.stop();
  }
  return rows;
}

/** First snapshot of the repository: ours with a fresh store and stat cache (seeded from the index), git from a copy of the index. */
async function firstSnapshot(work: string, repo: string): Promise<{ ours: number[]; git: number[]; oursCpu: number[]; gitCpu: number[] }> {
  const ours: number[] = [];
  const anchor: number[] = [];
  const oursCpu: number[] = [];
  const gitCpu: number[] = [];
  for (let round = 0; round < FIRST_ROUNDS; round++) {
    const stateDir = join(work, `first-${round}`);
    const store = await openWorkspaceStore({ stateDir, workspaceDir: repo });
    const snapshotter = new WorkspaceSnapshotter({ root: repo, store, cacheDir: join(stateDir, 'stat-cache') });
    const cpu0 = process.cpuUsage();
    let t0 = performance.now();
    await snapshotter.snapshot();
    ours.push(performance.now() - t0);
    const cpu = process.cpuUsage(cpu0);
    oursCpu.push((cpu.user + cpu.system) / 1000);
    await snapshotter.saveCache();
    await store.close();
    rmSync(stateDir, { recursive: true, force: true });

    const index = join(work, `first-index-${round}`);
    const gitCpu0 = childrenCpu();
    t0 = performance.now();
    copyFileSync(join(repo, '.git', 'index'), index);
    const env = { ...gitEnv, GIT_INDEX_FILE: index };
    git(repo, ['add', '-A'], env);
    git(repo, ['write-tree'], env);
    anchor.push(performance.now() - t0);
    gitCpu.push((childrenCpu().user - gitCpu0.user) / 1000);
    rmSync(index, { force: true });
  }
  return { ours, git: anchor, oursCpu, gitCpu };
}

async function main(): Promise<void> {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `turns bench: ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${git(tmpdir(), ['--version']).trim()}`,
  );
  console.log(
    `watching: ${process.env['CHANGESET_SERVER_WATCH'] === 'off' ? 'off' : 'on'}; ${ROUNDS} measured rounds per case (after one warm-up), medians; load average at start ${loadavg()[0]!.toFixed(1)}`,
  );
  const all: Row[] = [];
  const firsts: { files: number; ours: number; git: number; ratio: number; cpuRatio: number }[] = [];
  for (const files of SIZES) {
    const work = mkdtempSync(join(tmpdir(), 'bench-turns-'));
    try {
      const repo = join(work, 'repo');
      mkdirSync(repo);
      console.log(`generating ${files} files…`);
      generateRepository(repo, files);
      const first = await firstSnapshot(work, repo);
      const ratios = first.ours.map((o, i) => o / first.git[i]!);
      const cpuRatios = first.oursCpu.map((o, i) => o / first.gitCpu[i]!);
      firsts.push({ files, ours: median(first.ours), git: median(first.git), ratio: median(ratios), cpuRatio: median(cpuRatios) });
      console.log(
        `  first snapshot: ours ${ms(median(first.ours))} git ${ms(median(first.git))} (median of round ratios ${median(ratios).toFixed(2)}x, ` +
          `rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}x); processor time ours ${ms(median(first.oursCpu))} git ${ms(median(first.gitCpu))} ` +
          `(${median(cpuRatios).toFixed(2)}x, rounds ${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)}x); load average ${loadavg()[0]!.toFixed(1)}`,
      );
      const gitRepo = join(work, 'repo-git');
      execFileSync('cp', ['-a', repo, gitRepo]);
      all.push(...(await turns(work, repo, gitRepo, files)));
    } finally {
      rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    }
  }
  console.log(`\n| files | changed | turn end ours | git | ratio | (snapshot) | turn start ours | git | ratio | (snapshot) |`);
  console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
  for (const r of all) {
    const [oe, ge, os, gs] = [median(r.oursEnd), median(r.gitEnd), median(r.oursStart), median(r.gitStart)];
    console.log(
      `| ${r.files.toLocaleString('en')} | ${r.changed} | ${ms(oe)} | ${ms(ge)} | ${(oe / ge).toFixed(2)}x | ${ms(median(r.snapshotEnd))} | ${ms(os)} | ${ms(gs)} | ${(os / gs).toFixed(2)}x | ${ms(median(r.snapshotStart))} |`,
    );
  }
  console.log(`\n| files | first snapshot ours | git (copied index) | ratio | processor time ratio |`);
  console.log(`| --- | --- | --- | --- | --- |`);
  for (const f of firsts)
    console.log(`| ${f.files.toLocaleString('en')} | ${ms(f.ours)} | ${ms(f.git)} | ${f.ratio.toFixed(2)}x | ${f.cpuRatio.toFixed(2)}x |`);
  console.log(`load average at end ${loadavg()[0]!.toFixed(1)}`);
}

await main();
