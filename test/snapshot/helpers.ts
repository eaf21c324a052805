/** Shared test helpers: temp dirs, git as the oracle (never touching the user's index). */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, lstatSync, readlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A throwaway HOME so the machine's git config does not leak into tests. */
export const testHome = mkdtempSync(join(tmpdir(), 'snap-home-'));
// Registered on the importing test file's root suite (module code runs during collection).
afterAll(() => rmSync(testHome, { recursive: true, force: true }));

export const gitEnv: NodeJS.ProcessEnv = {
  ...process.env,
  HOME: testHome,
  XDG_CONFIG_HOME: join(testHome, '.config'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function tempDir(prefix = 'snap-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', args, { cwd, env: { ...gitEnv, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** What `git add -A && git write-tree` gives with a fresh private index. */
export function gitTree(dir: string, extraEnv: NodeJS.ProcessEnv = {}): string {
  const tmp = tempDir('snap-idx-');
  try {
    const env = { GIT_INDEX_FILE: join(tmp, 'index'), ...extraEnv };
    git(dir, ['add', '-A'], env);
    return git(dir, ['write-tree'], env);
  } finally {
    removeDir(tmp);
  }
}

/** Tree of a directory that is not a repository, with git's objects in a temp bare repo. */
export function gitTreeOutsideRepo(dir: string, excludesFile?: string): string {
  const bare = tempDir('snap-bare-');
  try {
    git(bare, ['init', '-q', '--bare']);
    const env: NodeJS.ProcessEnv = { GIT_DIR: bare, GIT_WORK_TREE: dir, GIT_INDEX_FILE: join(bare, 'private-index') };
    const args = excludesFile ? ['-c', `core.excludesFile=${excludesFile}`] : [];
    git(dir, [...args, 'add', '-A'], env);
    return git(dir, ['write-tree'], env);
  } finally {
    removeDir(bare);
  }
}

export function initRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
}

/** SHA-1 of every file (and symlink target) under a directory, for byte-identity checks. */
export function hashTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      const r = rel + name;
      if (st.isDirectory()) walk(p, r + '/');
      else if (st.isSymbolicLink()) out.set(r, 'link:' + readlinkSync(p));
      else out.set(r, createHash('sha1').update(readFileSync(p)).digest('hex') + ':' + st.mode + ':' + st.mtimeMs);
    }
  };
  walk(dir, '');
  return out;
}
