import { afterEach, describe, expect, it } from 'vitest';
import type { ChangesetState, ReconnectReplayResult, ReconnectSnapshotResult } from '../../protocol/index.js';
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

  it('sends snapshots when the client has seen a serverSeq from the future (server restarted)', async () => {
    t = await startTestServer();
    const c = await connect('ide-5');
    const result = await c.reconnect([ROOT], 1_000_000);
    expect(result.type).toBe('snapshot');
  });
});
