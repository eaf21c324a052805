import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceSnapshotter, type SnapshotResult } from '../../server/snapshot/index.js';
import { removeDir, tempDir, testHome } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { runChild } from './run-child.js';

/** A file's entry (mode and blob id) in a snapshot's top-level tree, or undefined. */
async function entryOf(store: MemoryObjectStore, result: SnapshotResult, name: string): Promise<string | undefined> {
  const { content } = await store.readObject(result.tree);
  let i = 0;
  while (i < content.length) {
    const space = content.indexOf(0x20, i);
    const nul = content.indexOf(0, space);
    const entryName = Buffer.from(content.subarray(space + 1, nul)).toString('utf8');
    const oid = Buffer.from(content.subarray(nul + 1, nul + 21)).toString('hex');
    if (entryName === name) return `${Buffer.from(content.subarray(i, space)).toString('latin1')} ${oid}`;
    i = nul + 21;
  }
  return undefined;
}

describe('files present but not readable are not deletions', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) {
      execFileSync('chmod', ['-R', 'u+rwX', d]);
      removeDir(d);
    }
  });

  function setup(maxFileBytes?: number) {
    const base = tempDir('snap-unread-');
    dirs.push(base);
    const root = join(base, 'ws');
    mkdirSync(root);
    const store = new MemoryObjectStore();
    const snapshotter = new WorkspaceSnapshotter({
      root,
      cacheDir: join(base, 'cache'),
      store,
      env: { HOME: testHome },
      ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
    });
    return { base, root, store, snapshotter };
  }

  it('a file grown past maxFileBytes keeps its last content and is reported as oversized', async () => {
    const { root, store, snapshotter } = setup(100);
    writeFileSync(join(root, 'log.txt'), 'a'.repeat(50));
    writeFileSync(join(root, 'other.txt'), 'other\n');
    const first = await snapshotter.snapshot();
    expect(first.unread).toEqual([]);
    const before = await entryOf(store, first, 'log.txt');
    expect(before).toMatch(/^100644 /);

    writeFileSync(join(root, 'log.txt'), 'b'.repeat(200));
    writeFileSync(join(root, 'huge-new.txt'), 'c'.repeat(300));
    const second = await snapshotter.snapshot();
    expect(second.tree).toBe(first.tree);
    expect(await entryOf(store, second, 'log.txt')).toBe(before);
    expect(second.unread).toEqual([
      { path: 'huge-new.txt', reason: 'oversized', size: 300, kept: false },
      { path: 'log.txt', reason: 'oversized', size: 200, kept: true },
    ]);
    expect(second.warnings).toContainEqual({ path: 'log.txt', message: 'larger than maxFileBytes (200 > 100); kept the content last read' });
    expect(second.warnings).toContainEqual({ path: 'huge-new.txt', message: 'larger than maxFileBytes (300 > 100); not recorded' });

    // Still oversized: still kept and reported; back under the limit: read again.
    const third = await snapshotter.snapshot();
    expect(third.tree).toBe(first.tree);
    expect(third.unread.map((u) => u.path)).toEqual(['huge-new.txt', 'log.txt']);
    writeFileSync(join(root, 'log.txt'), 'd'.repeat(60));
    const fourth = await snapshotter.snapshot();
    expect(await entryOf(store, fourth, 'log.txt')).not.toBe(before);
    expect(fourth.unread.map((u) => u.path)).toEqual(['huge-new.txt']);
  });

  it('a regular file replaced by a FIFO keeps its last content and is reported as not-a-file', async () => {
    const { root, store, snapshotter } = setup();
    writeFileSync(join(root, 'notes.txt'), 'notes\n');
    const first = await snapshotter.snapshot();
    const before = await entryOf(store, first, 'notes.txt');
    expect(before).toBeDefined();

    rmSync(join(root, 'notes.txt'));
    execFileSync('mkfifo', [join(root, 'notes.txt')]);
    execFileSync('mkfifo', [join(root, 'new-pipe')]);
    const second = await snapshotter.snapshot();
    expect(second.tree).toBe(first.tree);
    expect(second.unread).toEqual([{ path: 'notes.txt', reason: 'not-a-file', kept: true }]);
    // A FIFO that never was a regular file is not a file of the workspace, as for git.
    expect(await entryOf(store, second, 'new-pipe')).toBeUndefined();
    const third = await snapshotter.snapshot();
    expect(third.tree).toBe(first.tree);
    expect(third.unread).toEqual([{ path: 'notes.txt', reason: 'not-a-file', kept: true }]);

    rmSync(join(root, 'notes.txt'));
    writeFileSync(join(root, 'notes.txt'), 'notes again\n');
    const fourth = await snapshotter.snapshot();
    expect(fourth.unread).toEqual([]);
    expect(await entryOf(store, fourth, 'notes.txt')).not.toBe(before);
  });

  it('a file made unreadable keeps its last content and is reported as unreadable (as an unprivileged user)', () => {
    const base = tempDir('snap-unread-');
    dirs.push(base);
    const root = join(base, 'ws');
    const cacheDir = join(base, 'cache');
    mkdirSync(root);
    writeFileSync(join(root, 'secret.txt'), 'secret\n');
    writeFileSync(join(root, 'plain.txt'), 'plain\n');
    let opts = {};
    // chmod 000 does not stop root: run the snapshots as "nobody" so the permission check is real.
    if (process.getuid?.() === 0) {
      chmodSync(base, 0o755);
      mkdirSync(cacheDir);
      chownSync(cacheDir, 65534, 65534);
      opts = { uid: 65534, gid: 65534 };
    }
    const [first] = runChild({ root, cacheDir, home: base }, opts);
    expect(first!.unread).toEqual([]);
    chmodSync(join(root, 'secret.txt'), 0o000);
    // A new process: the content last read comes from the persisted stat cache.
    const [second] = runChild({ root, cacheDir, home: base }, opts);
    expect(second!.tree).toBe(first!.tree);
    expect(second!.unread).toEqual([{ path: 'secret.txt', reason: 'unreadable', kept: true }]);
    expect(second!.warnings).toEqual([{ path: 'secret.txt', message: 'permission denied; kept the content last read' }]);
  });
});
