import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectNotFoundError, StoreBusyError, StoreInputError } from '../../server/store/errors.js';
import type { WorkspaceStore } from '../../server/store/index.js';
import { git, gitBytes, useStoreFixture } from './git-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const enc = new TextEncoder();

describe('shadow object store: writing and reading', () => {
  const fx = useStoreFixture();
  let store: WorkspaceStore | undefined;

  it('computes git ids and makes flushed objects readable by git cat-file', async () => {
    store = await fx.open();
    const content = enc.encode('hello world\n');
    const oid = await store.writeObject('blob', content);
    expect(oid).toBe(git(fx.root, ['hash-object', '--stdin'], 'hello world\n').trim());
    await store.flush();
    const shadow = store.layout.shadowDir;
    expect(git(fx.root, ['--git-dir', shadow, 'cat-file', '-p', oid])).toBe('hello world\n');
    expect(git(fx.root, ['--git-dir', shadow, 'cat-file', '-t', oid]).trim()).toBe('blob');
  });

  it('reads buffered objects before flush and writes each object once', async () => {
    store = await fx.open();
    const oid = await store.writeObject('blob', enc.encode('x'));
    expect(await store.hasObject(oid)).toBe(true);
    expect(new TextDecoder().decode((await store.readObject(oid)).content)).toBe('x');
    await store.writeObject('blob', enc.encode('x'));
    await store.flush();
    await store.writeObject('blob', enc.encode('x'));
    await store.flush();
    const packs = (await readdir(join(store.layout.shadowDir, 'objects', 'pack'))).filter((n) => n.endsWith('.pack'));
    expect(packs).toHaveLength(1);
    const count = git(fx.root, ['--git-dir', store.layout.shadowDir, 'count-objects', '-v']);
    expect(count).toMatch(/^in-pack: 1$/m);
  });

  it('copies the caller buffer so later mutation does not change the stored object', async () => {
    store = await fx.open();
    const buf = Buffer.from('original');
    const oid = await store.writeObject('blob', buf);
    buf.write('mutated!');
    await store.flush();
    expect(Buffer.from((await store.readObject(oid)).content).toString()).toBe('original');
  });

  it('flushes thousands of objects as one pack with no loose objects, verified by git', async () => {
    store = await fx.open();
    const oids: string[] = [];
    for (let i = 0; i < 3000; i++) oids.push(await store.writeObject('blob', enc.encode(`file number ${i}\n`.repeat(i % 7))));
    const big = Buffer.alloc(2 * 1024 * 1024, 7);
    oids.push(await store.writeObject('blob', big));
    await store.flush();
    const shadow = store.layout.shadowDir;
    const names = await readdir(join(shadow, 'objects', 'pack'));
    expect(names.filter((n) => n.endsWith('.pack'))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith('.idx'))).toHaveLength(1);
    const looseDirs = (await readdir(join(shadow, 'objects'))).filter((n) => /^[0-9a-f]{2}$/.test(n));
    expect(looseDirs).toEqual([]);
    const pack = names.find((n) => n.endsWith('.pack'))!;
    git(fx.root, ['verify-pack', join(shadow, 'objects', 'pack', pack)]);
    const check = git(fx.root, ['--git-dir', shadow, 'cat-file', '--batch-check'], `${oids.join('\n')}\n`);
    expect(check).not.toContain('missing');
    expect(gitBytes(fx.root, ['--git-dir', shadow, 'cat-file', 'blob', oids.at(-1)!]).equals(big)).toBe(true);
  });

  it('stores trees and commits that git parses', async () => {
    store = await fx.open();
    const blob = await store.writeObject('blob', enc.encode('content\n'));
    const tree = await store.writeObject('tree', Buffer.concat([Buffer.from('100644 a.txt\0'), Buffer.from(blob, 'hex')]));
    const commit = await store.writeObject('commit', enc.encode(`tree ${tree}\nauthor A <a@b> 0 +0000\ncommitter A <a@b> 0 +0000\n\nmsg\n`));
    await store.flush();
    const shadow = store.layout.shadowDir;
    expect(git(fx.root, ['--git-dir', shadow, 'ls-tree', tree])).toBe(`100644 blob ${blob}\ta.txt\n`);
    expect(git(fx.root, ['--git-dir', shadow, 'log', '--format=%s', commit]).trim()).toBe('msg');
  });

  it('reads everything back after a restart', async () => {
    store = await fx.open();
    const oids = [];
    for (let i = 0; i < 200; i++) oids.push(await store.writeObject('blob', enc.encode(`v${i}`)));
    await store.flush();
    const unflushed = await store.writeObject('blob', enc.encode('written just before close'));
    await store.close();
    store = await fx.open();
    for (let i = 0; i < oids.length; i++) {
      expect(Buffer.from((await store.readObject(oids[i]!)).content).toString()).toBe(`v${i}`);
    }
    expect(await store.hasObject(unflushed)).toBe(true);
  });

  it('consolidates many small packs into one', async () => {
    store = await fx.open({ maxPacks: 5 });
    const oids = [];
    for (let i = 0; i < 6; i++) {
      oids.push(await store.writeObject('blob', enc.encode(`pack ${i}`)));
      await store.flush();
    }
    const packs = (await readdir(join(store.layout.shadowDir, 'objects', 'pack'))).filter((n) => n.endsWith('.pack'));
    expect(packs).toHaveLength(1);
    for (const oid of oids) expect((await store.readObject(oid)).type).toBe('blob');
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--no-dangling']);
  });

  it('leaves a dominant pack alone when consolidating, so big stores are not rewritten whole', async () => {
    store = await fx.open({ maxPacks: 5 });
    for (let i = 0; i < 100; i++) await store.writeObject('blob', enc.encode(`bulk ${i}`));
    await store.flush();
    const packDir = join(store.layout.shadowDir, 'objects', 'pack');
    const bulk = (await readdir(packDir)).find((n) => n.endsWith('.pack'))!;
    for (let i = 0; i < 5; i++) {
      await store.writeObject('blob', enc.encode(`small ${i}`));
      await store.flush();
    }
    const packs = (await readdir(packDir)).filter((n) => n.endsWith('.pack'));
    expect(packs).toHaveLength(2);
    expect(packs).toContain(bulk);
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--no-dangling']);
  });

  it('writes an index byte-identical to git index-pack', async () => {
    store = await fx.open();
    for (let i = 0; i < 500; i++) await store.writeObject('blob', enc.encode(`idx ${i}\n`.repeat(i)));
    await store.flush();
    const packDir = join(store.layout.shadowDir, 'objects', 'pack');
    const name = (await readdir(packDir)).find((n) => n.endsWith('.pack'))!;
    const ours = await readFile(join(packDir, name.replace(/\.pack$/, '.idx')));
    git(fx.root, ['index-pack', '-o', join(fx.root, 'oracle.idx'), join(packDir, name)]);
    expect(ours.equals(await readFile(join(fx.root, 'oracle.idx')))).toBe(true);
  });

  it('keeps reads and writes consistent while a flush is in flight', async () => {
    store = await fx.open();
    const first = await Promise.all(Array.from({ length: 300 }, (_, i) => store!.writeObject('blob', enc.encode(`a${i}`))));
    const flushing = store.flush();
    const second = await Promise.all(Array.from({ length: 300 }, (_, i) => store!.writeObject('blob', enc.encode(i % 2 ? `a${i}` : `b${i}`))));
    const reads = await Promise.all([...first, ...second].map((oid) => store!.readObject(oid)));
    await flushing;
    await store.flush();
    expect(reads).toHaveLength(600);
    await store.close();
    store = await fx.open();
    for (const oid of [...first, ...second]) expect(await store.hasObject(oid)).toBe(true);
  });

  it('removes crash leftovers on open and never shows a pack without its index', async () => {
    store = await fx.open();
    const oid = await store.writeObject('blob', enc.encode('survivor'));
    await store.flush();
    await store.close();
    store = undefined;
    const packDir = join(fx.stateDir, 'workspaces');
    const shadow = join(packDir, (await readdir(packDir))[0]!, 'shadow.git', 'objects', 'pack');
    await writeFile(join(shadow, 'tmp_pack_abc123'), 'half written');
    await writeFile(join(shadow, `pack-${'e'.repeat(40)}.pack`), 'renamed before its index');
    store = await fx.open();
    expect((await readdir(shadow)).filter((n) => n.startsWith('tmp_') || n.startsWith('pack-eee'))).toEqual([]);
    expect(Buffer.from((await store.readObject(oid)).content).toString()).toBe('survivor');
  });

  it('rejects bad input with precise errors', async () => {
    store = await fx.open();
    await expect(store.readObject('xyz')).rejects.toBeInstanceOf(StoreInputError);
    await expect(store.hasObject('ABCDEF0123456789ABCDEF0123456789ABCDEF01')).rejects.toThrow(/40 lowercase hex/);
    await expect(store.writeObject('tag' as 'blob', enc.encode('x'))).rejects.toThrow(/blob, tree, commit/);
    await expect(store.writeObject('blob', 'text' as unknown as Uint8Array)).rejects.toThrow(/Uint8Array/);
    await expect(store.readObject('0'.repeat(40))).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(fx.open({ workspaceDir: join(fx.root, 'missing') })).rejects.toThrow(/does not exist/);
  });

  it('refuses a second writer on the same store', async () => {
    store = await fx.open();
    await expect(fx.open()).rejects.toBeInstanceOf(StoreBusyError);
  });

  it('records the workspace path next to the shadow repository', async () => {
    store = await fx.open();
    const record = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(store!.layout.workspaceJson, 'utf8')));
    expect(record.path).toBe(store.workspaceDir);
    expect(store.layout.shadowDir).toMatch(/workspaces[/\\][0-9a-f]{16}[/\\]shadow\.git$/);
  });
});
