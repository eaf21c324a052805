/**
 * The stat cache: re-hash only what changed, survive restarts, seed from the
 * repository index, treat racy entries and files changing mid-read as git
 * does, and never write into the user's repository.
 */
import { mkdirSync, utimesSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceSnapshotter, type SnapshotOptions } from '../../server/snapshot/index.js';
import { git, gitTree, hashTree, initRepo, removeDir, tempDir } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { runChild } from './run-child.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop()!);
});

function write(root: string, rel: string, content = rel): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}

/** Moves every file's mtime 10 s into the past so nothing is racy. */
function age(dir: string): void {
  const past = new Date(Date.now() - 10_000);
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      if (!e.isSymbolicLink()) utimesSync(p, past, past);
    }
  };
  walk(dir);
}

function setup(files = 30): { base: string; root: string; cacheDir: string } {
  const base = tempDir();
  dirs.push(base);
  const root = join(base, 'ws');
  initRepo(root);
  for (let i = 0; i < files; i++) write(root, `d${i % 5}/sub${i % 3}/f${i}.txt`, `content ${i}\n`);
  age(root);
  return { base, root, cacheDir: join(base, 'cache') };
}

function snapshotter(root: string, cacheDir: string, extra: Partial<SnapshotOptions> = {}): WorkspaceSnapshotter {
  return new WorkspaceSnapshotter({ root, cacheDir, store: new MemoryObjectStore(), env: { HOME: join(cacheDir, '..') }, ...extra });
}

describe('stat cache', () => {
  it('re-hashes only changed files and re-encodes only the trees above them', async () => {
    const { root, cacheDir } = setup();
    const s = snapshotter(root, cacheDir);
    const first = await s.snapshot();
    expect(first.hashed).toBe(30);
    const second = await s.snapshot();
    expect(second).toMatchObject({ hashed: 0, reusedFromCache: 30, treesWritten: 0, tree: first.tree });
    write(root, 'd1/sub1/f1.txt', 'changed\n');
    const past = new Date(Date.now() - 5_000);
    utimesSync(join(root, 'd1/sub1/f1.txt'), past, past);
    const third = await s.snapshot();
    expect(third).toMatchObject({ hashed: 1, reusedFromCache: 29, treesWritten: 3 });
    expect(third.tree).toBe(gitTree(root));
  });

  it('survives a restart: a second process re-hashes nothing', () => {
    const { base, root, cacheDir } = setup();
    const [a] = runChild({ root, cacheDir, home: base });
    const [b] = runChild({ root, cacheDir, home: base });
    expect(a!.hashed).toBe(30);
    expect(b).toMatchObject({ hashed: 0, reusedFromCache: 30, seededFromIndex: 0, tree: a!.tree });
    expect(b!.tree).toBe(gitTree(root));
  });

  it('runs without a git executable on PATH', () => {
    const { base, root, cacheDir } = setup(5);
    const empty = join(base, 'empty-bin');
    mkdirSync(empty);
    const [r] = runChild({ root, cacheDir, home: base }, { env: { PATH: empty, HOME: base } });
    expect(r!.tree).toBe(gitTree(root));
  });

  it('treats entries modified at or after the snapshot start as racy', async () => {
    const { root, cacheDir } = setup(3);
    const future = new Date(Date.now() + 3600_000);
    utimesSync(join(root, 'd0/sub0/f0.txt'), future, future);
    const s = snapshotter(root, cacheDir);
    await s.snapshot();
    for (let i = 0; i < 3; i++) expect((await s.snapshot()).hashed).toBe(1);
  });

  it('sees same-size rewrites made right after a snapshot', async () => {
    const { root, cacheDir } = setup(1);
    const s = snapshotter(root, cacheDir);
    for (let i = 0; i < 20; i++) {
      write(root, 'x.txt', `v${i % 10}`);
      const r = await s.snapshot();
      expect(r.tree).toBe(gitTree(root));
    }
  });

  it('re-reads a file that changes between stat and read', async () => {
    const { root, cacheDir } = setup(3);
    let fired = false;
    const s = snapshotter(root, cacheDir, {
      hooks: {
        beforeRead(path) {
          if (path === 'd1/sub1/f1.txt' && !fired) {
            fired = true;
            writeFileSync(join(root, path), 'rewritten while the snapshot was reading it, longer\n');
          }
        },
      },
    });
    const r = await s.snapshot();
    expect(fired).toBe(true);
    expect(r.tree).toBe(gitTree(root));
    expect(r.warnings).toEqual([]);
  });

  it('never writes into the repository, over many snapshots', async () => {
    const { root, cacheDir } = setup(20);
    git(root, ['add', '-A']);
    git(root, ['commit', '-qm', 'init']);
    const before = hashTree(join(root, '.git'));
    const s = snapshotter(root, cacheDir);
    for (let i = 0; i < 50; i++) {
      if (i % 5 === 0) write(root, `d${i % 4}/new-${i}.txt`, `n${i}`);
      await s.snapshot();
    }
    expect(hashTree(join(root, '.git'))).toEqual(before);
  });
});

describe('index seed', () => {
  for (const version of [2, 3, 4]) {
    it(`trusts index v${version} entries whose stat data matches`, async () => {
      const { root, cacheDir } = setup(20);
      git(root, ['add', '-A']);
      git(root, ['update-index', '--index-version', String(version)]);
      git(root, ['commit', '-qm', 'init']);
      if (version >= 3) {
        // Extended flags: an intent-to-add entry and a skip-worktree entry are not trusted.
        write(root, 'intent.txt', 'later');
        git(root, ['add', '-N', 'intent.txt']);
        git(root, ['update-index', '--skip-worktree', 'd0/sub0/f0.txt']);
      }
      write(root, 'untracked.txt', 'u');
      const { readFileSync } = await import('node:fs');
      expect(readFileSync(join(root, '.git/index')).readUInt32BE(4)).toBe(version);
      const r = await snapshotter(root, cacheDir).snapshot();
      // v2: only the untracked file; v3/v4 also the intent-to-add and skip-worktree entries.
      expect(r.hashed).toBe(version >= 3 ? 3 : 1);
      expect(r.seededFromIndex).toBe(version >= 3 ? 19 : 20);
      expect(r.tree).toBe(gitTree(root));
    });
  }

  it('does not trust an index entry whose file changed since', async () => {
    const { root, cacheDir } = setup(10);
    git(root, ['add', '-A']);
    write(root, 'd1/sub1/f1.txt', 'edited after git add');
    const r = await snapshotter(root, cacheDir).snapshot();
    expect(r.hashed).toBe(1);
    expect(r.seededFromIndex).toBe(9);
    expect(r.tree).toBe(gitTree(root));
  });

  it('leaves the trees the cache-tree of the index names to the repository and stores the others', async () => {
    const { root, cacheDir } = setup(10);
    git(root, ['add', '-A']);
    git(root, ['commit', '-qm', 'init']);
    write(root, 'd1/sub1/f1.txt', 'edited after the commit');
    const store = new MemoryObjectStore();
    const r = await snapshotter(root, cacheDir, { store }).snapshot();
    expect(r.tree).toBe(gitTree(root));
    // Unchanged directories: their trees are the repository's, not copied.
    expect(store.objects.has(git(root, ['rev-parse', 'HEAD:d0']))).toBe(false);
    expect(store.objects.has(git(root, ['rev-parse', 'HEAD:d1/sub0']))).toBe(false);
    // Changed ones are new trees, stored.
    expect(store.objects.has(r.tree)).toBe(true);
  });

  it('excludes its own cache directory when it lies inside the workspace', async () => {
    const { root } = setup(5);
    const s = snapshotter(root, join(root, '.changeset-cache'));
    const first = await s.snapshot();
    await s.saveCache();
    const second = await s.snapshot();
    expect(second.tree).toBe(first.tree);
    expect(second.files).toBe(5);
  });

  it('reports progress, ending with the file count', async () => {
    const { root, cacheDir } = setup(12);
    const calls: [number, number | undefined][] = [];
    const s = snapshotter(root, cacheDir, { onProgress: (done, total) => calls.push([done, total]) });
    const r = await s.snapshot();
    expect(calls.at(-1)).toEqual([12, 12]);
    expect(r.files).toBe(12);
  });

  it('writes nothing into the cache directory after discard()', async () => {
    const { root, cacheDir } = setup(3);
    const s = snapshotter(root, cacheDir);
    await s.snapshot();
    s.discard();
    const { rmSync, existsSync } = await import('node:fs');
    rmSync(cacheDir, { recursive: true, force: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(cacheDir)).toBe(false);
    expect((await s.snapshot()).hashed).toBe(3);
  });
});
