import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { TestClient } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createChangeset, file } from './fixtures.js';

const ROOT = 'ahp-root://';
const CS = 'ahp-changeset:/s1/session';

/** Polls until `condition` holds, for up to 30 s: on a loaded machine the server takes seconds to queue 25 MiB. */
async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a client that stops reading', () => {
  let t: TestServer;
  const clients: TestClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.stop();
  });

  it('is disconnected once its outbound buffer passes the limit; others are unaffected; it can reconnect', async () => {
    t = await startTestServer({ limits: { maxOutboundBufferBytes: 256 * 1024 } });
    createChangeset(t.server.store, CS, [], true);
    const slow = await TestClient.connect(t.url, { clientId: 'slow' });
    const healthy = await TestClient.connect(t.url);
    clients.push(slow, healthy);
    await slow.initialize({ initialSubscriptions: [ROOT, CS] });
    await healthy.initialize({ initialSubscriptions: [ROOT, CS] });

    (slow.socket as unknown as { _socket: Socket })._socket.pause();
    const padding = 'x'.repeat(64 * 1024);
    const count = 400; // ~25 MiB: well past the kernel socket buffers and the limit
    for (let i = 0; i < count; i++) {
      t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: { ...file(`f${i % 50}.ts`), _meta: { padding } } });
      // A reading client reads between two turns of the event loop: 128 KiB a turn, under the limit, even when the kernel
      // takes none of it (its socket buffers are small on a loaded machine), so only the client that stopped reading passes it.
      if (i % 2 === 1) await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => t.server.connectionCount === 1 && t.server.store.getChannel(CS)?.subscriberCount === 1);

    // The healthy client got every envelope and still works.
    const last = t.server.store.serverSeq;
    await healthy.waitForEnvelope((e) => e.serverSeq === last, 15_000);
    expect(healthy.state(CS)).toEqual(t.server.store.getState(CS));
    await expect(healthy.request('ping', { channel: ROOT })).resolves.toBeNull();

    // The slow client sees the connection end once it reads again.
    (slow.socket as unknown as { _socket: Socket })._socket.resume();
    const { code } = await slow.waitForClose(15_000);
    expect([1013, 1006]).toContain(code);

    // It resumes on a new connection from what it had received, and catches up.
    const back = await TestClient.connect(t.url, { clientId: 'slow' });
    clients.push(back);
    const had = slow.state<ChangesetState>(CS);
    expect(had).toBeDefined();
    back.adopt({ resource: CS, state: had as ChangesetState, fromSeq: slow.lastSeenServerSeq });
    const result = await back.reconnect([ROOT, CS], slow.lastSeenServerSeq);
    expect(result.type).toBe('replay');
    expect(back.state(CS)).toEqual(t.server.store.getState(CS));
    // 25 MiB encoded, sent and dropped: on a loaded machine this takes longer than the default 30 s.
  }, 120_000);
});
