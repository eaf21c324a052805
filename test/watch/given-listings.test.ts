/**
 * The first snapshot takes the directory listings the file watcher read as
 * it set itself up, instead of listing every directory a second time, and
 * its trees are still exactly git's: a directory that changed after the
 * watcher listed it is read again, in that snapshot or the next one, and
 * the stat cache saved after it never trusts a listing a later change made
 * stale.
 */
import { mkdirSync, realpathSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileSystemClock, WorkspaceSnapshotter, type ListingSource } from '../../server/snapshot/index.js';
import { SnapshotWatch } from '../../server/watch/snapshot-watch.js';
import { git, gitEnv, gitTree, initRepo, removeDir, tempDir } from '../snapshot/helpers.js';
import { MemoryObjectStore } from '../snapshot/memory-store.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const env = { HOME: gitEnv.HOME, XDG_CONFIG_HOME: gitEnv.XDG_CONFIG_HOME };

function write(root: string, rel: string, content: string): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}

/** A committed repository of 20 directories of 10 files, its watcher set up the way a working directory's is. */
async function watched(): Promise<{ root: string; base: string; store: MemoryObjectStore; watch: SnapshotWatch; source: ListingSource; given: string[] }> {
  const base = realpathSync(tempDir('given-listings-'));
  const root = join(base, 'ws');
  initRepo(root);
  for (let i = 0; i < 200; i++) write(root, `pkg${i % 4}/dir${i % 20}/f${i}.ts`, `file ${i}\n`);
  write(root, '.gitignore', 'build/\n');
  write(root, 'build/out.js', 'ignored\n');
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', 'initial']);
  const clock = fileSystemClock(join(base, 'cache'));
  const watch = SnapshotWatch.open(root, join(base, 'state'), { verifyIdleMs: 600_000 })!;
  cleanups.push(async () => {
    await watch.close();
    removeDir(base);
  });
  expect(await watch.watcher.ready()).toBe(true);
  const inner = watch.listings(clock);
  // The listings the walk took, observed on their way to it.
  const given: string[] = [];
  const source: ListingSource = {
    clockMs: inner.clockMs,
    take: (dir) => {
      const listing = inner.take(dir);
      if (listing) given.push(dir.slice(root.length));
      return listing;
    },
    release: () => inner.release(),
  };
  return { root, base, store: new MemoryObjectStore(), watch, source, given };
}

describe('listings the watcher read as it set itself up', () => {
  it('are what the first snapshot takes instead of listing each directory again, and its tree is git’s', async () => {
    const w = await watched();
    const snapshotter = new WorkspaceSnapshotter({
      root: w.root,
      cacheDir: join(w.base, 'cache'),
      store: w.store,
      env,
      changes: w.watch.feed,
      listings: w.source,
    });
    const snap = await snapshotter.snapshot();
    expect(snap.tree).toBe(gitTree(w.root));
    // Every directory the walk entered: the root, 4 packages and 20 directories under them (not the ignored build/).
    expect(new Set(w.given).size).toBe(w.given.length);
    expect(w.given.length).toBeGreaterThanOrEqual(25);
    expect(w.given).not.toContain('/build');
    // A listing serves one walk: the next full walk lists for itself.
    expect(w.source.take(`${w.root}/pkg0`)).toBeUndefined();
  });

  it('are not taken for directories changed after they were listed, whose changes the snapshot shows', async () => {
    const w = await watched();
    write(w.root, 'pkg0/dir0/new.ts', 'new\n');
    unlinkSync(join(w.root, 'pkg1/dir1/f1.ts'));
    renameSync(join(w.root, 'pkg2/dir2'), join(w.root, 'pkg2/moved'));
    write(w.root, 'pkg3/fresh/inside.ts', 'inside\n');
    rmSync(join(w.root, 'pkg3/dir3'), { recursive: true });
    writeFileSync(join(w.root, 'pkg0/dir4/f4.ts'), 'edited\n');
    const snapshotter = new WorkspaceSnapshotter({
      root: w.root,
      cacheDir: join(w.base, 'cache'),
      store: w.store,
      env,
      changes: w.watch.feed,
      listings: w.source,
    });
    const snap = await snapshotter.snapshot();
    expect(snap.tree).toBe(gitTree(w.root));
    for (const changed of ['/pkg0/dir0', '/pkg1/dir1', '/pkg2', '/pkg3']) expect(w.given).not.toContain(changed);
    expect(w.given).toContain('/pkg1/dir5');
  });

  it('leave a stat cache that a later walk without the watcher trusts only where nothing changed', async () => {
    const w = await watched();
    const snapshotter = new WorkspaceSnapshotter({
      root: w.root,
      cacheDir: join(w.base, 'cache'),
      store: w.store,
      env,
      changes: w.watch.feed,
      listings: w.source,
    });
    expect((await snapshotter.snapshot()).tree).toBe(gitTree(w.root));
    await snapshotter.saveCache();
    // Changes right after, in directories whose listings the walk took: a walk from the saved cache must see them.
    write(w.root, 'pkg0/dir0/late.ts', 'late\n');
    unlinkSync(join(w.root, 'pkg1/dir5/f5.ts'));
    write(w.root, 'pkg2/dir2/f2.ts', 'changed\n');
    const cold = new WorkspaceSnapshotter({ root: w.root, cacheDir: join(w.base, 'cache'), store: w.store, env });
    expect((await cold.snapshot()).tree).toBe(gitTree(w.root));
  });

  it('are kept only from a set-up that began after the clock was read', async () => {
    const w = await watched();
    const later = fileSystemClock(join(w.base, 'cache'));
    expect(w.watch.listings(later).take(`${w.root}/pkg0`)).toBeUndefined();
    expect(w.source.take(`${w.root}/pkg0`)).toBeDefined();
  });
});
