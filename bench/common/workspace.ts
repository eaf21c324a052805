/**
 * The generated workspaces the benchmarks measure: a repository of `files`
 * small source files four directories deep, and edits spread over it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';

/** git with no user or system configuration, so every machine measures the same git. */
export const gitEnv: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
};

export function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = gitEnv): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 28 });
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Runs ours and the anchor `reps` times, alternated, who goes first swapping
 * each round so neither always runs on a warmer machine; the load average
 * (1 minute) is taken before each round.
 */
export async function alternated<T>(
  reps: number,
  ours: () => T | Promise<T>,
  anchor: () => T | Promise<T>,
): Promise<{ ours: T[]; anchor: T[]; loads: number[] }> {
  const out = { ours: [] as T[], anchor: [] as T[], loads: [] as number[] };
  for (let r = 0; r < reps; r++) {
    out.loads.push(loadavg()[0]!);
    if (r % 2 === 0) {
      out.ours.push(await ours());
      out.anchor.push(await anchor());
    } else {
      out.anchor.push(await anchor());
      out.ours.push(await ours());
    }
  }
  return out;
}

/** The path of file `i`: ten to a directory, `pkgN/modN/dirN/fileN.ts`. */
export function fileAt(i: number): string {
  const d = Math.floor(i / 10);
  return join(`pkg${Math.floor(d / 100)}`, `mod${Math.floor(d / 10) % 10}`, `dir${d % 10}`, `file${i % 10}.ts`);
}

/** Writes `files` files under `root` and commits them. */
export function generateRepository(root: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const path = join(root, fileAt(i));
    if (i % 10 === 0) mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `// file ${i}\nexport const v = ${i};\n`.repeat(1 + (i % 20)));
  }
  git(root, ['init', '-q', '-b', 'main']);
  // No background `git gc --auto` after the big first commit, racing the measured rounds and the cleanup.
  git(root, ['config', 'gc.auto', '0']);
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', 'initial']);
}

/** Rewrites `changed` files spread over the tree, a different set and content for each `round`. */
export function editFiles(root: string, files: number, changed: number, round: number): void {
  if (changed === 0) return;
  const step = Math.max(1, Math.floor(files / changed));
  for (let k = 0; k < changed; k++) {
    const i = (k * step + round * 7) % files;
    writeFileSync(join(root, fileAt(i)), `// file ${i} round ${round}\nexport const v = ${i};\nexport const r = ${round};\n`);
  }
}
