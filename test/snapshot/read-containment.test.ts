/**
 * A snapshot reads only files inside the directory it records: a folder
 * swapped for a link to somewhere else between the walk listing it and
 * reading a file in it must not bring the other place's content into the
 * store. The swap lands at the exact moment through the walker's
 * `beforeRead` hook.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashObject, WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { removeDir, tempDir, testHome } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';

const SECRET = 'secret kept outside the workspace\n';

describe('snapshot reads stay inside the recorded directory', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) removeDir(d);
  });

  function setup(lfs: boolean) {
    const base = tempDir('snap-contained-');
    dirs.push(base);
    const root = join(base, 'ws');
    const outside = join(base, 'outside');
    mkdirSync(join(root, 'src'), { recursive: true });
    mkdirSync(outside);
    if (lfs) writeFileSync(join(root, '.gitattributes'), '*.txt filter=lfs\n');
    writeFileSync(join(root, 'src', 'notes.txt'), 'inside\n');
    writeFileSync(join(outside, 'notes.txt'), SECRET);
    const store = new MemoryObjectStore();
    let swapped = false;
    const snapshotter = new WorkspaceSnapshotter({
      root,
      cacheDir: join(base, 'cache'),
      store,
      env: { HOME: testHome },
      hooks: {
        beforeRead: (path) => {
          if (swapped || path !== 'src/notes.txt') return;
          swapped = true;
          renameSync(join(root, 'src'), join(base, 'src-moved'));
          symlinkSync(outside, join(root, 'src'));
        },
      },
    });
    return { store, snapshotter, wasSwapped: () => swapped };
  }

  for (const lfs of [false, true]) {
    it(`does not read a file through a folder swapped for a link outside mid-walk${lfs ? ' (an LFS file, streamed)' : ''}`, async () => {
      const { store, snapshotter, wasSwapped } = setup(lfs);
      const result = await snapshotter.snapshot();
      expect(wasSwapped()).toBe(true);
      const secretIds = [hashObject('blob', Buffer.from(SECRET))];
      expect([...store.objects.keys()].filter((oid) => secretIds.includes(oid))).toEqual([]);
      for (const object of store.objects.values()) expect(Buffer.from(object.content).includes(Buffer.from('secret kept outside'))).toBe(false);
      // Reported as not read, with the reason, never as content.
      expect(result.unread.map((u) => [u.path, u.reason])).toEqual([['src/notes.txt', 'unreadable']]);
      expect(result.warnings.map((w) => w.message).join('\n')).toContain('leads outside the working directory');
    });
  }
});
