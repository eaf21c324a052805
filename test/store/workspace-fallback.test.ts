import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WorkspaceStore } from '../../server/store/index.js';
import { allObjectIds, commitFiles, fingerprint, git, gitBytes, initRepo, useStoreFixture } from './git-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

async function shadowPackCount(store: WorkspaceStore): Promise<number> {
  return (await readdir(join(store.layout.shadowDir, 'objects', 'pack'))).filter((n) => n.endsWith('.pack')).length;
}

/** Every object in `gitDir` reads through the store exactly as git prints it (its type and bytes, from one `git cat-file --batch`). */
async function expectAllReadable(store: WorkspaceStore, gitDir: string, cwd: string): Promise<number> {
  const oids = allObjectIds(gitDir);
  const printed = gitBytes(cwd, ['--git-dir', gitDir, 'cat-file', '--batch'], `${oids.join('\n')}\n`);
  let at = 0;
  for (const oid of oids) {
    // Each object: "<oid> <type> <size>\n", its bytes, "\n".
    const headerEnd = printed.indexOf(0x0a, at);
    const [printedOid, type, size] = printed.toString('latin1', at, headerEnd).split(' ');
    expect(printedOid).toBe(oid);
    const content = printed.subarray(headerEnd + 1, headerEnd + 1 + Number(size));
    at = headerEnd + 1 + Number(size) + 1;
    const object = await store.readObject(oid);
    expect(object.type).toBe(type);
    expect(Buffer.from(object.content).equals(content)).toBe(true);
    expect(await store.hasObject(oid)).toBe(true);
  }
  expect(at).toBe(printed.length);
  return oids.length;
}

describe('shadow object store: workspace repository fallback', () => {
  const fx = useStoreFixture();
  let store: WorkspaceStore | undefined;

  it('reads loose workspace objects and never copies them', async () => {
    initRepo(fx.workspace, { 'a.txt': 'alpha\n', 'src/b.txt': 'beta\n' });
    store = await fx.open();
    const count = await expectAllReadable(store, join(fx.workspace, '.git'), fx.workspace);
    expect(count).toBeGreaterThan(3);
    expect(await store.writeObject('blob', Buffer.from('alpha\n'))).toBe(git(fx.workspace, ['rev-parse', 'HEAD:a.txt']).trim());
    await store.flush();
    expect(await shadowPackCount(store)).toBe(0);
  });

  it('reads delta-compressed objects from a gc-ed pack, ofs and ref deltas alike', async () => {
    initRepo(fx.workspace, { 'big.txt': 'line\n'.repeat(2000) });
    for (let i = 0; i < 12; i++) {
      commitFiles(fx.workspace, { 'big.txt': `${'line\n'.repeat(2000)}change ${i}\n`, [`f${i}.txt`]: `${i}\n` }, `c${i}`);
    }
    git(fx.workspace, ['gc', '-q', '--aggressive', '--prune=now']);
    const packDir = join(fx.workspace, '.git', 'objects', 'pack');
    const pack = (await readdir(packDir)).find((n) => n.endsWith('.pack'))!;
    const verbose = git(fx.workspace, ['verify-pack', '-v', join(packDir, pack)]);
    expect(verbose).toMatch(/chain length = [1-9]/);
    store = await fx.open();
    await expectAllReadable(store, join(fx.workspace, '.git'), fx.workspace);
    // Writing the same content again stores nothing: packed workspace objects are never copied.
    for (const oid of allObjectIds(join(fx.workspace, '.git'))) {
      const object = await store.readObject(oid);
      if (object.type !== 'tag') expect(await store.writeObject(object.type, object.content)).toBe(oid);
    }
    await store.flush();
    expect(await shadowPackCount(store)).toBe(0);
  });

  it('resolves ref-delta entries', async () => {
    initRepo(fx.workspace, { 'big.txt': 'row\n'.repeat(3000) });
    for (let i = 0; i < 5; i++) commitFiles(fx.workspace, { 'big.txt': `${'row\n'.repeat(3000)}edit ${i}\n` }, `e${i}`);
    const gitDir = join(fx.workspace, '.git');
    const ids = allObjectIds(gitDir).join('\n');
    // Without --delta-base-offset pack-objects writes REF_DELTA entries.
    const name = git(fx.workspace, ['pack-objects', '-q', '--window=10', join(gitDir, 'objects', 'pack', 'pack')], `${ids}\n`).trim();
    git(fx.workspace, ['prune-packed']);
    const verbose = git(fx.workspace, ['verify-pack', '-v', join(gitDir, 'objects', 'pack', `pack-${name}.pack`)]);
    expect(verbose).toMatch(/chain length = [1-9]/);
    store = await fx.open();
    await expectAllReadable(store, gitDir, fx.workspace);
  });

  it('follows objects/info/alternates chains', async () => {
    const upstream = join(fx.root, 'upstream');
    await mkdir(upstream);
    initRepo(upstream, { 'shared.txt': 'from upstream\n' });
    git(upstream, ['gc', '-q']);
    const middle = join(fx.root, 'middle');
    git(fx.root, ['clone', '-q', '--shared', upstream, middle]);
    commitFiles(middle, { 'mid.txt': 'middle\n' }, 'middle');
    git(fx.root, ['clone', '-q', '--shared', middle, fx.workspace]);
    commitFiles(fx.workspace, { 'own.txt': 'own\n' }, 'own');
    store = await fx.open();
    const gitDir = join(fx.workspace, '.git');
    await expectAllReadable(store, gitDir, fx.workspace);
    const shared = git(fx.workspace, ['rev-parse', 'HEAD:shared.txt']).trim();
    expect(await store.writeObject('blob', Buffer.from('from upstream\n'))).toBe(shared);
    await store.flush();
    expect(await shadowPackCount(store)).toBe(0);
  });

  it('sees objects the workspace repository gains while the store is open', async () => {
    initRepo(fx.workspace);
    store = await fx.open();
    commitFiles(fx.workspace, { 'later.txt': 'added later\n' }, 'later');
    const later = git(fx.workspace, ['rev-parse', 'HEAD:later.txt']).trim();
    expect(await store.hasObject(later)).toBe(true);
    git(fx.workspace, ['gc', '-q', '--prune=now']);
    expect(Buffer.from((await store.readObject(later)).content).toString()).toBe('added later\n');
  });

  it('finds the repository from a subdirectory and through a worktree', async () => {
    initRepo(fx.workspace, { 'sub/file.txt': 'in sub\n' });
    const sub = join(fx.workspace, 'sub');
    store = await fx.open({ workspaceDir: sub });
    expect(store.gitDir).toBe(join(store.workspaceDir, '..', '.git'));
    const oid = git(fx.workspace, ['rev-parse', 'HEAD:sub/file.txt']).trim();
    expect((await store.readObject(oid)).type).toBe('blob');
    await store.close();
    const tree = join(fx.root, 'wt');
    git(fx.workspace, ['worktree', 'add', '-q', tree]);
    store = await fx.open({ workspaceDir: tree });
    expect((await store.readObject(oid)).type).toBe('blob');
  });

  it('leaves the workspace .git byte-identical after heavy use', async () => {
    initRepo(fx.workspace, { 'a.txt': 'a\n' });
    commitFiles(fx.workspace, { 'b.txt': 'b\n' }, 'b');
    git(fx.workspace, ['gc', '-q']);
    commitFiles(fx.workspace, { 'c.txt': 'c\n' }, 'c');
    await writeFile(join(fx.workspace, 'untracked.txt'), 'u\n');
    const before = await fingerprint(join(fx.workspace, '.git'));
    store = await fx.open();
    for (let i = 0; i < 5000; i++) await store.writeObject('blob', Buffer.from(`object ${i}\n`));
    await store.writeObject('blob', Buffer.from('a\n'));
    await store.flush();
    await expectAllReadable(store, join(fx.workspace, '.git'), fx.workspace);
    const head = git(fx.workspace, ['rev-parse', 'HEAD']).trim();
    // One assertion over the 5,000 lookups: as many separate `expect`s cost more than the lookups.
    let found = 0;
    for (let i = 0; i < 5000; i++) if (await store.hasObject(head)) found++;
    expect(found).toBe(5000);
    await store.close();
    store = undefined;
    expect(await fingerprint(join(fx.workspace, '.git'))).toEqual(before);
  });

  it('makes the shadow repository resolve uncopied workspace objects for stock git', async () => {
    initRepo(fx.workspace, { 'a.txt': 'a\n' });
    store = await fx.open();
    const blob = git(fx.workspace, ['rev-parse', 'HEAD:a.txt']).trim();
    const tree = await store.writeObject('tree', Buffer.concat([Buffer.from('100644 copy.txt\0'), Buffer.from(blob, 'hex')]));
    await store.flush();
    const shadow = store.layout.shadowDir;
    expect(git(fx.root, ['--git-dir', shadow, 'cat-file', '-p', `${tree}:copy.txt`])).toBe('a\n');
    git(fx.root, ['--git-dir', shadow, 'fsck', '--no-dangling']);
  });
});
