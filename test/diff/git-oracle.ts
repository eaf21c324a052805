// Runs real git as the reference implementation for the diff tests.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GitFileDiff {
  /** Hunks as git prints them: header `@@ -a,b +c,d @@` (function context dropped) then the lines. */
  hunks: string[][];
  added: number;
  removed: number;
}

export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(home, 'gitconfig'),
    HOME: home,
    LC_ALL: 'C',
  };
}

export function runGit(args: string[], cwd: string, home: string): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('git', args, { cwd, env: gitEnv(home), maxBuffer: 1 << 30, encoding: 'latin1' });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A scratch directory removed by `dispose`. */
export function scratchDir(): { dir: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'diff-oracle-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Diffs many pairs with one git process per mode: pairs are written as
 * `a/<i>` and `b/<i>`, then `git diff --no-index` runs on the two folders.
 * Text is written and read as latin1 so bytes round-trip.
 */
export function gitDiffPairs(
  pairs: readonly (readonly [string, string])[],
  options: { algorithm?: 'histogram' | 'myers'; context?: number } = {},
): GitFileDiff[] {
  const { dir, dispose } = scratchDir();
  try {
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    pairs.forEach(([x, y], i) => {
      writeFileSync(join(dir, 'a', String(i)), x, 'latin1');
      writeFileSync(join(dir, 'b', String(i)), y, 'latin1');
    });
    const common = ['diff', '--no-index', '--no-color', '--no-ext-diff', '--no-renames', `--diff-algorithm=${options.algorithm ?? 'histogram'}`];
    const patch = runGit([...common, `-U${options.context ?? 3}`, 'a', 'b'], dir, dir);
    const numstat = runGit([...common, '--numstat', 'a', 'b'], dir, dir);
    if (patch.status > 1 || numstat.status > 1) throw new Error(`git diff failed: ${patch.stderr}${numstat.stderr}`);
    const result: GitFileDiff[] = pairs.map(() => ({ hunks: [], added: 0, removed: 0 }));
    for (const line of numstat.stdout.split('\n')) {
      const m = /^(\d+)\t(\d+)\t\{a => b\}\/(\d+)$/.exec(line);
      if (m) {
        const r = result[Number(m[3])] as GitFileDiff;
        r.added = Number(m[1]);
        r.removed = Number(m[2]);
      }
    }
    let current: GitFileDiff | undefined;
    let hunk: string[] | undefined;
    const lines = patch.stdout.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) {
      const head = /^diff --git a\/a\/(\d+) b\/b\/\d+$/.exec(line);
      if (head) {
        current = result[Number(head[1])];
        hunk = undefined;
        continue;
      }
      if (!current) continue;
      if (line.startsWith('@@')) {
        const m = /^(@@ -\S+ \+\S+ @@)/.exec(line);
        hunk = [m ? (m[1] as string) : line];
        current.hunks.push(hunk);
      } else if (hunk) {
        hunk.push(line);
      }
    }
    return result;
  } finally {
    dispose();
  }
}

/** A small seeded PRNG (mulberry32) so randomized tests are reproducible. */
export function prng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random text over a small line alphabet, optionally without a final newline. */
export function randomText(rand: () => number, alphabet: readonly string[], maxLines: number): string {
  const n = Math.floor(rand() * (maxLines + 1));
  let s = '';
  for (let i = 0; i < n; i++) s += `${alphabet[Math.floor(rand() * alphabet.length)]}\n`;
  if (n > 0 && rand() < 0.3) s = s.slice(0, -1);
  return s;
}

/** A random edit of `text`: lines replaced, inserted and deleted, with the final newline sometimes toggled. */
export function randomEdit(rand: () => number, text: string, alphabet: readonly string[]): string {
  const lines = text.split('\n');
  const hadFinal = text.endsWith('\n');
  if (hadFinal) lines.pop();
  const edits = 1 + Math.floor(rand() * 5);
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(rand() * (lines.length + 1));
    const pick = (): string => alphabet[Math.floor(rand() * alphabet.length)] as string;
    const r = rand();
    if (r < 0.33) lines.splice(pos, 0, ...Array.from({ length: 1 + Math.floor(rand() * 3) }, pick));
    else if (r < 0.66) lines.splice(pos, 1 + Math.floor(rand() * 3));
    else if (pos < lines.length) lines[pos] = pick();
  }
  let out = lines.map((l) => `${l}\n`).join('');
  const final = rand() < 0.15 ? !hadFinal : hadFinal;
  if (!final && out.length > 0) out = out.slice(0, -1);
  return out;
}

/** What `git merge-file -p ours base theirs` printed, and its exit status (the number of conflicts). */
export interface GitMerge {
  status: number;
  output: string;
}

/**
 * Merges many cases with `git merge-file -p ours base theirs`, one run of
 * git per case as before, all started by one shell: starting a process from
 * the test's own (a large one) costs more than the merge. Each case is
 * written as `<i>/base`, `<i>/ours` and `<i>/theirs` (latin1, so bytes
 * round-trip) and merged in its folder, so the conflict markers name
 * `ours` and `theirs` as a merge of those three files does.
 */
export function gitMergeFiles(cases: readonly (readonly [base: string, ours: string, theirs: string])[]): GitMerge[] {
  const { dir, dispose } = scratchDir();
  try {
    cases.forEach(([base, ours, theirs], i) => {
      mkdirSync(join(dir, String(i)));
      writeFileSync(join(dir, String(i), 'base'), base, 'latin1');
      writeFileSync(join(dir, String(i), 'ours'), ours, 'latin1');
      writeFileSync(join(dir, String(i), 'theirs'), theirs, 'latin1');
    });
    const script = `i=0; while [ "$i" -lt ${cases.length} ]; do git -C "$i" merge-file -p ours base theirs > "$i/out" 2> "$i/err"; echo $? > "$i/status"; i=$((i+1)); done`;
    const r = spawnSync('sh', ['-c', script], { cwd: dir, env: gitEnv(dir), encoding: 'latin1' });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`the merges did not run: ${r.stderr}`);
    return cases.map((_, i) => {
      const status = Number(readFileSync(join(dir, String(i), 'status'), 'latin1'));
      if (!(status >= 0 && status <= 127)) throw new Error(`git merge-file failed on case ${i}: ${readFileSync(join(dir, String(i), 'err'), 'latin1')}`);
      return { status, output: readFileSync(join(dir, String(i), 'out'), 'latin1') };
    });
  } finally {
    dispose();
  }
}
