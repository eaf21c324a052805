import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { sharedFrame } from '../../server/channels/frames.js';
import { resolveTransportLimits, WsPeer } from '../../server/transport/index.js';

/** A server-side peer on a real socket and the client at the other end, recording what it reads. */
interface Pair {
  peer: WsPeer;
  client: WebSocket;
  received: string[];
  closed: Promise<{ code: number; reason: string }>;
}

describe('what a peer writes', () => {
  const servers: WebSocketServer[] = [];
  const clients: WebSocket[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) client.terminate();
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  async function pair(): Promise<Pair> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    servers.push(server);
    await once(server, 'listening');
    const peerReady = new Promise<WsPeer>((resolve) =>
      server.once('connection', (socket) =>
        resolve(new WsPeer(socket, { limits: resolveTransportLimits(), isOrderedResponseMethod: (m) => m === 'subscribe' })),
      ),
    );
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    clients.push(client);
    const received: string[] = [];
    client.on('message', (data, isBinary) => received.push(isBinary ? '<binary frame>' : data.toString()));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      client.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await once(client, 'open');
    return { peer: await peerReady, client, received, closed };
  }

  async function until(condition: () => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** A JSON-RPC notification whose UTF-8 encoding is exactly `bytes` long, with two-byte characters in it. */
  function messageOfBytes(bytes: number, tag: number): string {
    const head = `{"jsonrpc":"2.0","method":"t","params":{"n":${tag},"s":"`;
    const tail = '"}}';
    const room = bytes - Buffer.byteLength(head + tail);
    const text = head + 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2) + tail;
    expect(Buffer.byteLength(text)).toBe(bytes);
    return text;
  }

  it('delivers frames sent in one go as separate text messages, in order, whatever their length, as text or shared bytes', async () => {
    const { peer, received } = await pair();
    // Lengths either side of where a WebSocket frame header grows (126 and 65,536 bytes).
    const sizes = [60, 125, 126, 127, 1000, 65_535, 65_536, 65_537, 300_000];
    const sent: string[] = [];
    for (const [i, size] of sizes.entries()) {
      const text = messageOfBytes(size, i);
      sent.push(text, text);
      peer.send(text);
      peer.send(sharedFrame(text));
    }
    await until(() => received.length === sent.length);
    expect(received).toEqual(sent);
  });

  it('writes an answer behind the frames already sent, and those frames before its close frame', async () => {
    const { peer, received, closed } = await pair();
    const first = messageOfBytes(200, 1);
    const second = messageOfBytes(200, 2);
    peer.send(first);
    peer.send(sharedFrame(second));
    // An answer goes out at once, and so does everything sent before it, in order.
    await peer.writer.write({ jsonrpc: '2.0', id: 7, result: null } as never);
    const third = messageOfBytes(200, 3);
    peer.send(third);
    peer.close(1001, 'going away');
    const { code } = await closed;
    expect(code).toBe(1001);
    expect(received).toEqual([first, second, '{"jsonrpc":"2.0","id":7,"result":null}', third]);
  });

  it('holds frames behind an ordered answer until it is written', async () => {
    const { peer, client, received } = await pair();
    const requests: unknown[] = [];
    peer.reader.listen((message) => requests.push(message));
    client.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: { channel: 'ahp-root://' } }));
    await until(() => requests.length === 1);
    const during = messageOfBytes(100, 1);
    peer.send(during);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toEqual([]);
    await peer.writer.write({ jsonrpc: '2.0', id: 1, result: { snapshot: null } } as never);
    await until(() => received.length === 2);
    expect(received).toEqual(['{"jsonrpc":"2.0","id":1,"result":{"snapshot":null}}', during]);
  });
});
