// The order in which the server writes a reviewer's action to the sockets of its subscribers, read from the
// server's own writes as it makes them (not from arrival times, which the scheduler decides).
import { afterEach, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import type { ActionEnvelope } from '../../protocol/index.js';
import { frameText, type OutboundFrame } from '../../server/channels/frames.js';
import type { Disposable } from '../../server/events.js';
import { observeWrites } from '../../server/transport/write-trace.js';
import { bareSubscriber, reviewAction } from '../helpers/bare-subscriber.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { createChangeset, file } from '../integration/fixtures.js';

const CS = 'ahp-changeset:/s1/session';

/** One write the server made: to which client, and the messages it carried. */
interface Write {
  client: string;
  messages: { method?: string; id?: number; params?: ActionEnvelope }[];
}

describe('a review action among many subscribers', () => {
  let t: TestServer | undefined;
  let trace: Disposable | undefined;
  const sockets: WebSocket[] = [];

  afterEach(async () => {
    trace?.dispose();
    trace = undefined;
    for (const socket of sockets.splice(0)) socket.terminate();
    await t?.stop();
    t = undefined;
  });

  it("is written to its reviewer's socket before any other subscriber's, every time, wherever the reviewer subscribed", async () => {
    t = await startTestServer();
    createChangeset(t.server.store, CS, ['a.ts', 'b.ts'], true);
    const writes: Write[] = [];
    // Which client each server-side peer belongs to: the peer written the answer to a client's initialize.
    const clientOf = new Map<object, string>();
    let connecting: string | undefined;
    trace = observeWrites((peer, frames: readonly OutboundFrame[]) => {
      const messages = frames.map((frame) => JSON.parse(frameText(frame)) as Write['messages'][number]);
      if (!clientOf.has(peer) && connecting !== undefined && messages.some((m) => m.id === 1)) clientOf.set(peer, connecting);
      writes.push({ client: clientOf.get(peer) ?? '?', messages });
    });

    const connect = async (clientId: string): Promise<WebSocket> => {
      const socket = await bareSubscriber(t!.url, clientId, CS, () => {
        connecting = clientId;
      });
      sockets.push(socket);
      connecting = undefined;
      return socket;
    };
    // The reviewer subscribes between the others, then the rest after it: in subscription order its copy
    // would be written after 40 others. More subscribers than the server writes in one turn of its event loop.
    const watchers: string[] = [];
    for (let i = 0; i < 40; i++) watchers.push(`watcher-${i}`);
    for (const id of watchers) await connect(id);
    const reviewer = await connect('reviewer');
    for (let i = 40; i < 90; i++) {
      watchers.push(`watcher-${i}`);
      await connect(`watcher-${i}`);
    }
    expect(new Set(clientOf.values()).size).toBe(91);

    const received = new Map<number, number>();
    reviewer.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as { method?: string; params?: ActionEnvelope };
      const seq = message.params?.origin?.clientSeq;
      if (message.method === 'action' && seq !== undefined) received.set(seq, (received.get(seq) ?? 0) + 1);
    });
    const reviews = 8;
    for (let clientSeq = 1; clientSeq <= reviews; clientSeq++) {
      // Between two reviews the server fans out an action of its own, still waiting for some sockets when the next review arrives.
      t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file(`c${clientSeq}.ts`) });
      reviewer.send(reviewAction(CS, clientSeq));
      await until(() => received.get(clientSeq) === 1, `review ${clientSeq} to reach the reviewer`, 15_000);
    }
    // Until every watcher has been written the last review.
    const last = t.server.store.serverSeq;
    await until(
      () => new Set(writes.filter((w) => w.messages.some((m) => m.params?.serverSeq === last)).map((w) => w.client)).size === 91,
      'every subscriber to be written the last review',
      15_000,
    );

    for (let clientSeq = 1; clientSeq <= reviews; clientSeq++) {
      // The writes carrying this review, in the order the server made them.
      const carrying = writes.filter((w) => w.messages.some((m) => m.method === 'action' && m.params?.origin?.clientSeq === clientSeq));
      expect(carrying.map((w) => w.client)[0]).toBe('reviewer');
      expect(carrying.map((w) => w.client).sort()).toEqual(['reviewer', ...watchers].sort());
    }
  });
});
