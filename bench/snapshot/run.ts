/**
 * Snapshot engine benchmark: ours against native git's private-index recipe
 * (copy .git/index, `git add -A`, `git write-tree`, plus `git diff-tree` at a
 * turn end), and isomorphic-git's statusMatrix as the naive anchor.
 *
 *   npm run bench -- snapshot [--sizes 20000,100000] [--reps 5] [--no-iso]
 *
 * Ours runs in a child process so its peak RSS is its own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { openWorkspaceStore } from '../../server/store/index.js';

interface ChildRequest {
  repo: string;
  plain: string | undefined;
  work: string;
  rep: number;
}

interface ChildReport {
  a: number[];
  b: number[];
  c: number[];
  d: number[];
  /** The same snapshots without the store's flush (pack write + fsync). */
  aNoFlush: number[];
  bNoFlush: number[];
  cNoFlush: number[];
  dNoFlush: number[];
  /** Stat cache saves (done after each snapshot returns). */
  saveMs: number[];
  storeOpenMs: number[];
  maxRssMb: number;
  files: number;
  counters: string;
}

const FILES_PER_DIR = 10;

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nested dirs of ~10 small text files: pkgN/modN/dirN/fileN.ts. */
function generate(root: string, n: number): void {
  mkdirSync(root, { recursive: true });
  let files = 0;
  for (let d = 0; files < n; d++) {
    const dir = join(root, `pkg${Math.floor(d / 100)}`, `mod${Math.floor(d / 10) % 10}`, `dir${d % 10}`);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < FILES_PER_DIR && files < n; i++, files++) {
      writeFileSync(join(dir, `file${i}.ts`), `// file ${files}\nexport const v${i} = ${files};\n`.repeat(1 + (files % 20)));
    }
  }
}

/** The i-th of `count` files spread over the tree. */
function changedPaths(n: number, count: number): string[] {
  const out: string[] = [];
  const step = Math.floor(n / count);
  for (let k = 0; k < count; k++) {
    const f = k * step;
    const d = Math.floor(f / FILES_PER_DIR);
    out.push(join(`pkg${Math.floor(d / 100)}`, `mod${Math.floor(d / 10) % 10}`, `dir${d % 10}`, `file${f % FILES_PER_DIR}.ts`));
  }
  return out;
}

function touch(root: string, paths: string[], tag: string): void {
  for (const p of paths) writeFileSync(join(root, p), `// changed ${tag}\n`);
}

const gitEnvBase: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tmpdir(),
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', args, { cwd, env: { ...gitEnvBase, ...env }, encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
}

function timed<T>(f: () => T): [number, T] {
  const t = performance.now();
  const r = f();
  return [performance.now() - t, r];
}

/** Native git's turn snapshot: private index copied from the repository's, add -A, write-tree. */
function gitSnapshot(repo: string, work: string, before?: string): string {
  const idx = join(work, 'private-index');
  cpSync(join(repo, '.git', 'index'), idx);
  const env = { GIT_INDEX_FILE: idx };
  git(repo, ['add', '-A'], env);
  const tree = git(repo, ['write-tree'], env);
  if (before) git(repo, ['diff-tree', '-r', '-M', '--numstat', before, tree]);
  return tree;
}

/** Native git outside a repository: a temp bare GIT_DIR and a fresh index. */
function gitSnapshotPlain(plain: string, work: string): string {
  const bare = mkdtempSync(join(work, 'bare-'));
  git(bare, ['init', '-q', '--bare']);
  const env = { GIT_DIR: bare, GIT_WORK_TREE: plain, GIT_INDEX_FILE: join(bare, 'idx') };
  git(plain, ['add', '-A'], env);
  const tree = git(plain, ['write-tree'], env);
  rmSync(bare, { recursive: true, force: true });
  return tree;
}

function emptyReport(): ChildReport {
  return {
    a: [],
    b: [],
    c: [],
    d: [],
    aNoFlush: [],
    bNoFlush: [],
    cNoFlush: [],
    dNoFlush: [],
    saveMs: [],
    storeOpenMs: [],
    maxRssMb: 0,
    files: 0,
    counters: '',
  };
}

/**
 * Between turns the engine writes its stat cache after returning the
 * snapshot; do that here (timed on its own) so it is not charged to the next
 * snapshot, then let the process idle briefly as it would between turns.
 */
async function settle(snap: WorkspaceSnapshotter, report: ChildReport): Promise<void> {
  const t = performance.now();
  await snap.saveCache();
  report.saveMs.push(performance.now() - t);
  await new Promise((r) => setTimeout(r, 20));
}

/** One repetition of our cases, in a fresh process (cold caches, clean RSS). */
async function runChild(req: ChildRequest): Promise<ChildReport> {
  const report: ChildReport = emptyReport();
  const n = Number(git(req.repo, ['ls-files']).split('\n').length);
  const ten = changedPaths(n, 10);
  const thousand = changedPaths(n, 1000);
  const stateDir = mkdtempSync(join(req.work, 'state-'));
  const cacheDir = join(stateDir, 'cache');
  const t = performance.now();
  const store = await openWorkspaceStore({ stateDir, workspaceDir: req.repo });
  report.storeOpenMs.push(performance.now() - t);
  const snap = new WorkspaceSnapshotter({ root: req.repo, store, cacheDir });
  const a = await snap.snapshot();
  await settle(snap, report);
  report.a.push(a.ms);
  report.aNoFlush.push(a.ms - a.flushMs);
  report.files = a.files;
  touch(req.repo, ten, `b${req.rep}`);
  const b = await snap.snapshot();
  await settle(snap, report);
  report.b.push(b.ms);
  report.bNoFlush.push(b.ms - b.flushMs);
  touch(req.repo, thousand, `d${req.rep}`);
  const d = await snap.snapshot();
  await settle(snap, report);
  report.d.push(d.ms);
  report.dNoFlush.push(d.ms - d.flushMs);
  report.counters = `a: seeded ${a.seededFromIndex} hashed ${a.hashed}; b: hashed ${b.hashed} trees ${b.treesWritten}; d: hashed ${d.hashed} trees ${d.treesWritten}`;
  await snap.saveCache();
  await store.close();
  rmSync(stateDir, { recursive: true, force: true });
  if (req.plain) {
    const plainState = mkdtempSync(join(req.work, 'state-'));
    const plainStore = await openWorkspaceStore({ stateDir: plainState, workspaceDir: req.plain });
    const ps = new WorkspaceSnapshotter({ root: req.plain, store: plainStore, cacheDir: join(plainState, 'cache') });
    const c = await ps.snapshot();
    report.c.push(c.ms);
    report.cNoFlush.push(c.ms - c.flushMs);
    await ps.saveCache();
    await plainStore.close();
    rmSync(plainState, { recursive: true, force: true });
  }
  report.maxRssMb = process.resourceUsage().maxRSS / 1024;
  return report;
}

function isoStatusMatrix(repo: string, timeoutMs: number): number | undefined {
  const script = join(process.cwd(), 'dist-bench', 'snapshot-iso.mjs');
  writeFileSync(
    script,
    "import git from 'isomorphic-git'; import fs from 'node:fs';\n" +
      'const t = performance.now(); const m = await git.statusMatrix({ fs, dir: process.argv[2] });\n' +
      'console.log(JSON.stringify({ ms: performance.now() - t, rows: m.length }));\n',
  );
  const r = spawnSync(process.execPath, [script, repo], { encoding: 'utf8', timeout: timeoutMs });
  if (r.status !== 0) return undefined;
  return (JSON.parse(r.stdout) as { ms: number }).ms;
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    const report = await runChild(JSON.parse(argv[1]!) as ChildRequest);
    process.stdout.write(JSON.stringify(report) + '\n');
    return;
  }
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = (opt('--sizes') ?? '20000').split(',').map(Number);
  if (sizes.some((s) => !Number.isInteger(s) || s <= 0)) throw new Error('--sizes takes positive integers, e.g. 20000,100000');
  const reps = Number(opt('--reps') ?? 5);
  const iso = !argv.includes('--no-iso');
  const work = mkdtempSync(join(tmpdir(), 'snapshot-bench-'));
  try {
    for (const n of sizes) {
      console.log(`\n== ${n} files (${reps} repetitions, medians) ==`);
      const repo = join(work, `repo-${n}`);
      const t = performance.now();
      generate(repo, n);
      git(repo, ['init', '-q']);
      // No background `git gc --auto` after the big first commit: it would still be writing during cleanup.
      git(repo, ['config', 'gc.auto', '0']);
      git(repo, ['add', '-A']);
      git(repo, ['commit', '-qm', 'init']);
      let plain: string | undefined;
      if (n <= 20000) {
        plain = join(work, `plain-${n}`);
        generate(plain, n);
      }
      console.log(`generated in ${fmt(performance.now() - t)}`);

      // Repetitions alternate native git and ours so both see the same machine load.
      const ten = changedPaths(n, 10);
      const thousand = changedPaths(n, 1000);
      const g = { a: [] as number[], b: [] as number[], c: [] as number[], d: [] as number[] };
      const ours: ChildReport = emptyReport();
      const restore = (): void => void execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: repo, env: gitEnvBase });
      for (let rep = 0; rep < reps; rep++) {
        restore();
        const [ta, before] = timed(() => gitSnapshot(repo, work));
        g.a.push(ta);
        touch(repo, ten, `gb${rep}`);
        g.b.push(timed(() => gitSnapshot(repo, work, before))[0]);
        touch(repo, thousand, `gd${rep}`);
        g.d.push(timed(() => gitSnapshot(repo, work, before))[0]);
        if (plain) g.c.push(timed(() => gitSnapshotPlain(plain!, work))[0]);
        restore();
        const req: ChildRequest = { repo, plain, work, rep };
        const child = spawnSync(process.execPath, ['--expose-gc', process.argv[1]!, '--child', JSON.stringify(req)], { encoding: 'utf8', maxBuffer: 1 << 24 });
        if (child.status !== 0) throw new Error(`benchmark child failed: ${child.stderr}`);
        const r = JSON.parse(child.stdout) as ChildReport;
        for (const k of ['a', 'b', 'c', 'd', 'aNoFlush', 'bNoFlush', 'cNoFlush', 'dNoFlush', 'saveMs', 'storeOpenMs'] as const) ours[k].push(...r[k]);
        ours.maxRssMb = Math.max(ours.maxRssMb, r.maxRssMb);
        ours.files = r.files;
        ours.counters = r.counters;
      }
      restore();

      const rows: [string, number[], number[], number[], string][] = [
        ['(a) first snapshot of a repository (cold cache, index seed)', ours.a, ours.aNoFlush, g.a, '<= 2x'],
        ['(b) after 10 files change', ours.b, ours.bNoFlush, g.b, '<= 1x'],
        ['(c) first snapshot, not a repository', ours.c, ours.cNoFlush, g.c, '<= 0.5x'],
        ['(d) after 1,000 files change', ours.d, ours.dNoFlush, g.d, '<= 1x'],
      ];
      console.log(
        `${'case'.padEnd(62)}${'ours'.padStart(9)}${'git'.padStart(9)}${'ratio'.padStart(7)}${'no-flush'.padStart(10)}${'ratio'.padStart(7)}  target`,
      );
      for (const [name, o, onf, gg, target] of rows) {
        if (o.length === 0) continue;
        const mo = median(o);
        const mnf = median(onf);
        const mg = median(gg);
        console.log(
          `${name.padEnd(62)}${fmt(mo).padStart(9)}${fmt(mg).padStart(9)}${(mo / mg).toFixed(2).padStart(6)}x${fmt(mnf).padStart(10)}${(mnf / mg).toFixed(2).padStart(6)}x  ${target}`,
        );
      }
      console.log('no-flush: ours without the store flush (pack write + fsync), which the git recipe does not do (no fsync).');
      console.log(
        `files in tree: ${ours.files}; not in the figures: store open ${fmt(median(ours.storeOpenMs))}, stat cache save after each snapshot ${fmt(median(ours.saveMs))} (median)`,
      );
      console.log(`counters (last repetition): ${ours.counters}`);
      console.log(`peak RSS of our process: ${ours.maxRssMb.toFixed(0)} MB`);
      if (iso) {
        const limit = 60_000;
        const ms = isoStatusMatrix(repo, limit);
        console.log(
          ms === undefined
            ? `isomorphic-git statusMatrix: over ${limit / 1000} s, skipped`
            : `isomorphic-git statusMatrix (naive anchor, 1 run): ${fmt(ms)}  (ours (a) is ${(ms / median(ours.a)).toFixed(0)}x faster, (b) ${(ms / median(ours.b)).toFixed(0)}x)`,
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
