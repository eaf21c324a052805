/**
 * Change-driven snapshots: with a real file watcher feeding the touched
 * paths, every tree is still exactly git's, however edits race the watcher;
 * a watcher that fails falls back to walking everything, and a verification
 * walk finds and counts what a watcher missed.
 */
import { mkdirSync, realpathSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { DirectoryWatcher } from '../../server/watch/directory-watcher.js';
import { WatchFeed } from '../../server/watch/watch-feed.js';
import { gitEnv, gitTree, initRepo, removeDir, tempDir } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Watched {
  root: string;
  snapshotter: WorkspaceSnapshotter;
  watcher: DirectoryWatcher;
}

async function watchedWorkspace(files: Record<string, string> = {}): Promise<Watched> {
  const base = realpathSync(tempDir('snap-watch-'));
  const root = join(base, 'ws');
  initRepo(root);
  for (const [rel, content] of Object.entries(files)) write(root, rel, content);
  const watcher = DirectoryWatcher.acquire(root);
  const feed = new WatchFeed(watcher);
  const snapshotter = new WorkspaceSnapshotter({
    root,
    cacheDir: join(base, 'cache'),
    store: new MemoryObjectStore(),
    env: { HOME: gitEnv.HOME, XDG_CONFIG_HOME: gitEnv.XDG_CONFIG_HOME },
    changes: feed,
  });
  cleanups.push(async () => {
    feed.close();
    await watcher.release();
    removeDir(base);
  });
  expect(await watcher.ready()).toBe(true);
  return { root, snapshotter, watcher };
}

function write(root: string, rel: string, content: string): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
}

async function expectGitTree(w: Watched): Promise<void> {
  const snap = await w.snapshotter.snapshot();
  expect(snap.tree).toBe(gitTree(w.root));
}

describe('change-driven snapshots', () => {
  it('visit only touched paths, reuse the last snapshot when nothing changed, and match git', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`pkg${i % 5}/dir${i % 7}/f${i}.ts`] = `file ${i}\n`;
    const w = await watchedWorkspace(files);
    await expectGitTree(w);
    expect(w.snapshotter.changeTracking?.fullWalks).toBe(1);

    const again = await w.snapshotter.snapshot();
    expect(again.tree).toBe(gitTree(w.root));
    expect(w.snapshotter.changeTracking?.reused).toBe(1);

    write(w.root, 'pkg1/dir1/f1.ts', 'changed\n');
    const edited = await w.snapshotter.snapshot();
    expect(edited.tree).toBe(gitTree(w.root));
    expect(edited.hashed).toBe(1);
    expect(w.snapshotter.changeTracking).toMatchObject({ incremental: 1, fullWalks: 1 });
  });

  it('see edits made right before the snapshot, with no delay', async () => {
    const w = await watchedWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b' });
    await expectGitTree(w);
    for (let round = 0; round < 5; round++) {
      write(w.root, 'a.txt', `a${round}`);
      write(w.root, `d/new${round}.txt`, 'n');
      unlinkSync(join(w.root, round === 0 ? 'd/b.txt' : `d/new${round - 1}.txt`));
      await expectGitTree(w);
    }
    expect(w.snapshotter.changeTracking).toMatchObject({ fullWalks: 1, incremental: 5 });
  });

  it('match git after a burst of 1000 edits', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) files[`d${i % 20}/f${i}.txt`] = `v0 ${i}`;
    const w = await watchedWorkspace(files);
    await expectGitTree(w);
    for (let i = 0; i < 1000; i++) writeFileSync(join(w.root, `d${i % 20}/f${i}.txt`), `v1 ${i}`);
    await expectGitTree(w);
    expect(w.snapshotter.changeTracking).toMatchObject({ fullWalks: 1, incremental: 1 });
  });

  it('see into directories renamed, moved in or created faster than the watch is set up', async () => {
    const w = await watchedWorkspace({ 'm/n/o/f.txt': 'f', 'keep.txt': 'k' });
    await expectGitTree(w);
    renameSync(join(w.root, 'm'), join(w.root, 'q'));
    await expectGitTree(w);
    // The watch keeps no usable watch below a renamed directory: edits there must still be seen.
    write(w.root, 'q/n/o/f.txt', 'edited after the rename');
    write(w.root, 'q/n/o/g.txt', 'new after the rename');
    await expectGitTree(w);
    const outside = join(w.root, '..', 'outside');
    write(outside, 'x/y/z.txt', 'z');
    renameSync(outside, join(w.root, 'moved-in'));
    await expectGitTree(w);
    write(w.root, 'moved-in/x/y/z.txt', 'edited');
    mkdirSync(join(w.root, 'deep/a/b/c'), { recursive: true });
    write(w.root, 'deep/a/b/c/file.txt', 'deep');
    await expectGitTree(w);
    write(w.root, 'deep/a/b/c/file.txt', 'deep, edited');
    await expectGitTree(w);
    rmSync(join(w.root, 'q'), { recursive: true });
    await expectGitTree(w);
    // Every snapshot after the first followed the watcher: none of them walked everything.
    expect(w.snapshotter.changeTracking).toMatchObject({ fullWalks: 1, incremental: 6 });
  });

  it('re-decide ignored paths when a .gitignore changes', async () => {
    const w = await watchedWorkspace({ '.gitignore': '*.log\nbuild/\n', 'app.log': 'log', 'build/out.js': 'out', 'src/a.ts': 'a' });
    await expectGitTree(w);
    write(w.root, '.gitignore', 'build/\n');
    await expectGitTree(w);
    write(w.root, 'src/.gitignore', 'a.ts\n');
    await expectGitTree(w);
    unlinkSync(join(w.root, '.gitignore'));
    await expectGitTree(w);
    expect(w.snapshotter.changeTracking).toMatchObject({ fullWalks: 1, incremental: 3 });
  });

  it('fall back to walking everything when the watcher fails, and count it', async () => {
    const w = await watchedWorkspace({ 'a.txt': 'a' });
    await expectGitTree(w);
    w.watcher.injectFailure(new Error('simulated watcher failure'));
    write(w.root, 'a.txt', 'changed while the watcher was down');
    write(w.root, 'b.txt', 'new');
    await expectGitTree(w);
    const stats = w.snapshotter.changeTracking!;
    expect(stats.fullWalks).toBe(2);
    expect(stats.lastFullWalkReason).toMatch(/watcher/);
  });

  it('find in a verification walk what the watcher missed, and count it', async () => {
    const w = await watchedWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b' });
    await expectGitTree(w);
    w.watcher.muteForTests(true);
    write(w.root, 'd/b.txt', 'changed unseen');
    write(w.root, 'd/c.txt', 'created unseen');
    // Until the watcher has caught up, the changes' events are still on their way.
    expect(await w.watcher.sync()).toBe(true);
    w.watcher.muteForTests(false);
    expect((await w.snapshotter.verify()).sort()).toEqual(['d/b.txt', 'd/c.txt']);
    expect(w.snapshotter.changeTracking).toMatchObject({ verifications: 1, missed: 2 });
    expect(w.snapshotter.changeTracking?.lastMissed.sort()).toEqual(['d/b.txt', 'd/c.txt']);
    // The verification brought the snapshot up to date.
    await expectGitTree(w);
  });

  it('count nothing missed when every change was reported', async () => {
    const w = await watchedWorkspace({ 'a.txt': 'a' });
    await expectGitTree(w);
    write(w.root, 'a.txt', 'reported');
    expect(await w.snapshotter.verify()).toEqual([]);
    expect(w.snapshotter.changeTracking).toMatchObject({ verifications: 1, missed: 0 });
    await expectGitTree(w);
  });
});
