/** Real git repositories in temp dirs for store tests; `git` is the oracle here only. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach } from 'vitest';
import { openWorkspaceStore, type OpenWorkspaceStoreOptions, type WorkspaceStore } from '../../server/store/index.js';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
};

/** Runs git and returns stdout (trailing newline kept). */
export function git(cwd: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, input, maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
}

/** Runs git and returns stdout as bytes. */
export function gitBytes(cwd: string, args: string[], input?: string | Buffer): Buffer {
  return execFileSync('git', args, { cwd, env: GIT_ENV, input, maxBuffer: 256 * 1024 * 1024 });
}

/** A temp directory removed by the returned cleanup. */
export async function tempDir(prefix = 'store-test-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Creates a repository with an initial commit of the given files. */
export function initRepo(dir: string, files: Record<string, string> = { 'README.md': 'hello\n' }): void {
  git(dir, ['init', '-q', '-b', 'main']);
  commitFiles(dir, files, 'initial');
}

/** Writes files and commits them. */
export function commitFiles(dir: string, files: Record<string, string>, message: string): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', message]);
}

/** Every file under `dir` with a hash of its bytes, mode and mtime, to prove nothing was written. */
export async function fingerprint(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(dir, path);
      const s = await lstat(full);
      if (entry.isDirectory()) {
        out.set(`${path}/`, `${s.mode}`);
        await walk(path);
      } else if (entry.isSymbolicLink()) {
        out.set(path, `link:${await readlink(full)}`);
      } else {
        const hash = createHash('sha1')
          .update(await readFile(full))
          .digest('hex');
        out.set(path, `${s.mode}:${s.size}:${s.mtimeMs}:${hash}`);
      }
    }
  };
  await walk('');
  return out;
}

/** All object ids in a repository (loose and packed, via git). */
export function allObjectIds(gitDir: string): string[] {
  const text = git(gitDir, ['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)']);
  return text.split('\n').filter(Boolean);
}

/** A temp root with an empty `ws/` workspace, a `state/` directory, and the stores a test opens. */
export interface StoreFixture {
  /** The temp root. */
  readonly root: string;
  /** The workspace directory (`<root>/ws`), created empty. */
  readonly workspace: string;
  /** The state directory (`<root>/state`). */
  readonly stateDir: string;
  /** Opens a store in the state directory (the workspace by default); closed after the test. */
  open(options?: Partial<OpenWorkspaceStoreOptions>): Promise<WorkspaceStore>;
}

/** Registers the per-test temp root and store cleanup every store test uses. */
export function useStoreFixture(): StoreFixture {
  let root: { path: string; cleanup: () => Promise<void> } | undefined;
  const opened: WorkspaceStore[] = [];
  beforeEach(async () => {
    root = await tempDir();
    await mkdir(join(root.path, 'ws'));
  });
  afterEach(async () => {
    // A test may have closed its store already; closing again is harmless here.
    for (const store of opened.splice(0)) await store.close().catch(() => undefined);
    await root?.cleanup();
  });
  return {
    get root() {
      return root!.path;
    },
    get workspace() {
      return join(root!.path, 'ws');
    },
    get stateDir() {
      return join(root!.path, 'state');
    },
    async open(options = {}) {
      const store = await openWorkspaceStore({ stateDir: join(root!.path, 'state'), workspaceDir: join(root!.path, 'ws'), ...options });
      opened.push(store);
      return store;
    },
  };
}
