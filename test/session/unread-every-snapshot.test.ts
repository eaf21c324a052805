/**
 * A file present but not read (here: over a lowered `maxFileBytes`) is in
 * the `unread` list of every snapshot, change-driven ones included: the
 * states a session records say it is there, so it never shows as added or
 * deleted against one of them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { DirectoryWatcher } from '../../server/watch/directory-watcher.js';
import { WatchFeed } from '../../server/watch/watch-feed.js';
import { MemoryObjectStore } from '../snapshot/memory-store.js';
import { TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
  temp.cleanup();
});

describe('a file not read', () => {
  it('is listed as unread by change-driven snapshots that do not visit its directory', async () => {
    const root = temp.make('cs-unread-watch-');
    mkdirSync(join(root, 'data'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'data', 'big.bin'), Buffer.alloc(300, 0x61));
    writeFileSync(join(root, 'data', 'small.txt'), 'small\n');
    writeFileSync(join(root, 'src', 'a.txt'), 'one\n');
    const watcher = DirectoryWatcher.acquire(root);
    const feed = new WatchFeed(watcher);
    cleanups.push(async () => {
      feed.close();
      await watcher.release();
    });
    expect(await watcher.ready()).toBe(true);
    const snapshotter = new WorkspaceSnapshotter({ root, cacheDir: temp.make('cs-cache-'), store: new MemoryObjectStore(), maxFileBytes: 100, changes: feed });
    const never = { path: 'data/big.bin', reason: 'oversized', size: 300, kept: false };

    expect((await snapshotter.snapshot()).unread).toEqual([never]);
    writeFileSync(join(root, 'src', 'a.txt'), 'two\n');
    const next = await snapshotter.snapshot();
    expect(snapshotter.changeTracking).toMatchObject({ incremental: 1, fullWalks: 1 });
    expect(next.unread).toEqual([never]);
    // Nothing changed: the last snapshot is reused, with its list.
    expect((await snapshotter.snapshot()).unread).toEqual([never]);
  });
});
