import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChangesetState, ReconnectReplayResult, ReconnectSnapshotResult } from '../../protocol/index.js';
import { ChangesetServer } from '../../server/app.js';
import { SERVER_SEQ_LEASE, ServerSeqLease } from '../../server/channels/server-seq-lease.js';
import { TestClient } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createChangeset, file } from './fixtures.js';

const ROOT = 'ahp-root://';
const CS = 'ahp-changeset:/s1/session';

describe('reconnect', () => {
  let t: TestServer;
  const clients: TestClient[] = [];
  const connect = async (clientId?: string): Promise<TestClient> => {
    const c = await TestClient.connect(t.url, clientId ? { clientId } : {});
    clients.push(c);
    return c;
  };

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.stop();
  });

  it('replays missed envelopes when the gap is inside the log, reaching the live state', async () => {
    t = await startTestServer();
    createChangeset(t.server.store, CS, ['a.ts'], true);
    const first = await connect('ide-1');
    await first.initialize({ initialSubscriptions: [ROOT, CS] });
    t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file('b.ts') });
    await first.waitForEnvelope((e) => e.channel === CS);
    const seen = first.lastSeenServerSeq;
    await first.close();

    t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file('c.ts') });
    t.server.store.dispatch(CS, { type: 'changeset/fileRemoved', fileId: 'file:///w/a.ts' });

    const second = await connect('ide-1');
    // The mirror starts from what the first connection had.
    second.adopt({ resource: CS, state: first.state(CS) as ChangesetState, fromSeq: seen });
    const result = (await second.reconnect([ROOT, CS, 'ahp-changeset:/gone'], seen)) as ReconnectReplayResult;
    expect(result.type).toBe('replay');
    expect(result.actions.map((e) => e.serverSeq)).toEqual([seen + 1, seen + 2]);
    expect(result.missing).toEqual(['ahp-changeset:/gone']);
    expect(second.state(CS)).toEqual(t.server.store.getState(CS));
    // Live again: later envelopes arrive on the new connection.
    t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file('d.ts') });
    await second.waitForEnvelope((e) => e.channel === CS && e.serverSeq === seen + 3);
    expect(second.state(CS)).toEqual(t.server.store.getState(CS));
  });

  it('sends snapshots when the gap is older than the replay log', async () => {
    t = await startTestServer({ replayLogSize: 4 });
    createChangeset(t.server.store, CS, [], true);
    const c = await connect('ide-2');
    await c.initialize({ initialSubscriptions: [ROOT, CS] });
    const seen = c.lastSeenServerSeq;
    for (let i = 0; i < 10; i++) t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file(`f${i}.ts`) });
    const again = await connect('ide-2');
    const result = (await again.reconnect([ROOT, CS], seen)) as ReconnectSnapshotResult;
    expect(result.type).toBe('snapshot');
    expect(result.snapshots.map((s) => s.resource).sort()).toEqual([CS, ROOT].sort());
    expect(again.state<ChangesetState>(CS)?.files).toHaveLength(10);
    expect(result.snapshots.every((s) => s.fromSeq === t.server.store.serverSeq)).toBe(true);
  });

  it('lists removed channels as missing; their subscribers saw changeset/cleared', async () => {
    t = await startTestServer();
    createChangeset(t.server.store, CS, ['a.ts'], true);
    const c = await connect('ide-3');
    await c.initialize({ initialSubscriptions: [ROOT, CS] });
    const seen = c.lastSeenServerSeq;
    t.server.store.removeChannel(CS);
    await c.waitForEnvelope((e) => e.channel === CS && e.action.type === 'changeset/cleared');
    const again = await connect('ide-3');
    const result = (await again.reconnect([ROOT, CS], seen)) as ReconnectReplayResult;
    expect(result).toEqual({ type: 'replay', actions: [], missing: [CS] });
  });

  it('works as the first message of a connection and enables other requests', async () => {
    t = await startTestServer();
    const c = await connect('ide-4');
    const result = await c.reconnect([ROOT], 0);
    expect(result.type).toBe('replay');
    await expect(c.request('listSessions', { channel: ROOT })).resolves.toEqual({ items: [] });
  });

  it('sends snapshots when a requested channel was created lazily after lastSeenServerSeq', async () => {
    t = await startTestServer();
    const LAZY = 'ahp-changeset:/s1/lazy';
    t.server.store.registerResolver('ahp-changeset:', async (uri) => createChangeset(t.server.store, uri, ['base.ts'], true));
    createChangeset(t.server.store, CS, [], true);
    t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file('early.ts') });
    // Another client makes the server produce the channel after seq 0 has passed.
    const other = await connect('ide-6-other');
    await other.initialize({ initialSubscriptions: [ROOT] });
    await other.subscribe(LAZY);
    t.server.store.dispatch(LAZY, { type: 'changeset/fileSet', file: file('later.ts') });

    const c = await connect('ide-6');
    const result = (await c.reconnect([ROOT, CS, LAZY], 0)) as ReconnectSnapshotResult;
    expect(result.type).toBe('snapshot');
    expect(result.snapshots.map((s) => s.resource).sort()).toEqual([CS, LAZY, ROOT].sort());
    // What the client holds is exactly what a fresh subscribe gives.
    const fresh = await connect('ide-6-fresh');
    await fresh.initialize({ initialSubscriptions: [ROOT, CS, LAZY] });
    for (const uri of [ROOT, CS, LAZY]) expect(c.state(uri)).toEqual(fresh.state(uri));
    expect(c.state<ChangesetState>(LAZY)?.files.map((f) => f.id)).toEqual(['file:///w/base.ts', 'file:///w/later.ts']);
  });

  it('still replays a channel created lazily at or before lastSeenServerSeq', async () => {
    t = await startTestServer();
    const LAZY = 'ahp-changeset:/s1/lazy';
    t.server.store.registerResolver('ahp-changeset:', async (uri) => createChangeset(t.server.store, uri, [], true));
    createChangeset(t.server.store, CS, [], true);
    t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file('early.ts') });
    const first = await connect('ide-7');
    await first.initialize({ initialSubscriptions: [ROOT, LAZY] });
    const seen = first.lastSeenServerSeq;
    const held = first.state(LAZY) as ChangesetState;
    await first.close();
    t.server.store.dispatch(LAZY, { type: 'changeset/fileSet', file: file('missed.ts') });

    const again = await connect('ide-7');
    again.adopt({ resource: LAZY, state: held, fromSeq: seen });
    const result = (await again.reconnect([LAZY], seen)) as ReconnectReplayResult;
    expect(result.type).toBe('replay');
    expect(result.actions.map((e) => e.serverSeq)).toEqual([seen + 1]);
    expect(again.state(LAZY)).toEqual(t.server.store.getState(LAZY));
  });

  it('sends snapshots for a channel removed and created again with no envelope in between', async () => {
    t = await startTestServer();
    createChangeset(t.server.store, CS, ['a.ts'], true);
    const c = await connect('ide-8');
    await c.initialize({ initialSubscriptions: [ROOT, CS] });
    t.server.store.removeChannel(CS);
    await c.waitForEnvelope((e) => e.channel === CS && e.action.type === 'changeset/cleared');
    // Same URI, new channel, same serverSeq as the cleared the client saw last.
    createChangeset(t.server.store, CS, ['b.ts'], true);
    const seen = c.lastSeenServerSeq;
    expect(seen).toBe(t.server.store.serverSeq);
    const again = await connect('ide-8');
    const result = (await again.reconnect([ROOT, CS], seen)) as ReconnectSnapshotResult;
    expect(result.type).toBe('snapshot');
    expect(again.state<ChangesetState>(CS)?.files.map((f) => f.id)).toEqual(['file:///w/b.ts']);
  });

  it('counts serverSeq on across a restart, so a lastSeenServerSeq from the earlier run is answered with snapshots', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'changeset-server-seq-'));
    try {
      const run1 = new ChangesetServer({ host: '127.0.0.1', port: 0, stateDir });
      createChangeset(run1.store, CS, [], true);
      for (let i = 0; i < 5; i++) run1.store.dispatch(CS, { type: 'changeset/fileSet', file: file(`old${i}.ts`) });
      const seen = run1.store.serverSeq;

      const run2 = new ChangesetServer({ host: '127.0.0.1', port: 0, stateDir });
      t = { server: run2, url: (await run2.start()).url, token: undefined, stateDir, stop: () => run2.stop() };
      expect(run2.store.serverSeq).toBeGreaterThan(seen);
      createChangeset(run2.store, CS, [], true);
      for (let i = 0; i < 10; i++) run2.store.dispatch(CS, { type: 'changeset/fileSet', file: file(`new${i}.ts`) });
      const c = await connect('ide-9');
      const result = (await c.reconnect([ROOT, CS], seen)) as ReconnectSnapshotResult;
      expect(result.type).toBe('snapshot');
      expect(c.state<ChangesetState>(CS)?.files).toHaveLength(10);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('renews the stored serverSeq lease before the count reaches it, never lowering a larger stored number', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'changeset-server-seq-'));
    try {
      const stored = async () => Number(await readFile(join(stateDir, 'server-seq'), 'utf8'));
      const lease = ServerSeqLease.open(stateDir, () => undefined);
      expect(lease.first).toBe(0);
      expect(await stored()).toBe(SERVER_SEQ_LEASE);
      lease.observe(SERVER_SEQ_LEASE - 2);
      expect(await stored()).toBe(SERVER_SEQ_LEASE);
      lease.observe(SERVER_SEQ_LEASE - 1);
      expect(await stored()).toBe(2 * SERVER_SEQ_LEASE);
      // Another server on the same state directory took a larger lease meanwhile.
      const other = ServerSeqLease.open(stateDir, () => undefined);
      expect(other.first).toBe(2 * SERVER_SEQ_LEASE);
      expect(await stored()).toBe(3 * SERVER_SEQ_LEASE);
      lease.observe(2 * SERVER_SEQ_LEASE - 1);
      expect(await stored()).toBe(4 * SERVER_SEQ_LEASE);
      expect((await stat(join(stateDir, 'server-seq'))).mode & 0o777).toBe(0o600);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('sends snapshots when the client has seen a serverSeq from the future (server restarted)', async () => {
    t = await startTestServer();
    const c = await connect('ide-5');
    const result = await c.reconnect([ROOT], 1_000_000);
    expect(result.type).toBe('snapshot');
  });
});
