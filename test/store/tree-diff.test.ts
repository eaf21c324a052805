import { mkdir, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodePathBytes, displayPathBytes, encodePathBytes } from '../../server/path-bytes.js';
import type { WorkspaceStore } from '../../server/store/index.js';
import { parseTree, serializeTree, TreeReader } from '../../server/store/tree.js';
import { diffTrees, type TreeChange } from '../../server/store/tree-diff.js';
import { git, gitBytes, initRepo, useStoreFixture } from './git-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/** `git diff-tree -r` as TreeChange[], the oracle. */
function gitDiffTree(cwd: string, a: string, b: string): TreeChange[] {
  const out = gitBytes(cwd, ['diff-tree', '-r', '-z', '--no-renames', a, b]).toString('utf8');
  const parts = out.split('\0').filter((p) => p !== '');
  const changes: TreeChange[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const [srcMode, dstMode, srcOid, dstOid] = parts[i]!.slice(1).split(' ');
    const change: TreeChange = { path: parts[i + 1]! };
    if (srcMode !== '000000') change.before = { oid: srcOid!, mode: srcMode! };
    if (dstMode !== '000000') change.after = { oid: dstOid!, mode: dstMode! };
    changes.push(change);
  }
  return changes;
}

describe('tree parsing and tree diff', () => {
  const fx = useStoreFixture();
  let store: WorkspaceStore | undefined;

  it('parses trees like git ls-tree and serialises them like git mktree', async () => {
    initRepo(fx.workspace, { 'b.txt': 'b\n', 'a-b': 'x\n', 'a/inner.txt': 'i\n', 'a.txt': 'y\n', 'ünï.txt': 'u\n' });
    store = await fx.open();
    const tree = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();
    const entries = parseTree((await store.readObject(tree)).content);
    const lsTree = git(fx.workspace, ['-c', 'core.quotepath=false', 'ls-tree', tree]).trim().split('\n');
    expect(entries.map((e) => `${e.mode} ${e.kind} ${e.oid}\t${e.name}`)).toEqual(lsTree);
    const rebuilt = serializeTree([...entries].reverse());
    expect(Buffer.from((await store.readObject(tree)).content).equals(rebuilt)).toBe(true);
  });

  it('matches git diff-tree -r for adds, deletes, edits, mode and type changes, symlinks and gitlinks', async () => {
    initRepo(fx.workspace, {
      'keep.txt': 'same\n',
      'edit.txt': 'old\n',
      'gone.txt': 'bye\n',
      'becomes-dir': 'file first\n',
      'dir-becomes-file/x.txt': 'x\n',
      'deep/a/b/c.txt': 'c\n',
      'deep/a/b/unchanged.txt': 'u\n',
      'a-b': '1\n',
      'a.txt': '2\n',
      'a/z.txt': '3\n',
      'exec.sh': 'echo\n',
      'space name.txt': 'sp\n',
    });
    await symlink('keep.txt', join(fx.workspace, 'link'));
    git(fx.workspace, ['add', '-A']);
    git(fx.workspace, ['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`]);
    git(fx.workspace, ['commit', '-q', '-m', 'before']);
    const before = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();

    await writeFile(join(fx.workspace, 'edit.txt'), 'new\n');
    await rm(join(fx.workspace, 'gone.txt'));
    await rm(join(fx.workspace, 'becomes-dir'));
    await mkdir(join(fx.workspace, 'becomes-dir'));
    await writeFile(join(fx.workspace, 'becomes-dir', 'inside.txt'), 'now a dir\n');
    await rm(join(fx.workspace, 'dir-becomes-file'), { recursive: true });
    await writeFile(join(fx.workspace, 'dir-becomes-file'), 'now a file\n');
    await writeFile(join(fx.workspace, 'deep/a/b/c.txt'), 'c2\n');
    await writeFile(join(fx.workspace, 'new.txt'), 'added\n');
    await writeFile(join(fx.workspace, 'a/new.txt'), 'added in a\n');
    await chmod(join(fx.workspace, 'exec.sh'), 0o755);
    await rm(join(fx.workspace, 'link'));
    await writeFile(join(fx.workspace, 'link'), 'link became a file\n');
    git(fx.workspace, ['add', '-A']);
    git(fx.workspace, ['update-index', '--add', '--cacheinfo', `160000,${'2'.repeat(40)},sub`]);
    git(fx.workspace, ['commit', '-q', '-m', 'after']);
    const after = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();

    store = await fx.open();
    const expected = gitDiffTree(fx.workspace, before, after);
    expect(expected.length).toBeGreaterThan(10);
    expect(await diffTrees(store, before, after)).toEqual(expected);
    expect(await diffTrees(store, after, before)).toEqual(gitDiffTree(fx.workspace, after, before));
    expect(await diffTrees(store, before, before)).toEqual([]);
    const all = await diffTrees(store, undefined, after);
    expect(all.every((c) => c.after && !c.before)).toBe(true);
    expect(all.map((c) => c.path)).toEqual(git(fx.workspace, ['-c', 'core.quotepath=false', 'ls-tree', '-r', '--name-only', after]).trim().split('\n'));
  });

  it('diffs trees written to the shadow store and reuses a TreeReader cache', async () => {
    store = await fx.open();
    const blob = (s: string) => store!.writeObject('blob', Buffer.from(s));
    const dir = async (files: Record<string, string>) =>
      store!.writeObject(
        'tree',
        serializeTree(await Promise.all(Object.entries(files).map(async ([name, c]) => ({ mode: '100644', name, oid: await blob(c) })))),
      );
    const sub1 = await dir({ 'x.txt': 'x1', 'y.txt': 'y' });
    const sub2 = await dir({ 'x.txt': 'x2', 'y.txt': 'y' });
    const t1 = await store.writeObject('tree', serializeTree([{ mode: '040000', name: 'sub', oid: sub1 }]));
    const t2 = await store.writeObject('tree', serializeTree([{ mode: '040000', name: 'sub', oid: sub2 }]));
    const reader = new TreeReader(store);
    const changes = await diffTrees(reader, t1, t2);
    expect(changes).toEqual([{ path: 'sub/x.txt', before: { oid: await blob('x1'), mode: '100644' }, after: { oid: await blob('x2'), mode: '100644' } }]);
    await store.flush();
    expect(gitDiffTree(store.layout.shadowDir, t1, t2)).toEqual(changes);
  });

  it('names entries that are not UTF-8 by their exact bytes: parsed, diffed and serialised like git', async () => {
    initRepo(fx.workspace, { 'README.md': 'r\n' });
    const at = (...parts: (string | number[])[]) => Buffer.concat([Buffer.from(`${fx.workspace}/`), ...parts.map((p) => Buffer.from(p as string))]);
    await mkdir(at('dir-', [0xff]));
    await writeFile(at('caf', [0xe9], '.txt'), 'e9\n');
    await writeFile(at('caf', [0xfe], '.txt'), 'fe\n');
    await writeFile(at('caf', [0xc3, 0xa9], '.txt'), 'utf-8\n');
    await writeFile(at('dir-', [0xff], '/in', [0xe9]), 'in\n');
    git(fx.workspace, ['add', '-A']);
    git(fx.workspace, ['commit', '-q', '-m', 'before']);
    const before = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();
    await writeFile(at('caf', [0xe9], '.txt'), 'e9 edited\n');
    await rm(at('caf', [0xfe], '.txt'));
    await writeFile(at('dir-', [0xff], '/in', [0xe9]), 'in edited\n');
    git(fx.workspace, ['add', '-A']);
    git(fx.workspace, ['commit', '-q', '-m', 'after']);
    const after = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();

    store = await fx.open();
    const content = Buffer.from((await store.readObject(before)).content);
    const entries = parseTree(content);
    expect(entries.map((e) => Buffer.from(e.nameBytes).toString('hex'))).toEqual(entries.map((e) => encodePathBytes(e.name).toString('hex')));
    expect(new Set(entries.map((e) => e.name)).size).toBe(entries.length);
    expect(serializeTree([...entries].reverse()).equals(content)).toBe(true);

    // git's paths as bytes, decoded the same way.
    const raw = gitBytes(fx.workspace, ['diff-tree', '-r', '-z', '--name-only', before, after]);
    const gitPaths = raw
      .toString('latin1')
      .split('\0')
      .filter((p) => p !== '')
      .map((p) => decodePathBytes(Buffer.from(p, 'latin1')));
    const changes = await diffTrees(store, before, after);
    expect(changes.map((c) => c.path)).toEqual(gitPaths);
    expect(changes.map((c) => displayPathBytes(c.path))).toEqual(['caf\\xe9.txt', 'caf\\xfe.txt', 'dir-\\xff/in\\xe9']);
  });

  it('rejects ids that are not trees', async () => {
    store = await fx.open();
    const blob = await store.writeObject('blob', Buffer.from('not a tree'));
    await expect(diffTrees(store, blob, undefined)).rejects.toThrow(/not a tree/);
    await expect(diffTrees(store, 'nope', undefined)).rejects.toThrow(/treeA must be 40 lowercase hex/);
  });
});
