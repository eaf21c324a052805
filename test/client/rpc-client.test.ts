import { once } from 'node:events';
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import type { ActionEnvelope } from '../../protocol/common/actions.js';
import { formatChangesetUri } from '../../protocol/changeset/uris.js';
import type { ProgressParams } from '../../protocol/root/notifications.js';
import { readyChangeset } from '../../server/client/changeset-state.js';
import { RpcClient } from '../../server/client/rpc-client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const TOKEN = 'rpc-client-test-token';

/**
 * The client side's one connection (the CLI's commands, the hooks, the MCP
 * server) against the real server, and against a WebSocket peer for what
 * the server never does by itself (fragmented messages, pings, requests,
 * going away in the middle of a request).
 */
describe("the client side's connection to the server", () => {
  const temp = new TempDirs();
  const closers: (() => Promise<void>)[] = [];
  let svc: TestService | undefined;

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await svc?.stop();
    svc = undefined;
    temp.cleanup();
  });

  async function start(): Promise<TestService> {
    svc = await startTestService({ security: { host: '127.0.0.1', token: TOKEN } });
    return svc;
  }

  /**
   * A TCP relay in front of `url`: what the server sends reaches the client
   * either in pieces of 1 to 250 bytes, one per turn of the event loop (the
   * upgrade response and every frame split across reads), or held for 30 ms
   * and sent at once (several frames in one read). Resolves with the relay's
   * URL and how many writes it made towards the client.
   */
  async function relay(url: string, mode: 'split' | 'coalesce'): Promise<{ url: string; writes: () => number }> {
    const target = new URL(url);
    let writes = 0;
    const sockets = new Set<Socket>();
    const server: Server = createServer((client) => {
      const upstream = connectTcp({ host: target.hostname, port: Number(target.port) });
      sockets.add(client).add(upstream);
      client.setNoDelay(true);
      client.pipe(upstream);
      const queue: Buffer[] = [];
      let flushing = false;
      const sizes = [1, 2, 3, 7, 1, 13, 64, 1, 250];
      let next = 0;
      const flush = async (): Promise<void> => {
        if (flushing) return;
        flushing = true;
        if (mode === 'coalesce') {
          await new Promise((resolve) => setTimeout(resolve, 30));
          const all = Buffer.concat(queue.splice(0));
          if (!client.destroyed) {
            client.write(all);
            writes++;
          }
        } else {
          while (queue.length > 0) {
            const chunk = queue.shift()!;
            for (let at = 0; at < chunk.length; ) {
              const size = sizes[next++ % sizes.length]!;
              if (client.destroyed) return;
              client.write(chunk.subarray(at, at + size));
              writes++;
              at += size;
              await new Promise((resolve) => setImmediate(resolve));
            }
          }
        }
        flushing = false;
        if (queue.length > 0) void flush();
      };
      upstream.on('data', (chunk: Buffer) => {
        queue.push(chunk);
        void flush();
      });
      const done = (): void => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('close', done).on('error', done);
      client.on('close', done).on('error', done);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return { url: `ws://127.0.0.1:${(server.address() as { port: number }).port}/`, writes: () => writes };
  }

  /** A WebSocket peer that answers `initialize` and hands every later request to `onRequest`. */
  async function peer(onRequest: (socket: WebSocket, request: { id: number; method: string; params?: unknown }) => void): Promise<string> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    await once(wss, 'listening');
    wss.on('connection', (socket) => {
      socket.on('message', (data) => {
        const message = JSON.parse(data.toString()) as { id?: number; method?: string; params?: unknown };
        if (message.method === 'initialize') socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '0.6.0' } }));
        else if (message.method !== undefined && message.id !== undefined) onRequest(socket, message as { id: number; method: string });
      });
    });
    closers.push(async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    });
    return `ws://127.0.0.1:${(wss.address() as { port: number }).port}/`;
  }

  it('receives the action envelopes of the channels it subscribed to, and readyChangeset reads a turn from them, through every way TCP cuts the bytes', async () => {
    const { url } = await start();
    for (const mode of ['direct', 'split', 'coalesce'] as const) {
      const relayed = mode === 'direct' ? undefined : await relay(url, mode);
      const workspace = makeRepo(temp.make(), { 'a.txt': 'one\n' });
      const sessionId = `client-${mode}`;
      const channel = `ahp-session:/${sessionId}`;
      const client = await RpcClient.connect(relayed?.url ?? url, { token: TOKEN, timeoutMs: 30_000 });
      try {
        await client.request('createSession', { channel, provider: 'test', workingDirectory: pathToFileURL(workspace).href });
        const envelopes: ActionEnvelope[] = [];
        client.onNotification('action', (envelope) => envelopes.push(envelope));
        const { snapshot } = await client.request('subscribe', { channel });
        expect(snapshot?.resource).toBe(channel);

        // A long message: the 126 and 127 length forms, split over hundreds of reads in the split mode.
        const message = `édit ✓ ${'m'.repeat(100_000)}`;
        const { turnId } = await client.request('harness/turnStarted', { channel, turnId: 't1', message });
        writeFiles(workspace, { 'a.txt': 'one\ntwo\n', 'b.txt': 'new\n' });
        const { summary } = await client.request('harness/turnEnded', { channel, turnId });
        expect(summary).toMatchObject({ total: 2, added: 2, deleted: 0 });

        const ours = envelopes.filter((e) => e.channel === channel);
        expect(ours.length, mode).toBeGreaterThan(0);
        expect(ours.every((e) => e.serverSeq > snapshot!.fromSeq)).toBe(true);
        expect(ours.map((e) => e.serverSeq)).toEqual([...ours.map((e) => e.serverSeq)].sort((a, b) => a - b));
        const status = await client.request('harness/status', { channel, turns: 5 });
        expect(status.sessions[0]!.turns.map((t) => [t.turnId, t.message, t.state])).toEqual([['t1', message, 'complete']]);

        const state = await readyChangeset(client, formatChangesetUri({ sessionId, kind: 'turn', turnId }), 30_000);
        expect(state.status).toBe('ready');
        expect(state.files.map((f) => f._meta?.['path']).sort()).toEqual(['a.txt', 'b.txt']);
        if (mode === 'split') expect(relayed!.writes()).toBeGreaterThan(1000);
      } finally {
        await client.close();
      }
    }
  });

  it('hears root/progress for its own token when subscribed to the root channel, and stops hearing once the listener is disposed', async () => {
    const { url } = await start();
    const { url: split } = await relay(url, 'split');
    const client = await RpcClient.connect(split, { token: TOKEN, timeoutMs: 60_000, initialSubscriptions: [ROOT_CHANNEL] });
    try {
      const tree = (): string => {
        const dir = temp.make();
        writeFiles(dir, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`d${i % 20}/f${i}.txt`, `file ${i}\n`])));
        return dir;
      };
      const progress: ProgressParams[] = [];
      const listening = client.onNotification('root/progress', (params) => progress.push(params));
      // A listener that throws does not keep the others from the notification.
      client.onNotification('root/progress', () => {
        throw new Error('a listener failing');
      });
      await client.request('createSession', { channel: 'ahp-session:/progress-1', workingDirectory: pathToFileURL(tree()).href, progressToken: 'p1' });
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every((p) => p.progressToken === 'p1' && p.channel === ROOT_CHANNEL)).toBe(true);
      expect(progress.at(-1)).toMatchObject({ progress: 300, total: 300 });

      listening.dispose();
      const heard = progress.length;
      await client.request('createSession', { channel: 'ahp-session:/progress-2', workingDirectory: pathToFileURL(tree()).href, progressToken: 'p2' });
      expect(progress.length).toBe(heard);
      // The connection is still usable after a listener threw.
      expect((await client.request('harness/status', { turns: 1 })).sessions.map((s) => s.channel).sort()).toEqual([
        'ahp-session:/progress-1',
        'ahp-session:/progress-2',
      ]);
    } finally {
      await client.close();
    }
  });

  it('puts a fragmented message back together, even with a ping between its fragments and a character cut in two, and answers the ping', async () => {
    const pongs: Buffer[] = [];
    const url = await peer((socket, request) => {
      socket.on('pong', (data) => pongs.push(data));
      const text = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { word: 'naïve ✓ done' } }), 'utf8');
      const cut = text.indexOf(Buffer.from('✓')) + 1; // inside the three bytes of ✓
      socket.send(text.subarray(0, 5), { binary: false, fin: false });
      socket.ping(Buffer.from('still there?'));
      socket.send(text.subarray(5, cut), { binary: false, fin: false });
      socket.send(text.subarray(cut), { binary: false, fin: true });
    });
    const client = await RpcClient.connect(url, { timeoutMs: 10_000 });
    try {
      expect(await client.request('harness/status', {})).toEqual({ word: 'naïve ✓ done' });
      await expect.poll(() => pongs.map((p) => p.toString())).toEqual(['still there?']);
    } finally {
      await client.close();
    }
  });

  it('answers a request from the server with "method not found", and ignores notifications nobody listens to', async () => {
    const answers: unknown[] = [];
    const url = await peer((socket, request) => {
      socket.on('message', (data) => answers.push(JSON.parse(data.toString())));
      socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'root/somethingNew', params: {} }));
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'from-server', method: 'client/doSomething', params: {} }));
      setTimeout(() => socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: null })), 50);
    });
    const client = await RpcClient.connect(url, { timeoutMs: 10_000 });
    try {
      expect(await client.request('harness/status', {})).toBeNull();
      expect(answers).toEqual([{ jsonrpc: '2.0', id: 'from-server', error: { code: -32601, message: 'Unhandled method client/doSomething' } }]);
    } finally {
      await client.close();
    }
  });

  it('fails a waiting request at once when the server closes the connection, with or without the closing handshake, and answers the handshake', async () => {
    const closes: number[] = [];
    const url = await peer((socket, request) => {
      socket.on('close', (code) => closes.push(code));
      if ((request.params as { turns?: number } | undefined)?.turns === 1) socket.close(1001);
      else socket.terminate();
    });
    const handshake = await RpcClient.connect(url, { timeoutMs: 20_000 });
    const started = Date.now();
    await expect(handshake.request('harness/status', { turns: 1 })).rejects.toThrow('harness/status: the server closed the connection');
    await expect(handshake.request('harness/status', {})).rejects.toThrow('harness/status: the server closed the connection');
    await handshake.close();
    // Our close answered the server's: it saw its own code come back, not an abnormal closure.
    await expect.poll(() => closes).toEqual([1001]);

    const dropped = await RpcClient.connect(url, { timeoutMs: 20_000 });
    await expect(dropped.request('harness/status', { turns: 2 })).rejects.toThrow('harness/status: the server closed the connection');
    await dropped.close();
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('closes with the closing handshake, and bounds a request the server does not answer', async () => {
    const closes: number[] = [];
    const url = await peer((socket) => socket.on('close', (code) => closes.push(code)));
    const client = await RpcClient.connect(url, { timeoutMs: 300 });
    await expect(client.request('harness/status', {})).rejects.toThrow('harness/status: no answer within 300 ms');
    await client.close();
    await expect.poll(() => closes).toEqual([1000]);
    await expect(client.request('harness/status', {})).rejects.toThrow('harness/status: the connection is closed');

    // A server that accepts the connection and never answers the upgrade.
    const silent = createServer((socket) => socket.resume());
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    closers.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    const silentUrl = `ws://127.0.0.1:${(silent.address() as { port: number }).port}/`;
    await expect(RpcClient.connect(silentUrl, { timeoutMs: 300 })).rejects.toThrow(`cannot connect to ${silentUrl}: no answer within 300 ms`);
    await expect(RpcClient.connect('http://127.0.0.1:1/', { timeoutMs: 300 })).rejects.toThrow('cannot connect to http://127.0.0.1:1/: not a ws: or wss: URL');
  });
});
