import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ActionEnvelope } from '../../protocol/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createChangeset, file } from './fixtures.js';

const CS = 'ahp-changeset:/s1/session';

/** A bare WebSocket client subscribed to the changeset, keeping every `action` frame as the bytes it arrived as. */
interface Observer {
  socket: WebSocket;
  frames: { envelope: ActionEnvelope; bytes: Buffer }[];
}

async function observer(url: string, clientId: string, onAction: (o: Observer, envelope: ActionEnvelope) => void): Promise<Observer> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  const o: Observer = { socket, frames: [] };
  const initialized = new Promise<void>((resolve) => socket.once('message', () => resolve()));
  socket.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId, initialSubscriptions: [CS] },
    }),
  );
  await initialized;
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as { method?: string; params?: ActionEnvelope };
    if (message.method !== 'action' || !message.params) return;
    o.frames.push({ envelope: message.params, bytes: data });
    onAction(o, message.params);
  });
  return o;
}

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
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
      sender.socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'dispatchAction',
          params: { channel: CS, clientSeq, action: { type: 'changeset/filesReviewChanged', files: ['file:///w/a.ts'], reviewed: clientSeq % 2 === 1 } },
        }),
      );
      await until(() => (arrivals.get(clientSeq)?.length ?? 0) === everyone.length);
      expect(arrivals.get(clientSeq)![0]).toBe(sender);
    }

    const last = t.server.store.serverSeq;
    await until(() => everyone.every((o) => o.frames.at(-1)?.envelope.serverSeq === last));
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
