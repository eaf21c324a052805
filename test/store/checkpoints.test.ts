import { describe, expect, it } from 'vitest';
import { serializeTree, StoreInputError, type WorkspaceStore } from '../../server/store/index.js';
import { commitFiles, git, initRepo, useStoreFixture } from './git-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

describe('checkpoints', () => {
  const fx = useStoreFixture();
  let store: WorkspaceStore | undefined;
  const shadowGit = (...args: string[]) => git(fx.root, ['--git-dir', store!.layout.shadowDir, ...args]);

  async function treeOf(files: Record<string, string>): Promise<string> {
    const entries = [];
    for (const [name, content] of Object.entries(files)) {
      entries.push({ mode: '100644', name, oid: await store!.writeObject('blob', Buffer.from(content)) });
    }
    return store!.writeObject('tree', serializeTree(entries));
  }

  it('records turns as a commit chain that stock git can log and fsck', async () => {
    initRepo(fx.workspace, { 'a.txt': 'a\n' });
    store = await fx.open();
    const base = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();
    const s1 = await store.writeCheckpoint({
      sessionId: 'sess-1',
      kind: 'start',
      turnId: 'turn-a',
      tree: base,
      turn: { message: 'Fix the parser\nwith details', startedAt: '2024-05-01T10:00:00Z' },
    });
    const t2 = await treeOf({ 'a.txt': 'a changed\n' });
    const e1 = await store.writeCheckpoint({
      sessionId: 'sess-1',
      kind: 'end',
      turnId: 'turn-a',
      tree: t2,
      turn: {
        message: 'Fix the parser',
        state: 'complete',
        startedAt: Date.parse('2024-05-01T10:00:00Z'),
        endedAt: new Date('2024-05-01T10:01:00Z'),
        tools: ['Edit', 'Bash'],
      },
      entries: [{ path: 'a.txt', kind: 'modified' }],
    });
    const safety = await store.writeCheckpoint({ sessionId: 'sess-1', kind: 'safety', tree: t2, reason: 'revert turn 1', details: { files: ['a.txt'] } });
    const s2 = await store.writeCheckpoint({ sessionId: 'sess-1', kind: 'start', turnId: 'turn-b', tree: base });

    expect(s1.ref).toBe('refs/changeset-server/sessions/sess-1/turns/000001-turn-a/start');
    expect(e1.ref).toBe('refs/changeset-server/sessions/sess-1/turns/000001-turn-a/end');
    expect(safety.ref).toBe('refs/changeset-server/sessions/sess-1/safety/000001');
    expect(s2.ref).toBe('refs/changeset-server/sessions/sess-1/turns/000002-turn-b/start');
    expect([s1.parent, e1.parent, safety.parent, s2.parent]).toEqual([undefined, s1.commit, e1.commit, safety.commit]);

    const listed = await store.listSessionCheckpoints('sess-1');
    expect(listed.map((c) => [c.kind, c.turnIndex ?? c.safetyIndex, c.seq])).toEqual([
      ['start', 1, 1],
      ['end', 1, 2],
      ['safety', 1, 3],
      ['start', 2, 4],
    ]);
    expect(listed[1]).toEqual(e1);
    expect(e1.turn).toEqual({
      message: 'Fix the parser',
      state: 'complete',
      startedAt: '2024-05-01T10:00:00.000Z',
      endedAt: '2024-05-01T10:01:00.000Z',
      tools: ['Edit', 'Bash'],
    });
    expect(safety.details).toEqual({ files: ['a.txt'] });
    expect(await store.readCheckpoint(e1.ref)).toEqual(e1);
    expect(await store.readCheckpoint('refs/changeset-server/sessions/sess-1/turns/000009-x/end')).toBeUndefined();
    expect(await store.readChangeEntries('sess-1', 'turn-a')).toEqual([{ path: 'a.txt', kind: 'modified' }]);
    expect(await store.readChangeEntries('sess-1', 'turn-b')).toBeUndefined();

    const log = shadowGit('log', '--format=%s', 'refs/changeset-server/sessions/sess-1/head');
    expect(log.trim().split('\n')).toEqual([
      'turn 2 start',
      'safety 1: revert turn 1',
      'turn 1 end (complete): Fix the parser',
      'turn 1 start: Fix the parser',
    ]);
    const body = shadowGit('cat-file', '-p', e1.commit);
    expect(body).toContain(`tree ${t2}`);
    expect(body).toMatch(/^Changeset-Server: \{"v":1,"kind":"end","sessionId":"sess-1"/m);
    expect(shadowGit('ls-tree', '--name-only', e1.commit).trim()).toBe('a.txt');
    expect(shadowGit('cat-file', '-p', `${e1.entriesRef}`)).toContain('"modified"');
    shadowGit('fsck', '--no-dangling', '--strict');
  });

  it('encodes arbitrary session and turn ids into valid ref names and keeps the raw ids', async () => {
    store = await fx.open();
    const tree = await treeOf({ 'f.txt': 'x' });
    const odd = ['../..//x y:~^?*[\\.lock', 'Ünïcødé 🚀', 'UPPER', 'upper', 'x'.repeat(500), '.hidden', 'a@{1}'];
    for (const id of odd) {
      const c = await store.writeCheckpoint({ sessionId: id, kind: 'start', turnId: id, tree });
      git(fx.root, ['check-ref-format', c.ref]);
      expect(c.sessionId).toBe(id);
      expect(c.turnId).toBe(id);
    }
    const sessions = await store.listSessions();
    expect(sessions.map((s) => s.sessionId).sort()).toEqual([...odd].sort());
    const refs = shadowGit('for-each-ref', '--format=%(refname)', 'refs/changeset-server/').trim().split('\n');
    expect(refs).toHaveLength(odd.length * 2);
    expect(new Set(refs.map((r) => r.toLowerCase())).size).toBe(refs.length);
    shadowGit('fsck', '--no-dangling');
  });

  it('stores multi-root checkpoints as a tree with one entry per root', async () => {
    store = await fx.open();
    const front = await treeOf({ 'index.html': '<p>' });
    const back = await treeOf({ 'main.go': 'package main' });
    const c = await store.writeCheckpoint({
      sessionId: 'multi',
      kind: 'start',
      turnId: 't1',
      roots: [
        { name: 'frontend', path: '/work/frontend', tree: front },
        { name: 'backend', path: '/work/backend', tree: back },
      ],
    });
    expect(c.layout).toBe('multi');
    expect(shadowGit('ls-tree', c.tree)).toBe(`040000 tree ${back}\tbackend\n040000 tree ${front}\tfrontend\n`);
    const read = await store.readCheckpoint(c.ref);
    expect(read?.roots).toEqual([
      { name: 'frontend', path: '/work/frontend', tree: front },
      { name: 'backend', path: '/work/backend', tree: back },
    ]);
    await expect(
      store.writeCheckpoint({
        sessionId: 'multi',
        kind: 'end',
        turnId: 't1',
        roots: [
          { name: 'a', tree: front },
          { name: 'a', tree: back },
        ],
      }),
    ).rejects.toThrow(/duplicate tree entry name/);
  });

  it('tracks live and ended sessions and continues chains after a restart', async () => {
    initRepo(fx.workspace);
    store = await fx.open();
    const tree = git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim();
    await store.writeCheckpoint({ sessionId: 'old', kind: 'start', turnId: 't', tree });
    const live = await store.writeCheckpoint({ sessionId: 'live', kind: 'start', turnId: 't', tree });
    await store.markSessionEnded('old', '2024-01-02T00:00:00Z');
    await store.markSessionEnded('old', '2024-09-09T00:00:00Z');
    const byId = (list: Awaited<ReturnType<WorkspaceStore['listSessions']>>) => Object.fromEntries(list.map((s) => [s.sessionId, s]));
    let sessions = byId(await store.listSessions());
    expect(sessions['old']).toMatchObject({ live: false, endedAt: '2024-01-02T00:00:00.000Z', checkpointCount: 1 });
    expect(sessions['live']).toMatchObject({ live: true, checkpointCount: 1 });

    await store.close();
    store = await fx.open();
    sessions = byId(await store.listSessions());
    expect(sessions['old']?.live).toBe(false);
    commitFiles(fx.workspace, { 'b.txt': 'b\n' }, 'more');
    const next = await store.writeCheckpoint({
      sessionId: 'live',
      kind: 'end',
      turnId: 't',
      tree: git(fx.workspace, ['rev-parse', 'HEAD^{tree}']).trim(),
      turn: { state: 'cancelled' },
    });
    expect(next).toMatchObject({ seq: 2, parent: live.commit, turnIndex: 1 });
    await store.writeCheckpoint({ sessionId: 'old', kind: 'start', turnId: 'resumed', tree });
    expect(byId(await store.listSessions())['old']?.live).toBe(true);
    shadowGit('fsck', '--no-dangling');
  });

  it('rejects bad checkpoint input without writing refs', async () => {
    store = await fx.open();
    const tree = await treeOf({ f: 'x' });
    const blob = await store.writeObject('blob', Buffer.from('blob'));
    const bad: unknown[] = [
      { sessionId: '', kind: 'start', turnId: 't', tree },
      { sessionId: 's', kind: 'middle', turnId: 't', tree },
      { sessionId: 's', kind: 'start', turnId: 't', tree: 'abc' },
      { sessionId: 's', kind: 'start', turnId: 't', tree: blob },
      { sessionId: 's', kind: 'start', turnId: 't', tree, roots: [{ name: 'r', tree }] },
      { sessionId: 's', kind: 'end', turnId: 't', tree, turn: { state: 'done' } },
      { sessionId: 's', kind: 'end', turnId: 't', tree, turn: { startedAt: 'yesterday' } },
      { sessionId: 's', kind: 'end', turnId: 't', tree, entries: { n: 1n } },
      { sessionId: 's', kind: 'safety', tree },
      {
        sessionId: 's',
        kind: 'start',
        turnId: 't',
        roots: [
          { name: 'a/b', tree },
          { name: 'c', tree },
        ],
      },
    ];
    for (const input of bad) {
      await expect(store.writeCheckpoint(input as Parameters<WorkspaceStore['writeCheckpoint']>[0])).rejects.toBeInstanceOf(StoreInputError);
    }
    await expect(store.writeCheckpoint({ sessionId: 's', kind: 'start', turnId: 't', tree: '1'.repeat(40) })).rejects.toThrow(/not found/);
    expect(await store.listSessions()).toEqual([]);
    await expect(store.readCheckpoint('refs/heads/main')).rejects.toThrow(/not under/);
  });
});
