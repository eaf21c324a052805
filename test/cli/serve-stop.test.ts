import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe } from 'vitest';
import type { SessionState } from '../../protocol/index.js';
import { isProcessAlive, listServers } from '../../server/registry/index.js';
import { TestClient } from '../helpers/client.js';
import { it, type PerTest } from '../helpers/per-test.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { exitCode, startServe, type ServeProcess } from './serve-process.js';

/** `serve`, killed after the test if it still runs. */
async function start(defer: PerTest['defer'], args: string[], env?: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const serve = await startServe(args, env);
  defer(() => serve.stop('SIGKILL'));
  return serve;
}

/** Resolves with the exit code, or with 'still running' after `ms`. */
function exitWithin(serve: ServeProcess, ms: number): Promise<number | null | 'still running'> {
  return Promise.race([exitCode(serve.child), new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms).unref())]);
}

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Connects as soon as something listens at `url`: tries again while the connection is refused, until the test ends. */
async function connectWhenListening(defer: PerTest['defer'], url: string, token: string): Promise<TestClient> {
  let ended = false;
  defer(() => {
    ended = true;
  });
  for (;;) {
    try {
      return await TestClient.connect(url, { token });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNREFUSED' || ended) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

// Each test has its own server and directories: they run side by side.
describe.concurrent('serve stops', { timeout: 120_000 }, () => {
  it('on SIGTERM within seconds when its working and state directories were deleted under a turn being recorded, with a client connected', async ({
    temp,
    defer,
    expect,
  }) => {
    const workspace = makeRepo(temp.make('cs-stop-ws-'), { 'a.txt': 'a\n' });
    const state = temp.make('cs-stop-state-');
    const serve = await start(defer, [workspace, '--state-dir', state, '--idle-timeout', '600000']);
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    defer(() => client.close());
    await client.initialize();
    const channel = serve.ready.sessions[0]!;
    await client.request('harness/turnStarted', { channel, turnId: 'left-open' }, { timeoutMs: 60_000 });
    writeFileSync(join(workspace, 'a.txt'), 'changed\n');
    rmSync(workspace, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });

    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 15_000)).not.toBe('still running');
  });

  it('on SIGTERM within seconds when its working directory is deleted while the first snapshot is read in the background', async ({ temp, defer, expect }) => {
    const workspace = temp.make('cs-stop-ws-');
    writeFiles(workspace, Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`d${i % 20}/f${i}.txt`, `${i}\n`])));
    const state = temp.make('cs-stop-state-');
    const serve = await start(defer, [workspace, '--state-dir', state]);
    rmSync(workspace, { recursive: true, force: true });
    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 15_000)).not.toBe('still running');
    expect(await listServers(state)).toEqual([]);
  });

  it('exits 1 when the stop takes longer than allowed, and a restart resumes the session with its turns', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make('cs-stop-ws-'), { 'a.txt': 'a\n' });
    const state = temp.make('cs-stop-state-');
    // One millisecond: no stop (turn cancelled and stored, clients closed) finishes within it.
    const serve = await start(defer, [workspace, '--state-dir', state], { CHANGESET_SERVER_STOP_GRACE_MS: '1' });
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    defer(() => client.close());
    await client.initialize();
    const channel = serve.ready.sessions[0]!;
    await client.request('harness/turnStarted', { channel, turnId: 'first' }, { timeoutMs: 60_000 });
    writeFileSync(join(workspace, 'a.txt'), 'one\n');
    await client.request('harness/turnEnded', { channel, turnId: 'first' }, { timeoutMs: 60_000 });
    await client.request('harness/turnStarted', { channel, turnId: 'cut-short' }, { timeoutMs: 60_000 });

    serve.child.kill('SIGTERM');
    expect(await exitWithin(serve, 15_000)).toBe(1);
    expect(serve.stderr()).toContain('not stopped 1 ms after SIGTERM: exiting without finishing the stop');
    expect(isProcessAlive(serve.child.pid!)).toBe(false);
    expect(await listServers(state)).toEqual([]);

    const again = await start(defer, [workspace, '--state-dir', state]);
    expect(again.ready.sessions).toEqual([channel]);
    const reader = await TestClient.connect(again.ready.url, { token: again.ready.token! });
    defer(() => reader.close());
    await reader.initialize();
    const session = (await reader.subscribe(channel)).snapshot!.state as SessionState;
    const chat = (await reader.subscribe(session.defaultChat!)).snapshot!.state as { turns: { id: string }[] };
    expect(chat.turns.map((t) => t.id)).toContain('first');
    expect(await again.stop('SIGTERM')).toBe(0);
  });

  it('by itself after --idle-timeout when the turn left open is in a working directory that was deleted', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make('cs-stop-ws-'), { 'a.txt': 'a\n' });
    const state = temp.make('cs-stop-state-');
    // The client connects while serve starts (its port and token are given), as soon as it listens, which is before the
    // idle clock starts at the ready line: the timeout need not leave room for a connection made after that line.
    const [port, token] = [await freePort(), 'idle-exit-token'];
    const connecting = connectWhenListening(defer, `ws://127.0.0.1:${port}/`, token);
    // Awaited below; a serve that fails to start fails the test there, not as a rejection nobody awaited.
    connecting.catch(() => undefined);
    const serve = await start(defer, [workspace, '--state-dir', state, '--port', String(port), '--token', token, '--idle-timeout', '3000']);
    const client = await connecting;
    await client.initialize();
    const channel = serve.ready.sessions[0]!;
    await client.request('harness/turnStarted', { channel, turnId: 'left-open' }, { timeoutMs: 60_000 });
    await client.close();
    rmSync(workspace, { recursive: true, force: true });
    expect(await exitWithin(serve, 60_000)).not.toBe('still running');
  });
});
