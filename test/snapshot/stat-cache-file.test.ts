/** The stat cache file: lossless round trip, and refusal of foreign or damaged files. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadStatCache, saveStatCache, type CachedEntry, type DirState } from '../../server/snapshot/stat-cache.js';
import { removeDir, tempDir } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop()!);
});

function entry(name: string, extra: Partial<CachedEntry> = {}): CachedEntry {
  return {
    name,
    raw: undefined,
    kind: 1,
    status: 0,
    mode: 0o100644,
    size: 12,
    // biome-ignore lint/correctness/noPrecisionLoss: a time with more digits than a double keeps, as lstat can report
    mtimeMs: 1700000000123.4567,
    ctimeMs: 1700000000999.25,
    ino: 4242,
    oid: 'a'.repeat(40),
    lfs: false,
    eol: 0,
    dir: undefined,
    ...extra,
  };
}

function dir(entries: CachedEntry[], extra: Partial<DirState> = {}): DirState {
  return {
    mtimeMs: 1.5,
    ctimeMs: 2.5,
    ino: 7,
    rulesKey: 'k',
    entries,
    tree: 'b'.repeat(40),
    files: entries.length,
    hasDotGit: false,
    nestedRepo: false,
    ...extra,
  };
}

describe('stat cache file', () => {
  it('round-trips every field, raw names and nested directories', () => {
    const base = tempDir();
    dirs.push(base);
    const file = join(base, 'cache.bin');
    const inner = dir([entry('x.bin', { lfs: true, oid: 'c'.repeat(40) }), entry('ignored', { status: 1, oid: undefined, mode: 0 })], {
      rulesKey: 'other',
      tree: undefined,
      hasDotGit: true,
    });
    const repo = dir([], { nestedRepo: true, hasDotGit: true, tree: undefined, rulesKey: '' });
    const root = dir([
      entry('a.txt'),
      entry('caf\uDCE9', { raw: Buffer.from([0x63, 0x61, 0x66, 0xe9]) }),
      entry('sub', { kind: 3, mode: 0o040000, oid: 'd'.repeat(40), dir: inner }),
      entry('link', { kind: 2, mode: 0o120000 }),
      entry('repo', { kind: 3, mode: 0o160000, oid: 'e'.repeat(40), dir: repo }),
      entry('日本語.txt', { mtimeMs: NaN }),
    ]);
    saveStatCache(file, 'id-1', 123.5, root);
    const loaded = loadStatCache(file, 'id-1');
    expect(loaded?.refTimeMs).toBe(123.5);
    expect(loaded?.root).toEqual(root);
  });

  it('ignores a cache written for another identity, or damaged', () => {
    const base = tempDir();
    dirs.push(base);
    const file = join(base, 'cache.bin');
    saveStatCache(file, 'id-1', 1, dir([entry('a')]));
    expect(loadStatCache(file, 'id-2')).toBeUndefined();
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, bytes.length - 3));
    expect(loadStatCache(file, 'id-1')).toBeUndefined();
    expect(loadStatCache(join(base, 'missing.bin'), 'id-1')).toBeUndefined();
  });
});
