import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState, type ReconnectSnapshotResult } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
const running: ChangesetService[] = [];
const clients: TestClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(running.splice(0).map((s) => s.stop()));
  temp.cleanup();
});

async function start(stateDir: string): Promise<ChangesetService> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  running.push(service);
  await service.start();
  return service;
}

async function connect(service: ChangesetService, clientId: string): Promise<TestClient> {
  const client = await TestClient.connect(service.server.url!, { clientId });
  clients.push(client);
  return client;
}

describe('shutdown', () => {
  it('closes clients with 1001 without clearing their changesets, and a reconnect after the restart equals a fresh subscribe', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const stateDir = temp.make('state-');
    const first = await start(stateDir);
    const session = await first.openWorkspace([repo]);
    const ROOT = 'ahp-root://';
    const sessionCs = expandChangesetUri(changesetUriTemplate(session.id, 'session'));
    const turnCs = expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId: 'one' });
    const uncommitted = expandChangesetUri(changesetUriTemplate(session.id, 'uncommitted'));
    const client = await connect(first, 'ide-shutdown');
    await client.initialize({ initialSubscriptions: [ROOT, session.uri, session.chatUri] });
    const turn = await session.startTurn({ id: 'one', message: 'edit a' });
    writeFileSync(join(repo, 'a.txt'), 'A\n');
    await turn.end();
    await first.changesets.afterTurnEnded(session.uri, 'one');
    const channels = [ROOT, session.uri, session.chatUri, sessionCs, turnCs, uncommitted];
    for (const uri of [sessionCs, turnCs, uncommitted]) expect((await subscribeReady(client, uri)).files.length).toBe(1);
    // A turn still being recorded at shutdown is stored as cancelled, with what it changed.
    await session.startTurn({ id: 'two', message: 'edit b' });
    writeFileSync(join(repo, 'b.txt'), 'B\n');
    const envelopesBefore = client.envelopes.length;

    const closed = client.waitForClose(10_000);
    await first.stop();
    running.splice(0);
    expect((await closed).code).toBe(1001);
    const atShutdown = client.envelopes.slice(envelopesBefore);
    expect(atShutdown.filter((e) => e.action.type === 'changeset/cleared')).toEqual([]);
    // What the client holds across the restart is the changesets as they are, not an error or an empty list.
    for (const uri of [sessionCs, turnCs, uncommitted]) expect(client.state<ChangesetState>(uri)!.status).toBe('ready');
    expect(client.state<ChangesetState>(turnCs)!.files.length).toBe(1);
    client.assertValid();

    const second = await start(stateDir);
    const resumed = await second.openWorkspace([repo]);
    expect(resumed.id).toBe(session.id);
    const again = await connect(second, 'ide-shutdown');
    for (const uri of channels) {
      const held = client.state(uri);
      if (held) again.adopt({ resource: uri, state: held, fromSeq: client.lastSeenServerSeq });
    }
    const result = (await again.reconnect(channels, client.lastSeenServerSeq)) as ReconnectSnapshotResult;
    expect(result.type).toBe('snapshot');
    for (const uri of [sessionCs, turnCs, uncommitted]) await subscribeReady(again, uri);
    const fresh = await connect(second, 'ide-fresh');
    await fresh.initialize({ initialSubscriptions: [ROOT, resumed.uri, resumed.chatUri] });
    for (const uri of [sessionCs, turnCs, uncommitted]) await subscribeReady(fresh, uri);
    for (const uri of channels) expect({ uri, state: again.state(uri) }).toEqual({ uri, state: fresh.state(uri) });
    expect(again.state<ChangesetState>(turnCs)!.files.length).toBe(1);
  });
});
