/**
 * Trees are byte-identical to `git add -A && git write-tree` on the same
 * files: git itself is the oracle.
 */
import { chmodSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_TREE_OID, WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { gitTree } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { SnapshotFixture, write } from './snapshot-fixture.js';

/** Every test runs twice: walking the tree at each snapshot, and fed by a real file watcher. */
const fixture = new SnapshotFixture();
afterEach(() => fixture.cleanup());
const workspace = () => fixture.workspace();
const snapshotter = (root: string, cacheDir: string, store?: MemoryObjectStore) => fixture.snapshotter(root, cacheDir, store);

describe.each([{ watcher: 'off' }, { watcher: 'on' }])('tree identity with git, file watcher $watcher', ({ watcher }) => {
  beforeEach(() => {
    fixture.watching = watcher === 'on';
  });

  it('matches git for nested directories, odd names, modes, symlinks and binary content', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'README.md', '# hello\n');
    write(root, 'src/index.ts', 'export {};\n');
    write(root, 'src/deep/er/still/file.txt', 'deep\n');
    write(root, 'a.b', '1');
    write(root, 'a/x', '2');
    write(root, 'a0', '3');
    write(root, 'a-', '4');
    write(root, 'with space.txt', 'space');
    write(root, '#hash', 'hash');
    write(root, '-leading-dash', 'dash');
    write(root, 'ünïcödé/日本語.txt', 'unicode');
    write(root, 'emoji-😀.md', 'emoji');
    write(root, '\uE000private', 'bmp private use sorts after astral in UTF-16 but not in UTF-8');
    write(root, 'empty', '');
    write(root, 'binary.bin', Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]));
    write(root, 'crlf.txt', 'line1\r\nline2\r\n');
    write(root, 'tab\there', 'tab');
    write(root, 'script.sh', '#!/bin/sh\necho hi\n');
    chmodSync(join(root, 'script.sh'), 0o755);
    write(root, 'group-exec', 'x');
    chmodSync(join(root, 'group-exec'), 0o654);
    symlinkSync('README.md', join(root, 'link-to-readme'));
    symlinkSync('does/not/exist', join(root, 'dangling'));
    symlinkSync('/etc/hostname', join(root, 'absolute'));
    symlinkSync('src', join(root, 'link-to-dir'));
    mkdirSync(join(root, 'empty-dir/nested-empty'), { recursive: true });

    const snap = await snapshotter(root, cacheDir).snapshot();
    expect(snap.tree).toBe(gitTree(root));
    expect(snap.isGitRepository).toBe(true);
    expect(snap.warnings).toEqual([]);
    expect(snap.files).toBe(23);
  });

  it('sorts names around "/" as git does (ASCII-only names)', async () => {
    const { root, cacheDir } = workspace();
    for (const f of ['a.b', 'a/x', 'a0', 'a-', 'a-b/c', 'a_', 'ab', 'a b', 'A', 'Z/z', '[', '~', 'é', 'foo.c', 'foo/bar', 'foo-bar', 'foo0']) write(root, f, f);
    const snap = await snapshotter(root, cacheDir).snapshot();
    expect(snap.tree).toBe(gitTree(root));
  });

  it('gives the empty tree for an empty workspace and keeps .git out', async () => {
    const { root, cacheDir } = workspace();
    mkdirSync(join(root, 'only-empty-dirs/a/b'), { recursive: true });
    const store = new MemoryObjectStore();
    const snap = await snapshotter(root, cacheDir, store).snapshot();
    expect(snap.tree).toBe(EMPTY_TREE_OID);
    expect(store.objects.has(EMPTY_TREE_OID)).toBe(true);
    expect(snap.files).toBe(0);
  });

  it('writes every blob and tree it references into the store', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'a/b/c.txt', 'c');
    write(root, 'd.txt', 'd');
    const store = new MemoryObjectStore();
    const snap = await snapshotter(root, cacheDir, store).snapshot();
    const { parseTree } = await import('../../server/store/tree.js');
    const visit = async (oid: string): Promise<number> => {
      const o = await store.readObject(oid);
      if (o.type !== 'tree') return 1;
      let n = 0;
      for (const e of parseTree(o.content)) n += await visit(e.oid);
      return n;
    };
    expect(await visit(snap.tree)).toBe(2);
  });

  it('tracks edits, deletions, type changes and mode changes between snapshots', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'keep.txt', 'keep');
    write(root, 'dir/f.txt', 'f');
    write(root, 'becomes-dir', 'file');
    write(root, 'becomes-link', 'file');
    const s = snapshotter(root, cacheDir);
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    const { rmSync, unlinkSync } = await import('node:fs');
    write(root, 'dir/f.txt', 'changed content');
    write(root, 'dir/new.txt', 'new');
    unlinkSync(join(root, 'becomes-dir'));
    write(root, 'becomes-dir/inner', 'inner');
    unlinkSync(join(root, 'becomes-link'));
    symlinkSync('keep.txt', join(root, 'becomes-link'));
    chmodSync(join(root, 'keep.txt'), 0o755);
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    rmSync(join(root, 'dir'), { recursive: true });
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    if (fixture.watching) expect(s.changeTracking?.incremental).toBe(2);
  });

  it('keeps names that are not valid UTF-8 byte-exact', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'plain.txt', 'p');
    const rootBuf = Buffer.from(root);
    // "caf\xe9" in Latin-1: not valid UTF-8.
    writeFileSync(Buffer.concat([rootBuf, Buffer.from('/caf'), Buffer.from([0xe9]), Buffer.from('.txt')]), 'latin-1 name');
    mkdirSync(Buffer.concat([rootBuf, Buffer.from('/dir-'), Buffer.from([0xff])]));
    writeFileSync(Buffer.concat([rootBuf, Buffer.from('/dir-'), Buffer.from([0xff]), Buffer.from('/inner.txt')]), 'inner');
    // Old enough not to be racy, so the second snapshot can trust the cache.
    const past = new Date(Date.now() - 10_000);
    for (const p of [
      join(root, 'plain.txt'),
      Buffer.concat([rootBuf, Buffer.from('/caf'), Buffer.from([0xe9]), Buffer.from('.txt')]),
      Buffer.concat([rootBuf, Buffer.from('/dir-'), Buffer.from([0xff]), Buffer.from('/inner.txt')]),
    ]) {
      utimesSync(p, past, past);
    }
    const s = snapshotter(root, cacheDir);
    const snap = await s.snapshot();
    expect(snap.tree).toBe(gitTree(root));
    expect(snap.files).toBe(3);
    const again = await s.snapshot();
    expect(again.tree).toBe(snap.tree);
    expect(again.hashed).toBe(0);
  });

  it('matches git for Latin-1 file and directory names deep in the tree, byte ignore patterns, a saved cache and edits', async () => {
    const { root, cacheDir } = workspace();
    const at = (...parts: (string | number[])[]): Buffer => Buffer.concat([Buffer.from(root), ...parts.map((p) => Buffer.from(p as string))]);
    const resume = at('/src/r', [0xe9], 'sum', [0xe9]);
    write(root, 'src/plain.txt', 'p');
    mkdirSync(resume, { recursive: true });
    writeFileSync(at('/src/r', [0xe9], 'sum', [0xe9], '/caf', [0xe9], '.txt'), 'nested latin-1\n');
    writeFileSync(at('/src/r', [0xe9], 'sum', [0xe9], '/caf', [0xfe], '.txt'), 'another byte, the same lossy text\n');
    writeFileSync(at('/src/r', [0xe9], 'sum', [0xe9], '/caf', [0xc3, 0xa9], '.txt'), 'the same name in UTF-8\n');
    writeFileSync(at('/src/na', [0xef], 've'), 'a file beside the directory');
    writeFileSync(at('/src/x', [0xff]), 'ff');
    writeFileSync(at('/src/x', [0xe9]), 'e9');
    writeFileSync(at('/src/ignored-', [0xe9], '.log'), 'ignored by a byte pattern');
    writeFileSync(at('/src/ignored-', [0xfe], '.log'), 'not ignored: another byte');
    writeFileSync(at('/src/.gitignore'), Buffer.concat([Buffer.from('ignored-'), Buffer.from([0xe9]), Buffer.from('.log\n')]));
    // Old enough not to be racy, so later snapshots reuse cached listings.
    const past = new Date(Date.now() - 10_000);
    for (const p of [resume, at('/src'), at('')]) utimesSync(p, past, past);
    const s = snapshotter(root, cacheDir);
    const snap = await s.snapshot();
    expect(snap.tree).toBe(gitTree(root));
    expect(snap.files).toBe(9);
    await s.saveCache();

    // A new snapshotter loads the saved cache; new rules are decided on the cached names of an unchanged directory.
    writeFileSync(at('/.gitignore'), Buffer.concat([Buffer.from('caf'), Buffer.from([0xfe]), Buffer.from('.txt\n')]));
    const warm = snapshotter(root, cacheDir);
    const ignored = await warm.snapshot();
    expect(ignored.tree).toBe(gitTree(root));
    expect(ignored.files).toBe(9);

    writeFileSync(at('/src/r', [0xe9], 'sum', [0xe9], '/caf', [0xe9], '.txt'), 'edited\n');
    rmSync(at('/src/x', [0xff]));
    writeFileSync(at('/src/new-', [0xfe]), 'new');
    const after = await warm.snapshot();
    expect(after.tree).toBe(gitTree(root));
    expect(after.tree).not.toBe(ignored.tree);
  });

  it('walks a root given through a symlink at its real location', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'a.txt', 'a');
    const link = join(root, '..', 'link-to-ws');
    symlinkSync(root, link);
    const snap = await snapshotter(link, cacheDir).snapshot();
    expect(snap.tree).toBe(gitTree(root));
    expect(snap.isGitRepository).toBe(true);
  });

  it('rejects invalid options with a precise error', () => {
    const store = new MemoryObjectStore();
    expect(() => new WorkspaceSnapshotter({ root: '', cacheDir: '/x', store })).toThrow(/root/);
    expect(() => new WorkspaceSnapshotter({ root: '/x', cacheDir: '', store })).toThrow(/cacheDir/);
    expect(() => new WorkspaceSnapshotter({ root: '/x', cacheDir: '/y', store: {} as never })).toThrow(/store/);
    expect(() => new WorkspaceSnapshotter({ root: '/x', cacheDir: '/y', store, maxFileBytes: -1 })).toThrow(/maxFileBytes/);
    expect(() => new WorkspaceSnapshotter({ root: '/x', cacheDir: '/y', store, extraExcludes: [1] as never })).toThrow(/extraExcludes/);
  });

  it('fails clearly when the root is not a directory', async () => {
    const { root, cacheDir } = workspace();
    await expect(snapshotter(join(root, 'missing'), cacheDir).snapshot()).rejects.toThrow(/not a directory/);
  });
});
