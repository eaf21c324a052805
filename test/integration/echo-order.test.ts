import { afterEach, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import type { ActionEnvelope } from '../../protocol/index.js';
import { bareSubscriber, reviewAction } from '../helpers/bare-subscriber.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { createChangeset, file } from './fixtures.js';

const CS = 'ahp-changeset:/s1/session';

/** A bare WebSocket client subscribed to the changeset, keeping every `action` frame as the bytes it arrived as. */
interface Observer {
  socket: WebSocket;
  frames: { envelope: ActionEnvelope; bytes: Buffer }[];
}

async function observer(url: string, clientId: string, onAction: (o: Observer, envelope: ActionEnvelope) => void): Promise<Observer> {
  const o: Observer = { socket: await bareSubscriber(url, clientId, CS), frames: [] };
  o.socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as { method?: string; params?: ActionEnvelope };
    if (message.method !== 'action' || !message.params) return;
    o.frames.push({ envelope: message.params, bytes: data });
    onAction(o, message.params);
  });
  return o;
}

describe('a review action dispatched among many subscribers', () => {
  let t: TestServer | undefined;
  const sockets: WebSocket[] = [];

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await t?.stop();
    t = undefined;
  });

  it('reaches its sender before any other subscriber, as the same bytes for everyone, in serverSeq order', async () => {
    t = await startTestServer();
    createChangeset(t.server.store, CS, ['a.ts', 'b.ts'], true);
    // Who received the reviewer's action with a given clientSeq, in the order the frames were read.
    const arrivals = new Map<number, Observer[]>();
    const onAction = (o: Observer, envelope: ActionEnvelope): void => {
      if (envelope.origin?.clientId !== 'reviewer') return;
      const list = arrivals.get(envelope.origin.clientSeq) ?? [];
      list.push(o);
      arrivals.set(envelope.origin.clientSeq, list);
    };
    const others: Observer[] = [];
    for (let i = 0; i < 60; i++) others.push(await observer(t.url, `watcher-${i}`, onAction));
    // The sender subscribes last: sent in subscription order, its copy would be the last one written.
    const sender = await observer(t.url, 'reviewer', onAction);
    const everyone = [...others, sender];
    sockets.push(...everyone.map((o) => o.socket));

    for (let clientSeq = 1; clientSeq <= 10; clientSeq++) {
      // Between two reviews the server also fans out an action of its own.
      t.server.store.dispatch(CS, { type: 'changeset/fileSet', file: file(`c${clientSeq}.ts`) });
      sender.socket.send(reviewAction(CS, clientSeq));
      await until(() => (arrivals.get(clientSeq)?.length ?? 0) === everyone.length, `review ${clientSeq} to reach everyone`, 15_000);
      expect(arrivals.get(clientSeq)![0]).toBe(sender);
    }

    const last = t.server.store.serverSeq;
    await until(() => everyone.every((o) => o.frames.at(-1)?.envelope.serverSeq === last), 'everyone to have the last action', 15_000);
    const reference = sender.frames;
    expect(reference).toHaveLength(20);
    for (const o of everyone) {
      // Every action, in serverSeq order, and byte for byte what the sender got.
      expect(o.frames.map((f) => f.envelope.serverSeq)).toEqual(reference.map((f) => f.envelope.serverSeq));
      for (let i = 0; i < reference.length; i++) expect(o.frames[i]!.bytes.equals(reference[i]!.bytes)).toBe(true);
    }
    const seqs = reference.map((f) => f.envelope.serverSeq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });
});
