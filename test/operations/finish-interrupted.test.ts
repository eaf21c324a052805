import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newIntentId, recoverInterruptedWrites, WriteIntent, type IntendedWrite } from '../../server/disk/write-intent.js';
import { openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
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

/**
 * A workspace in the state a SIGKILL left an operation in: a.txt still
 * before, b.txt already written, c.txt saved by the user since, d/new.txt
 * not yet created, e.txt not yet removed; gone/ emptied by the operation,
 * kept/ holding a file of the user's.
 */
async function interrupted(record: 'none' | 'written' | 'rolled back') {
  const work = temp.make();
  const store = await openWorkspaceStore({ stateDir: temp.make('state-'), workspaceDir: work });
  stores.push(store);
  const blob = (text: string) => store.writeObject('blob', Buffer.from(text));
  writeFileSync(join(work, 'a.txt'), 'a before\n');
  writeFileSync(join(work, 'b.txt'), 'b after\n');
  writeFileSync(join(work, 'c.txt'), 'c saved by the user\n');
  writeFileSync(join(work, 'e.txt'), 'e before\n');
  mkdirSync(join(work, 'gone'));
  mkdirSync(join(work, 'kept'));
  writeFileSync(join(work, 'kept', 'mine.txt'), 'the user\n');
  const id = newIntentId();
  const writes: IntendedWrite[] = [
    {
      absPath: join(work, 'a.txt'),
      names: names('aaaaaaaaaaaa'),
      expectedOid: await blob('a before\n'),
      expectedMode: '100644',
      writtenOid: await blob('a after\n'),
      written: { mode: '100644' },
    },
    {
      absPath: join(work, 'b.txt'),
      names: names('bbbbbbbbbbbb'),
      expectedOid: await blob('b before\n'),
      expectedMode: '100644',
      writtenOid: await blob('b after\n'),
      written: { mode: '100644' },
    },
    {
      absPath: join(work, 'c.txt'),
      names: names('cccccccccccc'),
      expectedOid: await blob('c before\n'),
      expectedMode: '100644',
      writtenOid: await blob('c after\n'),
      written: { mode: '100644' },
    },
    { absPath: join(work, 'd', 'new.txt'), names: names('dddddddddddd'), writtenOid: await blob('d new\n'), written: { mode: '100755' } },
    { absPath: join(work, 'e.txt'), names: names('eeeeeeeeeeee'), expectedOid: await blob('e before\n'), expectedMode: '100644' },
  ];
  await WriteIntent.begin(store.layout.root, writes, { sessionId: 'S1', id, removeDirs: [join(work, 'gone'), join(work, 'kept')] });
  const tree = await store.writeObject('tree', new Uint8Array(0));
  if (record !== 'none') {
    const safety = await store.writeCheckpoint({
      sessionId: 'S1',
      kind: 'safety',
      reason: 'revert',
      details: { operation: 'revert', changeset: 'x', paths: [], intent: id },
      tree,
    });
    if (record === 'rolled back') {
      await store.writeCheckpoint({
        sessionId: 'S1',
        kind: 'safety',
        reason: 'rollback',
        details: { operation: 'rollback', changeset: 'x', paths: [], undoes: safety.safetyIndex },
        tree,
      });
    }
  }
  await store.flush();
  return { work, store };
}

const read = (work: string, name: string) => (existsSync(join(work, name)) ? readFileSync(join(work, name), 'utf8') : undefined);

describe('a restart after an operation was killed part-way', () => {
  it('finishes it once its safety checkpoint was written, leaving alone a file changed since and a directory still in use', async () => {
    const { work, store } = await interrupted('written');
    const report = await recoverInterruptedWrites(store.layout.root, [work], store);
    expect(['a.txt', 'b.txt', 'c.txt', 'd/new.txt', 'e.txt'].map((n) => read(work, n))).toEqual([
      'a after\n',
      'b after\n',
      'c saved by the user\n',
      'd new\n',
      undefined,
    ]);
    expect(report.finished.sort()).toEqual([join(work, 'a.txt'), join(work, 'd', 'new.txt'), join(work, 'e.txt')]);
    expect(report.unfinished).toEqual([join(work, 'c.txt')]);
    expect(existsSync(join(work, 'gone'))).toBe(false);
    expect(readdirSync(join(work, 'kept'))).toEqual(['mine.txt']);
    // Done once: the intent is gone.
    expect((await recoverInterruptedWrites(store.layout.root, [work], store)).finished).toEqual([]);
  });

  it('writes nothing when the operation was killed before its safety checkpoint, or had already put everything back', async () => {
    for (const record of ['none', 'rolled back'] as const) {
      const { work, store } = await interrupted(record);
      const report = await recoverInterruptedWrites(store.layout.root, [work], store);
      expect(
        ['a.txt', 'b.txt', 'c.txt', 'd/new.txt', 'e.txt'].map((n) => read(work, n)),
        record,
      ).toEqual(['a before\n', 'b after\n', 'c saved by the user\n', undefined, 'e before\n']);
      expect(report.finished).toEqual([]);
      expect(existsSync(join(work, 'gone'))).toBe(true);
    }
  });
});
