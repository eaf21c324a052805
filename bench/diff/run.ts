// Diff benchmark: ours (full hunks) against native git and jsdiff on a seeded
// corpus, elapsed and processor time. Usage: npm run bench -- diff [--runs N] [--jsdiff-timeout MS] [--case TEXT]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { structuredPatch } from 'diff';
import { diffFile } from '../../server/diff/file-diff.js';
import { buildCorpus } from './corpus.js';

interface Args {
  runs: number;
  jsdiffTimeout: number;
  /** Only the cases whose name contains this text (the totals then cover those alone). */
  only: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { runs: 7, jsdiffTimeout: 5000, only: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = Number(argv[i + 1]);
    if (flag === '--runs' && Number.isInteger(value) && value >= 5) args.runs = value;
    else if (flag === '--jsdiff-timeout' && value > 0) args.jsdiffTimeout = value;
    else if (flag === '--case' && argv[i + 1]) args.only = argv[i + 1];
    else throw new Error(`unknown or invalid argument: ${flag} ${argv[i + 1] ?? ''} (--runs N>=5, --jsdiff-timeout MS, --case TEXT)`);
    i++;
  }
  return args;
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

/** Processor time (user + system) of this process, in ms. */
function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Median time of each function; they alternate run by run so machine load
 * hits all alike. The heap is collected once per case, not before every run:
 * a forced full collection makes the next run pay to re-grow the heap, which
 * a server diffing file after file never does (garbage our runs create is
 * still collected, and paid for, inside the timings).
 */
function measureInterleaved(runs: number, fns: (() => number | undefined)[]): { wall: number[]; cpu: number[] } {
  gc();
  for (const fn of fns) fn(); // warm-up: JIT for ours, page cache for git
  const xs = fns.map((): number[] => []);
  const cs = fns.map((): number[] => []);
  for (let r = 0; r < runs; r++) {
    fns.forEach((fn, k) => {
      let cpu: number | undefined;
      xs[k]!.push(
        time(() => {
          cpu = fn();
        }),
      );
      if (cpu !== undefined) cs[k]!.push(cpu);
    });
  }
  return { wall: xs.map(median), cpu: cs.map((c) => (c.length > 0 ? median(c) : Number.NaN)) };
}

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

function git(args: string[], cwd: string): string {
  const r = spawnSync('git', args, { cwd, env: gitEnv, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (r.error) throw r.error;
  if ((r.status ?? 2) > 1) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/**
 * git's processor time (user + system, in ms) for one run, as bash's `times`
 * reports it for its child: on a loaded machine elapsed times swing with the
 * load, processor times much less.
 */
function gitCpu(args: string[], cwd: string): number {
  const r = spawnSync('bash', ['-c', 'git "$@"; times >&2', 'bash', ...args], { cwd, env: gitEnv, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (r.error) throw r.error;
  const lines = r.stderr.trim().split('\n');
  const seconds = (lines[lines.length - 1] ?? '').match(/(\d+)m([\d.]+)s/g) ?? [];
  if (seconds.length !== 2) throw new Error(`could not read git's processor time from: ${r.stderr}`);
  return seconds.reduce((sum, t) => {
    const [, m, sec] = /(\d+)m([\d.]+)s/.exec(t) as RegExpExecArray;
    return sum + (Number(m) * 60 + Number(sec)) * 1000;
  }, 0);
}

const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'bench-diff-'));
  try {
    const corpus = buildCorpus().filter((c) => args.only === undefined || c.name.includes(args.only));
    if (corpus.length === 0) throw new Error(`no case name contains ${args.only}`);
    const spawnTimes: number[] = [];
    console.log(`diff benchmark: ${corpus.length} cases, median of ${args.runs} runs; ${git(['--version'], dir).trim()}`);
    const header = [
      'case',
      'lines',
      'KiB',
      '+/-',
      'ours',
      'git',
      'git-spawn',
      'git hist',
      'jsdiff',
      'ours/git',
      'ours/(git-spawn)',
      'ours cpu',
      'git cpu',
      'cpu ratio',
      'numstat = git',
    ];
    const rows: string[][] = [];
    const totals = {
      main: { ours: 0, git: 0, net: 0, log: 0, n: 0, oursCpu: 0, gitCpu: 0 },
      all: { ours: 0, git: 0, net: 0, log: 0, n: 0, oursCpu: 0, gitCpu: 0 },
    };
    let anyCoarse = false;
    corpus.forEach((c, k) => {
      const fa = join(dir, `a${k}`);
      const fb = join(dir, `b${k}`);
      writeFileSync(fa, c.before);
      writeFileSync(fb, c.after);
      let result = diffFile(readFileSync(fa), readFileSync(fb));
      const gitArgs = ['diff', '--no-index', '--no-color', '-U3', fa, fb];
      const measured = measureInterleaved(args.runs, [
        () => {
          const t = cpuNow();
          result = diffFile(readFileSync(fa), readFileSync(fb));
          return cpuNow() - t;
        },
        () => {
          git(gitArgs, dir);
          return undefined;
        },
        () => {
          git(['diff', '--no-index', '--no-color', '--histogram', '-U3', fa, fb], dir);
          return undefined;
        },
        () => {
          git(['--version'], dir);
          return undefined;
        },
        () => gitCpu(gitArgs, dir),
      ]);
      const [ours, gitMs, gitHist, spawn] = measured.wall as [number, number, number, number];
      const oursCpu = measured.cpu[0] as number;
      const gitCpuMs = measured.cpu[4] as number;
      spawnTimes.push(spawn);
      if (result.kind !== 'text') throw new Error(`${c.name}: expected a text diff, got ${result.kind}`);
      anyCoarse ||= result.coarse;
      // Our counts must equal git's: --histogram's, or plain git diff's when the work allowance switched us to Myers.
      const counts = (extra: string[]) =>
        git(['diff', '--no-index', ...extra, '--numstat', fa, fb], dir)
          .split('\t')
          .map(Number);
      const diff = result;
      const same = ([added, removed]: number[]) => added === diff.added && removed === diff.removed;
      const agreement = same(counts(['--histogram'])) ? 'histogram' : same(counts([])) ? 'myers' : 'NO';

      // jsdiff is the naive anchor; give up on a case once it hits the timeout.
      let js = 'timeout';
      const jsRuns: number[] = [];
      gc();
      for (let r = 0; r < args.runs; r++) {
        let patch: unknown;
        const ms = time(() => {
          patch = structuredPatch('a', 'b', c.before, c.after, undefined, undefined, { context: 3, timeout: args.jsdiffTimeout });
        });
        if (patch === undefined) break;
        jsRuns.push(ms);
      }
      if (jsRuns.length === args.runs) js = fmt(median(jsRuns));
      else js = `>${args.jsdiffTimeout}`;

      const net = Math.max(gitMs - spawn, 0.01);
      for (const t of c.stress ? [totals.all] : [totals.main, totals.all]) {
        t.ours += ours;
        t.git += gitMs;
        t.net += net;
        t.log += Math.log(ours / gitMs);
        t.n++;
        t.oursCpu += oursCpu;
        t.gitCpu += gitCpuMs;
      }
      rows.push([
        c.name,
        String(c.before.split('\n').length - 1),
        (c.before.length / 1024).toFixed(0),
        `+${result.added}/-${result.removed}`,
        fmt(ours),
        fmt(gitMs),
        fmt(net),
        fmt(gitHist),
        js,
        (ours / gitMs).toFixed(2),
        (ours / net).toFixed(2),
        fmt(oursCpu),
        fmt(gitCpuMs),
        (oursCpu / gitCpuMs).toFixed(2),
        `${agreement}${result.coarse ? ' COARSE' : ''}`,
      ]);
      console.log(`  measured: ${c.name}`);
    });
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
    const line = (cells: string[]) => `| ${cells.map((x, i) => x.padEnd(widths[i] as number)).join(' | ')} |`;
    console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
    for (const r of rows) console.log(line(r));
    console.log(`\ngit spawn baseline (git --version, measured with every case): median ${fmt(median(spawnTimes))} ms`);
    for (const [label, t] of [
      ['reference corpus', totals.main],
      ['with stress cases', totals.all],
    ] as const) {
      if (t.n === 0) continue;
      const ratio = t.ours / t.git;
      console.log(
        `${label} (${t.n} cases): ours ${fmt(t.ours)} ms, git ${fmt(t.git)} ms, git minus spawn ${fmt(t.net)} ms; ` +
          `ours/git ${ratio.toFixed(2)} (total), ${Math.exp(t.log / t.n).toFixed(2)} (geometric mean), ` +
          `ours/(git minus spawn) ${(t.ours / t.net).toFixed(2)}; processor time ours ${fmt(t.oursCpu)} ms, git ${fmt(t.gitCpu)} ms, ` +
          `ours/git ${(t.oursCpu / t.gitCpu).toFixed(2)}; target <= 2: ${ratio <= 2 ? 'met' : 'NOT met'}`,
      );
    }
    console.log(`coarse results: ${anyCoarse ? 'YES' : 'none'}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
