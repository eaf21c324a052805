import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';
import { it, type PerTest } from '../helpers/per-test.js';
import { makeRepo } from '../helpers/workspace.js';
import { startServe, type ServeProcess } from './serve-process.js';

/** `serve`, killed after the test if it still runs. */
async function start(defer: PerTest['defer'], args: string[]): Promise<ServeProcess> {
  const serve = await startServe(args);
  defer(() => serve.stop('SIGKILL'));
  return serve;
}

// Each test has its own servers and directories: they run side by side.
describe.concurrent('a stable endpoint per workspace', () => {
  it('keeps the port and token across restarts, privately, unless --port or --token say otherwise', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    const first = await start(defer, [workspace, '--state-dir', state]);
    expect(await first.stop()).toBe(0);
    const files = readdirSync(join(state, 'endpoints'));
    expect(files).toHaveLength(1);
    expect(statSync(join(state, 'endpoints', files[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(join(state, 'endpoints')).mode & 0o777).toBe(0o700);

    const again = await start(defer, [workspace, '--state-dir', state]);
    expect(again.ready).toMatchObject({ url: first.ready.url, token: first.ready.token, viewer: first.ready.viewer });
    await again.stop();

    const chosen = await start(defer, [workspace, '--state-dir', state, '--port', '0', '--token', 'my-own-token']);
    expect(chosen.ready.token).toBe('my-own-token');
    expect(chosen.ready.url).not.toBe(first.ready.url);
    await chosen.stop();
    // What was used last is what the next start reuses.
    const last = await start(defer, [workspace, '--state-dir', state]);
    expect(last.ready).toMatchObject({ url: chosen.ready.url, token: 'my-own-token' });
  });

  it('takes another free port when the remembered one is taken', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    const first = await start(defer, [workspace, '--state-dir', state]);
    // While the first still runs, its port is taken: a second server over the folder picks another.
    const other = await start(defer, [workspace, '--state-dir', temp.make(), '--port', new URL(first.ready.url).port]).catch((e: Error) => e);
    expect(other).toBeInstanceOf(Error);
    await first.stop();
    const blocker = await start(defer, [temp.make(), '--state-dir', temp.make(), '--port', new URL(first.ready.url).port]);
    const moved = await start(defer, [workspace, '--state-dir', state]);
    expect(moved.ready.url).not.toBe(first.ready.url);
    expect(moved.ready.token).toBe(first.ready.token);
    await blocker.stop();
  });
});
