// Diff benchmark: ours (full hunks) against native git and jsdiff on a seeded
// corpus. Usage: npm run bench -- diff [--runs N] [--jsdiff-timeout MS]
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
}

function parseArgs(argv: string[]): Args {
  const args: Args = { runs: 7, jsdiffTimeout: 5000 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = Number(argv[i + 1]);
    if (flag === '--runs' && Number.isInteger(value) && value >= 5) args.runs = value;
    else if (flag === '--jsdiff-timeout' && value > 0) args.jsdiffTimeout = value;
    else throw new Error(`unknown or invalid argument: ${flag} ${argv[i + 1] ?? ''} (--runs N>=5, --jsdiff-timeout MS)`);
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

/** Median time of each function; they alternate run by run so machine load hits all alike. */
function measureInterleaved(runs: number, fns: (() => void)[]): number[] {
  for (const fn of fns) fn(); // warm-up: JIT for ours, page cache for git
  const xs = fns.map((): number[] => []);
  for (let r = 0; r < runs; r++) {
    fns.forEach((fn, k) => {
      gc();
      xs[k]!.push(time(fn));
    });
  }
  return xs.map(median);
}

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

function git(args: string[], cwd: string): string {
  const r = spawnSync('git', args, { cwd, env: gitEnv, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (r.error) throw r.error;
  if ((r.status ?? 2) > 1) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'bench-diff-'));
  try {
    const corpus = buildCorpus();
    const spawnTimes: number[] = [];
    console.log(`diff benchmark: ${corpus.length} cases, median of ${args.runs} runs; ${git(['--version'], dir).trim()}`);
    const header = ['case', 'lines', 'KiB', '+/-', 'ours', 'git', 'git-spawn', 'git hist', 'jsdiff', 'ours/git', 'ours/(git-spawn)', '=numstat'];
    const rows: string[][] = [];
    let sumOurs = 0;
    let sumGit = 0;
    let sumGitNet = 0;
    let logRatio = 0;
    let anyCoarse = false;
    corpus.forEach((c, k) => {
      const fa = join(dir, `a${k}`);
      const fb = join(dir, `b${k}`);
      writeFileSync(fa, c.before);
      writeFileSync(fb, c.after);
      let result = diffFile(readFileSync(fa), readFileSync(fb));
      const [ours, gitMs, gitHist, spawn] = measureInterleaved(args.runs, [
        () => {
          result = diffFile(readFileSync(fa), readFileSync(fb));
        },
        () => git(['diff', '--no-index', '--no-color', '-U3', fa, fb], dir),
        () => git(['diff', '--no-index', '--no-color', '--histogram', '-U3', fa, fb], dir),
        () => git(['--version'], dir),
      ]) as [number, number, number, number];
      spawnTimes.push(spawn);
      if (result.kind !== 'text') throw new Error(`${c.name}: expected a text diff, got ${result.kind}`);
      anyCoarse ||= result.coarse;
      const [gAdded, gRemoved] = git(['diff', '--no-index', '--histogram', '--numstat', fa, fb], dir).split('\t').map(Number);
      const sameCounts = gAdded === result.added && gRemoved === result.removed;

      // jsdiff is the naive anchor; give up on a case once it hits the timeout.
      let js = 'timeout';
      const jsRuns: number[] = [];
      for (let r = 0; r < args.runs; r++) {
        gc();
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
      sumOurs += ours;
      sumGit += gitMs;
      sumGitNet += net;
      logRatio += Math.log(ours / gitMs);
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
        `${sameCounts ? 'yes' : 'no'}${result.coarse ? ' COARSE' : ''}`,
      ]);
      console.log(`  measured: ${c.name}`);
    });
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
    const line = (cells: string[]) => `| ${cells.map((x, i) => x.padEnd(widths[i] as number)).join(' | ')} |`;
    console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
    for (const r of rows) console.log(line(r));
    const geo = Math.exp(logRatio / corpus.length);
    console.log(`\ngit spawn baseline (git --version, measured with every case): median ${fmt(median(spawnTimes))} ms`);
    console.log(`corpus total: ours ${fmt(sumOurs)} ms, git ${fmt(sumGit)} ms, git minus spawn ${fmt(sumGitNet)} ms`);
    console.log(`ratio ours/git over the corpus: ${(sumOurs / sumGit).toFixed(2)} (total), ${geo.toFixed(2)} (geometric mean of cases)`);
    console.log(`ratio ours/(git minus spawn) over the corpus: ${(sumOurs / sumGitNet).toFixed(2)} (total)`);
    console.log(`target ours/git <= 2 over the corpus: ${sumOurs / sumGit <= 2 ? 'met' : 'NOT met'}; coarse results: ${anyCoarse ? 'YES' : 'none'}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
