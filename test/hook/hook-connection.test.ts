import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcClient as HookConnection } from '../../server/client/rpc-client.js';
import { RemoteError } from '../../server/client/remote-error.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';

const TOKEN = 'hook-connection-test-token';

describe("the hook's connection to the server", () => {
  const temp = new TempDirs();
  let svc: TestService | undefined;

  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
    temp.cleanup();
  });

  async function start(): Promise<TestService> {
    svc = await startTestService({ security: { host: '127.0.0.1', token: TOKEN } });
    return svc;
  }

  it('presents the token, makes requests, gets the server refusals as their codes, and carries messages of every frame length', async () => {
    const { url } = await start();
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const client = await HookConnection.connect(url, { token: TOKEN, timeoutMs: 10_000, clientId: 'hook-test' });
    const channel = 'ahp-session:/hook-connection';
    expect(await client.request('createSession', { channel, provider: 'test', workingDirectory: pathToFileURL(workspace).href })).toBeNull();
    const again = await client
      .request('createSession', { channel, provider: 'test', workingDirectory: pathToFileURL(workspace).href })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(RemoteError);
    expect(again).toMatchObject({ method: 'createSession', code: -32003 });

    // 125 bytes and less, up to 65,535, and more: each length encoding of a frame, both ways.
    for (const size of [10, 1000, 100_000]) {
      const message = 'm'.repeat(size);
      const { turnId } = await client.request('harness/turnStarted', { channel, turnId: `t${size}`, message });
      expect(turnId).toBe(`t${size}`);
      const status = await client.request('harness/status', { channel, turns: 10 });
      expect(status.sessions[0]!.activeTurn).toMatchObject({ turnId: `t${size}`, message });
      await client.request('harness/turnEnded', { channel, turnId });
    }
    await client.close();
    await expect(client.request('harness/status', { channel })).rejects.toThrow('harness/status: the connection is closed');
  });

  it('says why it cannot connect: a wrong token, a missing token, nothing listening, not a WebSocket server', async () => {
    const { url } = await start();
    const options = { timeoutMs: 10_000, clientId: 'hook-test' };
    await expect(HookConnection.connect(url, { ...options, token: 'wrong' })).rejects.toThrow(`${url} refused the token (HTTP 401)`);
    await expect(HookConnection.connect(url, options)).rejects.toThrow(`${url} refused the token (HTTP 401)`);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(HookConnection.connect(`ws://127.0.0.1:${port}/`, options)).rejects.toThrow(`cannot connect to ws://127.0.0.1:${port}/: connect ECONNREFUSED`);

    // Something that accepts the connection and answers HTTP, but no upgrade.
    const plain = createServer((socket) => {
      socket.resume();
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const plainUrl = `ws://127.0.0.1:${(plain.address() as { port: number }).port}/`;
    try {
      await expect(HookConnection.connect(plainUrl, options)).rejects.toThrow(`${plainUrl} answered HTTP 404`);
    } finally {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });
});
