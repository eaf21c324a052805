/**
 * What a restart does with the record of an operation a crash interrupted:
 * it touches only our own temporary files, in the folders the record names,
 * never deletes a version no record holds, and carries a begun operation to
 * its end with the permissions and modes it was writing.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newIntentId, recoverInterruptedWrites, WriteIntent, type IntendedWrite } from '../../server/disk/write-intent.js';
import { openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
import { blobId } from '../helpers/git-ids.js';
import { TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const stores: WorkspaceStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  temp.cleanup();
});

const names = (id: string) => ({ tmp: `.changeset-${id}.tmp`, aside: `.changeset-${id}.old` });
const intentsIn = (storeRoot: string) => join(storeRoot, 'operations-in-progress');
const nothing = { removed: 0, restored: [], kept: [], finished: [], unfinished: [] };

describe('the record of an operation in progress', () => {
  it('is private to its owner, found where earlier versions left it, and gone once the operation ends', async () => {
    const store = temp.make('store-');
    const intent = await WriteIntent.begin(store, [{ absPath: '/w/a.txt', names: names('aaaaaaaaaaaa') }], { sessionId: 'S1', id: newIntentId() });
    expect(statSync(intentsIn(store)).mode & 0o777).toBe(0o700);
    const [file] = readdirSync(intentsIn(store));
    expect(file).toMatch(/^\d+-[0-9a-f]{8}\.json$/);
    expect(statSync(join(intentsIn(store), file!)).mode & 0o777).toBe(0o600);
    const record = JSON.parse(readFileSync(join(intentsIn(store), file!), 'utf8'));
    expect(record.writes).toEqual([{ absPath: '/w/a.txt', names: names('aaaaaaaaaaaa') }]);
    expect(record.operation.sessionId).toBe('S1');
    expect(record.operation.id).toMatch(/^[0-9a-f]{16}$/);
    await intent.end();
    await intent.end();
    expect(readdirSync(intentsIn(store))).toEqual([]);
  });

  it('records no operation when the write is not part of one', async () => {
    const store = temp.make('store-');
    await WriteIntent.begin(store, []);
    const [file] = readdirSync(intentsIn(store));
    expect(JSON.parse(readFileSync(join(intentsIn(store), file!), 'utf8'))).toEqual({ writes: [] });
  });
});

describe('recovery', () => {
  it('never touches a file a record names that is not one of our temporary names', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    writeFileSync(join(work, 'a.txt'), 'the user’s\n');
    writeFileSync(join(work, 'b.txt'), 'the user’s too\n');
    writeFileSync(join(work, names('aaaaaaaaaaaa').tmp), 'ours\n');
    await WriteIntent.begin(store, [
      { absPath: join(work, 'x.txt'), names: { tmp: 'a.txt', aside: names('aaaaaaaaaaaa').aside } },
      { absPath: join(work, 'y.txt'), names: { tmp: names('aaaaaaaaaaaa').tmp, aside: 'b.txt' } },
    ]);
    expect(await recoverInterruptedWrites(store, [work])).toEqual(nothing);
    expect(readdirSync(work).sort()).toEqual([names('aaaaaaaaaaaa').tmp, 'a.txt', 'b.txt'].sort());
  });

  it('skips a torn or malformed record, and entries it cannot read, and removes the record', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    mkdirSync(intentsIn(store));
    writeFileSync(join(work, names('aaaaaaaaaaaa').tmp), 'ours\n');
    writeFileSync(join(work, names('bbbbbbbbbbbb').tmp), 'ours\n');
    writeFileSync(join(intentsIn(store), '1-torn.json'), '{"writes":[{"absPath":');
    writeFileSync(join(intentsIn(store), '2-no-writes.json'), JSON.stringify({ writes: { absPath: join(work, 'a.txt') } }));
    writeFileSync(
      join(intentsIn(store), '3-entries.json'),
      JSON.stringify({
        writes: [
          null,
          'a.txt',
          { names: names('aaaaaaaaaaaa') },
          { absPath: join(work, 'a.txt') },
          { absPath: join(work, 'a.txt'), names: { tmp: names('aaaaaaaaaaaa').tmp } },
          { absPath: join(work, 'a.txt'), names: { aside: names('aaaaaaaaaaaa').aside } },
          { absPath: join(work, 'b.txt'), names: names('bbbbbbbbbbbb') },
        ],
      }),
    );
    // Not a record: left alone.
    writeFileSync(join(intentsIn(store), 'notes.txt'), 'x');
    expect(await recoverInterruptedWrites(store, [work])).toEqual({ ...nothing, removed: 1 });
    expect(readdirSync(work)).toEqual([names('aaaaaaaaaaaa').tmp]);
    expect(readdirSync(intentsIn(store))).toEqual(['notes.txt']);
  });

  it('does nothing when no operation was in progress', async () => {
    const work = temp.make();
    expect(await recoverInterruptedWrites(temp.make('store-'), [work])).toEqual(nothing);
  });

  it('removes a version set aside that is the one the operation wrote, and keeps a symlink no record holds', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    writeFileSync(join(work, 'a.txt'), 'saved by the user\n');
    writeFileSync(join(work, names('aaaaaaaaaaaa').aside), 'written by the operation\n');
    writeFileSync(join(work, 'b.txt'), 'b now\n');
    symlinkSync('somewhere', join(work, names('bbbbbbbbbbbb').aside));
    writeFileSync(join(work, 'c.txt'), 'c now\n');
    symlinkSync('recorded', join(work, names('cccccccccccc').aside));
    await WriteIntent.begin(store, [
      { absPath: join(work, 'a.txt'), names: names('aaaaaaaaaaaa'), expectedOid: blobId('before\n'), writtenOid: blobId('written by the operation\n') },
      { absPath: join(work, 'b.txt'), names: names('bbbbbbbbbbbb'), expectedOid: blobId('b before\n'), writtenOid: blobId('b after\n') },
      { absPath: join(work, 'c.txt'), names: names('cccccccccccc'), expectedOid: blobId('recorded'), writtenOid: blobId('c after\n') },
    ]);
    const report = await recoverInterruptedWrites(store, [work]);
    expect(report).toEqual({ ...nothing, removed: 2, kept: [join(work, names('bbbbbbbbbbbb').aside)] });
    expect(readdirSync(work).sort()).toEqual([names('bbbbbbbbbbbb').aside, 'a.txt', 'b.txt', 'c.txt'].sort());
    expect(readlinkSync(join(work, names('bbbbbbbbbbbb').aside))).toBe('somewhere');
  });

  it('keeps a temporary file a rollback filled with a symlink someone saved', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    symlinkSync('theirs', join(work, names('aaaaaaaaaaaa').tmp));
    writeFileSync(join(work, names('aaaaaaaaaaaa').aside), 'before\n');
    symlinkSync('ours', join(work, names('bbbbbbbbbbbb').tmp));
    writeFileSync(join(work, names('bbbbbbbbbbbb').aside), 'b before\n');
    await WriteIntent.begin(store, [
      { absPath: join(work, 'a.txt'), names: names('aaaaaaaaaaaa'), expectedOid: blobId('before\n'), writtenOid: blobId('ours') },
      { absPath: join(work, 'b.txt'), names: names('bbbbbbbbbbbb'), expectedOid: blobId('b before\n'), writtenOid: blobId('ours') },
    ]);
    const report = await recoverInterruptedWrites(store, [work]);
    expect(report).toMatchObject({ removed: 1, kept: [join(work, names('aaaaaaaaaaaa').tmp)], restored: [join(work, 'a.txt'), join(work, 'b.txt')] });
    expect(readlinkSync(join(work, names('aaaaaaaaaaaa').tmp))).toBe('theirs');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('before\n');
    expect(readFileSync(join(work, 'b.txt'), 'utf8')).toBe('b before\n');
  });
});

/** A store holding the record of an operation and, unless told otherwise, its safety checkpoint, as a crash mid-operation leaves them. */
async function begun(
  work: string,
  writes: (blob: (text: string) => Promise<string>) => Promise<IntendedWrite[]>,
  opts: { safety?: 'intent' | 'other-intent' | 'none'; rollback?: 'this' | 'other' } = {},
) {
  const store = await openWorkspaceStore({ stateDir: temp.make('state-'), workspaceDir: work });
  stores.push(store);
  const id = newIntentId();
  const list = await writes((text) => store.writeObject('blob', Buffer.from(text)));
  await WriteIntent.begin(store.layout.root, list, { sessionId: 'S1', id });
  const tree = await store.writeObject('tree', new Uint8Array(0));
  const safety = opts.safety ?? 'intent';
  if (safety !== 'none') {
    const intent = safety === 'intent' ? id : newIntentId();
    const record = await store.writeCheckpoint({
      sessionId: 'S1',
      kind: 'safety',
      reason: 'revert',
      details: { operation: 'revert', changeset: 'x', paths: [], intent },
      tree,
    });
    if (opts.rollback) {
      await store.writeCheckpoint({
        sessionId: 'S1',
        kind: 'safety',
        reason: 'rollback',
        details: { operation: 'rollback', changeset: 'x', paths: [], undoes: opts.rollback === 'this' ? record.safetyIndex : record.safetyIndex! + 100 },
        tree,
      });
    }
  }
  await store.flush();
  return store;
}

describe('finishing an operation a crash interrupted', () => {
  it('writes the permissions, owner and mode the operation was writing', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, 'run.sh'), 'echo before\n');
    const store = await begun(work, async (blob) => [
      {
        absPath: join(work, 'a.txt'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: await blob('a before\n'),
        expectedMode: '100644',
        writtenOid: await blob('a after\n'),
        written: { mode: '100644', perm: 0o600, uid: 4321, gid: 5432 },
      },
      {
        absPath: join(work, 'run.sh'),
        names: names('bbbbbbbbbbbb'),
        expectedOid: await blob('echo before\n'),
        expectedMode: '100644',
        writtenOid: await blob('echo after\n'),
        written: { mode: '100755', perm: 0o644 },
      },
      { absPath: join(work, 'new', 'link'), names: names('cccccccccccc'), writtenOid: await blob('../a.txt'), written: { mode: '120000' } },
    ]);
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    expect(report.finished).toEqual([join(work, 'a.txt'), join(work, 'run.sh'), join(work, 'new', 'link')]);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a after\n');
    const a = statSync(join(work, 'a.txt'));
    expect(a.mode & 0o7777).toBe(0o600);
    if (process.getuid?.() === 0) expect([a.uid, a.gid]).toEqual([4321, 5432]);
    expect(statSync(join(work, 'run.sh')).mode & 0o7777).toBe(0o755);
    expect(readlinkSync(join(work, 'new', 'link'))).toBe('../a.txt');
  });

  it('leaves a file whose mode changed since, one that became a folder, and one whose record lacks what to write', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    chmodSync(join(work, 'a.txt'), 0o755);
    mkdirSync(join(work, 'dir'));
    writeFileSync(join(work, 'c.txt'), 'c before\n');
    symlinkSync('target', join(work, 'link'));
    const store = await begun(work, async (blob) => [
      {
        absPath: join(work, 'a.txt'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: await blob('a before\n'),
        expectedMode: '100644',
        writtenOid: await blob('a after\n'),
        written: { mode: '100644' },
      },
      {
        absPath: join(work, 'dir'),
        names: names('bbbbbbbbbbbb'),
        expectedOid: await blob('d before\n'),
        writtenOid: await blob('d after\n'),
        written: { mode: '100644' },
      },
      { absPath: join(work, 'c.txt'), names: names('cccccccccccc'), expectedOid: await blob('c before\n'), writtenOid: await blob('c after\n') },
      {
        absPath: join(work, 'link'),
        names: names('dddddddddddd'),
        expectedOid: await blob('target'),
        expectedMode: '120000',
        writtenOid: await blob('elsewhere'),
        written: { mode: '120000' },
      },
    ]);
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    expect(report.unfinished).toEqual([join(work, 'a.txt'), join(work, 'dir'), join(work, 'c.txt')]);
    expect(report.finished).toEqual([join(work, 'link')]);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a before\n');
    expect(readFileSync(join(work, 'c.txt'), 'utf8')).toBe('c before\n');
    expect(lstatSync(join(work, 'dir')).isDirectory()).toBe(true);
    expect(readlinkSync(join(work, 'link'))).toBe('elsewhere');
  });

  it('counts a file already holding what was written, in the mode it was written, as done', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'run.sh'), 'echo after\n');
    const store = await begun(work, async (blob) => [
      {
        absPath: join(work, 'run.sh'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: await blob('echo after\n'),
        expectedMode: '100644',
        writtenOid: await blob('echo after\n'),
        written: { mode: '100755' },
      },
    ]);
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    // Same content, but not yet the mode written: the mode is finished.
    expect(report.finished).toEqual([join(work, 'run.sh')]);
    expect(statSync(join(work, 'run.sh')).mode & 0o111).not.toBe(0);
  });

  it('finishes only the operation its own record names, and not one a later rollback of it put back', async () => {
    for (const [opts, finished] of [
      [{ safety: 'other-intent' }, false],
      [{ rollback: 'this' }, false],
      [{ rollback: 'other' }, true],
    ] as const) {
      const work = temp.make();
      writeFileSync(join(work, 'a.txt'), 'a before\n');
      const store = await begun(
        work,
        async (blob) => [
          {
            absPath: join(work, 'a.txt'),
            names: names('aaaaaaaaaaaa'),
            expectedOid: await blob('a before\n'),
            expectedMode: '100644',
            writtenOid: await blob('a after\n'),
            written: { mode: '100644' },
          },
        ],
        opts,
      );
      const report = await recoverInterruptedWrites(store.layout.root, [work], store);
      expect(readFileSync(join(work, 'a.txt'), 'utf8'), JSON.stringify(opts)).toBe(finished ? 'a after\n' : 'a before\n');
      expect(report.finished.length).toBe(finished ? 1 : 0);
    }
  });

  it('makes no folder a record names that is gone when the operation was not creating a file there', async () => {
    const work = temp.make();
    const store = await begun(work, async (blob) => [
      {
        absPath: join(work, 'gone', 'a.txt'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: await blob('a before\n'),
        expectedMode: '100644',
        writtenOid: await blob('a after\n'),
        written: { mode: '100644' },
      },
      { absPath: join(work, 'removed', 'b.txt'), names: names('bbbbbbbbbbbb'), expectedOid: await blob('b before\n'), expectedMode: '100644' },
    ]);
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    expect(report.unfinished).toEqual([join(work, 'gone', 'a.txt'), join(work, 'removed', 'b.txt')]);
    expect(readdirSync(work)).toEqual([]);
  });

  it('counts an executable already holding what was written as done', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'run.sh'), 'echo after\n');
    chmodSync(join(work, 'run.sh'), 0o755);
    const store = await begun(work, async (blob) => [
      {
        absPath: join(work, 'run.sh'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: await blob('echo before\n'),
        expectedMode: '100755',
        writtenOid: await blob('echo after\n'),
        written: { mode: '100755' },
      },
    ]);
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    expect(report).toMatchObject({ finished: [], unfinished: [] });
    expect(readFileSync(join(work, 'run.sh'), 'utf8')).toBe('echo after\n');
  });

  it('leaves a file whose new content the store no longer has', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    const store = await begun(work, async (blob) => [
      {
        absPath: join(work, 'a.txt'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: await blob('a before\n'),
        expectedMode: '100644',
        writtenOid: blobId('never stored\n'),
        written: { mode: '100644' },
      },
    ]);
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    expect(report.unfinished).toEqual([join(work, 'a.txt')]);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a before\n');
    expect(existsSync(join(work, names('aaaaaaaaaaaa').tmp))).toBe(false);
  });
});

describe('recovery, cases written from the mutation run', () => {
  const openDescriptors = () => readdirSync('/proc/self/fd').length;

  it('leaves no descriptor open once a record is written, or once records are recovered', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    mkdirSync(join(work, 'src'));
    writeFileSync(join(work, 'src', names('aaaaaaaaaaaa').tmp), 'ours\n');
    const before = openDescriptors();
    await WriteIntent.begin(store, [{ absPath: join(work, 'src', 'a.txt'), names: names('aaaaaaaaaaaa') }]);
    expect(openDescriptors()).toBe(before);
    // Recovery pins the folders the record names (src and the working directory) to clean up in them.
    expect(await recoverInterruptedWrites(store, [work])).toEqual({ ...nothing, removed: 1 });
    expect(openDescriptors()).toBe(before);
    expect(readdirSync(join(work, 'src'))).toEqual([]);
  });

  it('cleans up after a record without an operation while a store is given, finishing nothing', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, names('aaaaaaaaaaaa').tmp), 'a after\n');
    const store = await openWorkspaceStore({ stateDir: temp.make('state-'), workspaceDir: work });
    stores.push(store);
    const written = await store.writeObject('blob', Buffer.from('a after\n'));
    await WriteIntent.begin(store.layout.root, [
      {
        absPath: join(work, 'a.txt'),
        names: names('aaaaaaaaaaaa'),
        expectedOid: blobId('a before\n'),
        expectedMode: '100644',
        writtenOid: written,
        written: { mode: '100644' },
      },
    ]);
    expect(await recoverInterruptedWrites(store.layout.root, [work], store)).toEqual({ ...nothing, removed: 1 });
    expect(readdirSync(work)).toEqual(['a.txt']);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a before\n');
  });

  it('finishes nothing, and still cleans up, when the store fails to list its checkpoints', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, names('aaaaaaaaaaaa').tmp), 'a after\n');
    const real = await openWorkspaceStore({ stateDir: temp.make('state-'), workspaceDir: work });
    stores.push(real);
    const written = await real.writeObject('blob', Buffer.from('a after\n'));
    // Recovery takes the store as an interface (FinishingStore): the real store's objects, with a listing that fails. A real
    // store cannot be made to fail its listing here (the tests run as root, who reads any directory whatever its mode).
    const store = {
      readObject: real.readObject.bind(real),
      listSessionCheckpoints: async () => {
        throw new Error('the checkpoints cannot be read');
      },
    };
    await WriteIntent.begin(
      real.layout.root,
      [
        {
          absPath: join(work, 'a.txt'),
          names: names('aaaaaaaaaaaa'),
          expectedOid: blobId('a before\n'),
          expectedMode: '100644',
          writtenOid: written,
          written: { mode: '100644' },
        },
      ],
      { sessionId: 'S1', id: newIntentId() },
    );
    expect(await recoverInterruptedWrites(real.layout.root, [work], store)).toEqual({ ...nothing, removed: 1 });
    expect(readdirSync(work)).toEqual(['a.txt']);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a before\n');
  });

  it('reads link targets that are not UTF-8 by their bytes, both to clean up and to finish', async () => {
    // 0xFF is never UTF-8: read as text, a target would become the replacement character, another blob.
    const target = Buffer.from([0x74, 0xff]);
    const work = temp.make();
    const store = temp.make('store-');
    writeFileSync(join(work, 'a.txt'), 'a now\n');
    symlinkSync(target, join(work, names('aaaaaaaaaaaa').aside));
    await WriteIntent.begin(store, [
      { absPath: join(work, 'a.txt'), names: names('aaaaaaaaaaaa'), expectedOid: blobId(target), writtenOid: blobId('a now\n') },
    ]);
    // The version set aside is the one the record expected: the store holds it, so it goes.
    expect(await recoverInterruptedWrites(store, [work])).toEqual({ ...nothing, removed: 1 });
    expect(readdirSync(work)).toEqual(['a.txt']);

    const work2 = temp.make();
    symlinkSync(target, join(work2, 'link'));
    const begunStore = await begun(work2, async (blob) => [
      {
        absPath: join(work2, 'link'),
        names: names('bbbbbbbbbbbb'),
        expectedOid: blobId(target),
        expectedMode: '120000',
        writtenOid: await blob('a file now\n'),
        written: { mode: '100644' },
      },
    ]);
    const report = await recoverInterruptedWrites(begunStore.layout.root, [work2], begunStore);
    expect(report).toMatchObject({ finished: [join(work2, 'link')], unfinished: [] });
    expect(readFileSync(join(work2, 'link'), 'utf8')).toBe('a file now\n');
  });
});
