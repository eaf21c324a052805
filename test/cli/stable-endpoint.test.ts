import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { startServe, type ServeProcess } from './serve-process.js';

describe('a stable endpoint per workspace', () => {
  const temp = new TempDirs();
  const running: ServeProcess[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop('SIGKILL');
    temp.cleanup();
  });
  const start = async (args: string[]) => {
    const serve = await startServe(args);
    running.push(serve);
    return serve;
  };

  it('keeps the port and token across restarts, privately, unless --port or --token say otherwise', async () => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    const first = await start([workspace, '--state-dir', state]);
    expect(await first.stop()).toBe(0);
    const files = readdirSync(join(state, 'endpoints'));
    expect(files).toHaveLength(1);
    expect(statSync(join(state, 'endpoints', files[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(join(state, 'endpoints')).mode & 0o777).toBe(0o700);

    const again = await start([workspace, '--state-dir', state]);
    expect(again.ready).toMatchObject({ url: first.ready.url, token: first.ready.token, viewer: first.ready.viewer });
    await again.stop();

    const chosen = await start([workspace, '--state-dir', state, '--port', '0', '--token', 'my-own-token']);
    expect(chosen.ready.token).toBe('my-own-token');
    expect(chosen.ready.url).not.toBe(first.ready.url);
    await chosen.stop();
    // What was used last is what the next start reuses.
    const last = await start([workspace, '--state-dir', state]);
    expect(last.ready).toMatchObject({ url: chosen.ready.url, token: 'my-own-token' });
  });

  it('takes another free port when the remembered one is taken', async () => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    const first = await start([workspace, '--state-dir', state]);
    // While the first still runs, its port is taken: a second server over the folder picks another.
    const other = await start([workspace, '--state-dir', temp.make(), '--port', new URL(first.ready.url).port]).catch((e: Error) => e);
    expect(other).toBeInstanceOf(Error);
    await first.stop();
    const blocker = await start([temp.make(), '--state-dir', temp.make(), '--port', new URL(first.ready.url).port]);
    const moved = await start([workspace, '--state-dir', state]);
    expect(moved.ready.url).not.toBe(first.ready.url);
    expect(moved.ready.token).toBe(first.ready.token);
    await blocker.stop();
  });
});
