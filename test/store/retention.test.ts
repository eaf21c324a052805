import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { serializeTree, type WorkspaceStore } from '../../server/store/index.js';
import { fingerprint, git, initRepo, useStoreFixture } from './git-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

describe('budget and retention', () => {
  const fx = useStoreFixture();
  let store: WorkspaceStore | undefined;
  const shadowGit = (...args: string[]) => git(fx.root, ['--git-dir', store!.layout.shadowDir, ...args]);
  const exists = (oid: string) => {
    try {
      shadowGit('cat-file', '-e', oid);
      return true;
    } catch {
      return false;
    }
  };

  beforeEach(async () => {
    initRepo(fx.workspace, { 'tracked.txt': 'tracked\n' });
    store = await fx.open();
  });

  /** A session with one turn whose tree holds a unique 200 kB blob, a shared blob and a workspace blob. */
  async function session(id: string, shared: string): Promise<{ unique: string; tree: string }> {
    const unique = await store!.writeObject('blob', randomBytes(200_000));
    const tracked = git(fx.workspace, ['rev-parse', 'HEAD:tracked.txt']).trim();
    const tree = await store!.writeObject(
      'tree',
      serializeTree([
        { mode: '100644', name: 'big.bin', oid: unique },
        { mode: '100644', name: 'shared.txt', oid: shared },
        { mode: '100644', name: 'tracked.txt', oid: tracked },
      ]),
    );
    await store!.writeCheckpoint({ sessionId: id, kind: 'start', turnId: 't1', tree, entries: { files: 3 } });
    await store!.writeCheckpoint({ sessionId: id, kind: 'end', turnId: 't1', tree, turn: { state: 'complete' } });
    return { unique, tree };
  }

  it('drops the oldest ended sessions first, never a live one, and the size goes down', async () => {
    const shared = await store!.writeObject('blob', Buffer.from('shared by every session\n'));
    const oldest = await session('oldest', shared);
    const older = await session('older', shared);
    const live = await session('live', shared);
    await store!.markSessionEnded('older', '2024-02-01T00:00:00Z');
    await store!.markSessionEnded('oldest', '2024-01-01T00:00:00Z');
    const gitDirBefore = await fingerprint(join(fx.workspace, '.git'));

    const report = await store!.enforceBudget({ budgetBytes: 1, graceMs: 0 });
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['oldest', 'older']);
    expect(report.sizeAfter).toBeLessThan(report.sizeBefore - 350_000);
    expect(report.sizeAfter).toBe(await store!.storeSize());
    expect(report.overBudget).toBe(true);
    expect(report.objectsRemoved).toBeGreaterThanOrEqual(6);

    expect((await store!.listSessions()).map((s) => s.sessionId)).toEqual(['live']);
    expect(exists(oldest.unique)).toBe(false);
    expect(exists(older.unique)).toBe(false);
    expect(exists(live.unique)).toBe(true);
    expect(exists(shared)).toBe(true);
    expect(await store!.readChangeEntries('live', 't1')).toEqual({ files: 3 });
    expect(
      shadowGit('for-each-ref', '--format=%(refname)')
        .trim()
        .split('\n')
        .every((r) => r.includes('/live/')),
    ).toBe(true);
    shadowGit('fsck', '--no-dangling', '--full');
    expect(shadowGit('count-objects', '-v')).toMatch(/^packs: 1$/m);
    expect(await fingerprint(join(fx.workspace, '.git'))).toEqual(gitDirBefore);
    expect(store!.collectionGeneration).toBe(1);

    await store!.close();
    store = await fx.open();
    expect((await store.listSessionCheckpoints('live')).map((c) => c.kind)).toEqual(['start', 'end']);
    expect(store.collectionGeneration).toBe(1);
  });

  it('stops dropping once the store fits the budget', async () => {
    const shared = await store!.writeObject('blob', Buffer.from('shared\n'));
    const first = await session('first', shared);
    const second = await session('second', shared);
    await store!.markSessionEnded('first', '2024-01-01T00:00:00Z');
    await store!.markSessionEnded('second', '2024-03-01T00:00:00Z');
    const size = await store!.storeSize();
    const report = await store!.enforceBudget({ budgetBytes: size - 100_000, graceMs: 0 });
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['first']);
    expect(report.overBudget).toBe(false);
    expect(exists(first.unique)).toBe(false);
    expect(exists(second.unique)).toBe(true);
  });

  it('does nothing within budget and keeps recently written objects no ref reaches yet', async () => {
    const shared = await store!.writeObject('blob', Buffer.from('shared\n'));
    const a = await session('a', shared);
    await store!.markSessionEnded('a');
    const noop = await store!.enforceBudget();
    expect(noop).toMatchObject({ droppedSessions: [], objectsRemoved: 0, collected: false });
    expect(noop.sizeAfter).toBe(noop.sizeBefore);

    const pendingBlob = await store!.writeObject('blob', randomBytes(1000));
    const pendingTree = await store!.writeObject('tree', serializeTree([{ mode: '100644', name: 'x', oid: pendingBlob }]));
    // Everything of the ended session is as recent as the pending objects: dropping it would free nothing, so it stays.
    const report = await store!.enforceBudget({ budgetBytes: 1 });
    expect(report).toMatchObject({ droppedSessions: [], sessionsKept: 1, objectsRemoved: 0, overBudget: true, collected: true });
    expect(exists(pendingTree)).toBe(true);
    expect(exists(pendingBlob)).toBe(true);
    expect((await store!.listSessionCheckpoints('a')).map((c) => c.kind)).toEqual(['start', 'end']);
    expect(await store!.readTree(a.tree)).toHaveLength(3);

    const later = await store!.enforceBudget({ budgetBytes: 1, graceMs: 0 });
    expect(later.droppedSessions.map((s) => s.sessionId)).toEqual(['a']);
    expect(later.objectsRemoved).toBeGreaterThan(0);
    expect(later.sizeAfter).toBeLessThan(later.sizeBefore - 200_000);
    expect(exists(pendingTree)).toBe(false);
    expect(exists(a.unique)).toBe(false);
  });

  it('frees in the same pass the bytes of every session it drops, and what it keeps stays readable', async () => {
    const shared = await store!.writeObject('blob', Buffer.from('shared\n'));
    const sessions = [];
    for (const id of ['s1', 's2', 's3', 's4']) {
      sessions.push(await session(id, shared));
      await store!.markSessionEnded(id, `2024-01-0${sessions.length}T00:00:00Z`);
    }
    const size = await store!.storeSize();
    const report = await store!.enforceBudget({ budgetBytes: size - 300_000, graceMs: 0 });
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['s1', 's2']);
    // Each dropped session alone held a 200 kB blob; both are gone from disk now, not at some later pass.
    expect(report.sizeBefore - report.sizeAfter).toBeGreaterThan(2 * 190_000);
    expect(report.sizeAfter).toBe(await store!.storeSize());
    expect(report).toMatchObject({ overBudget: false, packsAfter: 1, sessionsKept: 0 });
    expect(exists(sessions[0]!.unique)).toBe(false);
    expect(exists(sessions[1]!.unique)).toBe(false);
    for (const kept of sessions.slice(2)) {
      expect((await store!.readObject(kept.unique)).content.byteLength).toBe(200_000);
      expect(await store!.readTree(kept.tree)).toHaveLength(3);
    }
    expect(await store!.readChangeEntries('s3', 't1')).toEqual({ files: 3 });
    shadowGit('fsck', '--no-dangling', '--full');
  });

  it('drops sessions past the age limit even within budget, and keeps younger ones', async () => {
    const shared = await store!.writeObject('blob', Buffer.from('shared\n'));
    const old = await session('old', shared);
    const young = await session('young', shared);
    await store!.markSessionEnded('old', new Date(Date.now() - 10 * 86_400_000));
    await store!.markSessionEnded('young', new Date(Date.now() - 86_400_000));
    const report = await store!.enforceBudget({ maxAgeMs: 7 * 86_400_000, graceMs: 0 });
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['old']);
    expect(report).toMatchObject({ expiredSessions: 1, overBudget: false, collected: true });
    expect(report.sizeAfter).toBeLessThan(report.sizeBefore - 190_000);
    expect(exists(old.unique)).toBe(false);
    expect(exists(young.unique)).toBe(true);
  });

  it('keeps what keepRoots reach even when only an ended session refers to it', async () => {
    const shared = await store!.writeObject('blob', Buffer.from('shared\n'));
    const a = await session('a', shared);
    const b = await session('b', shared);
    await store!.markSessionEnded('a', '2024-01-01T00:00:00Z');
    await store!.markSessionEnded('b', '2024-01-02T00:00:00Z');
    const report = await store!.enforceBudget({ budgetBytes: 1, graceMs: 0, keepRoots: [a.tree] });
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['a', 'b']);
    expect(exists(a.tree)).toBe(true);
    expect(exists(a.unique)).toBe(true);
    expect(exists(b.unique)).toBe(false);
  });

  it('rejects bad options', async () => {
    await expect(store!.enforceBudget({ budgetBytes: -1 })).rejects.toThrow(/budgetBytes/);
    await expect(store!.enforceBudget({ graceMs: Number.NaN })).rejects.toThrow(/graceMs/);
    await expect(store!.enforceBudget({ maxAgeMs: -5 })).rejects.toThrow(/maxAgeMs/);
    await expect(store!.enforceBudget({ keepRoots: ['not an id'] })).rejects.toThrow(/keepRoots/);
  });
});
