import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ownDir } from './leftover-servers.js';

/** Temp directories made by a test, removed by `cleanup()`. */
export class TempDirs {
  private readonly dirs: string[] = [];

  make(prefix = 'cs-'): string {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    this.dirs.push(dir);
    // A server left running over it, or with its state in it, fails the test file (file-isolation.ts).
    ownDir(dir);
    return dir;
  }

  /** Counts a directory made elsewhere as one of these: removed by `cleanup()`. */
  add(dir: string): void {
    this.dirs.push(dir);
    ownDir(dir);
  }

  cleanup(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs git in a directory with a fixed identity and no user configuration. */
export function git(cwd: string, args: readonly string[], input?: string, extraEnv: Record<string, string> = {}): string {
  return execFileSync('git', [...args], {
    cwd,
    encoding: 'utf8',
    input,
    env: {
      ...process.env,
      ...extraEnv,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  }).trim();
}

/** Writes files (relative path → content) under a directory, creating folders. */
export function writeFiles(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}

/** A git repository with the given files committed on `main`. */
export function makeRepo(root: string, files: Record<string, string | Uint8Array>): string {
  git(root, ['init', '-q', '-b', 'main']);
  writeFiles(root, files);
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', 'initial']);
  return root;
}
