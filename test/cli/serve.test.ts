import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { describe } from 'vitest';
import type { ActionEnvelope, SessionState } from '../../protocol/index.js';
import { workspaceLayout } from '../../server/store/index.js';
import { TestClient } from '../helpers/client.js';
import { upgradeStatus } from '../helpers/upgrade.js';
import { it, type PerTest } from '../helpers/per-test.js';
import { makeRepo } from '../helpers/workspace.js';
import { run, startServe, type ServeProcess } from './serve-process.js';

function get(url: string): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

/** `serve`, killed after the test if it still runs. */
async function start(defer: PerTest['defer'], args: string[], env?: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const serve = await startServe(args, env);
  defer(() => serve.stop('SIGKILL'));
  return serve;
}

// Each test has its own servers and directories: they run side by side.
describe.concurrent('serve', { timeout: 120_000 }, () => {
  it('requires the token it prints, registers itself owner-only, serves the viewer page with security headers, and unregisters on exit', async ({
    temp,
    defer,
    expect,
  }) => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    const serve = await start(defer, [workspace, '--state-dir', state]);
    const { ready } = serve;
    expect(await upgradeStatus(ready.url)).toBe(401);
    expect(await upgradeStatus(ready.url, { authorization: `Bearer ${ready.token}` })).toBe(101);
    expect(await upgradeStatus(ready.url, { authorization: `Bearer ${ready.token}`, origin: 'http://evil.example' })).toBe(403);

    const entryPath = join(state, 'servers', `${serve.child.pid}.json`);
    expect(statSync(entryPath).mode & 0o777).toBe(0o600);
    const entry = JSON.parse(readFileSync(entryPath, 'utf8')) as Record<string, unknown>;
    expect(entry).toMatchObject({ pid: serve.child.pid, url: ready.url, token: ready.token, viewer: ready.viewer, directories: [workspace] });

    const page = await get(ready.viewer);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain(`connect-src 'self' ${ready.url.replace(/\/$/, '')}`);
    expect(page.headers['cache-control']).toBe('no-store');

    expect(await serve.stop()).toBe(0);
    expect(existsSync(entryPath)).toBe(false);
  });

  it('takes the token from --token or CHANGESET_SERVER_TOKEN', async ({ temp, defer, expect }) => {
    let serve: ServeProcess;
    const state = temp.make();
    serve = await start(defer, [temp.make(), '--state-dir', state, '--no-session'], { CHANGESET_SERVER_TOKEN: 'from-the-environment' });
    expect(serve.ready.token).toBe('from-the-environment');
    expect(serve.ready.sessions).toEqual([]);
    await serve.stop();
    serve = await start(defer, [temp.make(), '--state-dir', state, '--token', 'from-the-flag'], { CHANGESET_SERVER_TOKEN: 'from-the-environment' });
    expect(serve.ready.token).toBe('from-the-flag');
    expect(await upgradeStatus(`${serve.ready.url}?token=from-the-flag`)).toBe(101);
  });

  it('runs without auth on loopback with --no-auth, and refuses --no-auth on 0.0.0.0', async ({ temp, defer, expect }) => {
    // The refusal is its own process: it runs beside the server that starts.
    const [serve, refused] = await Promise.all([
      start(defer, [temp.make(), '--state-dir', temp.make(), '--no-auth']),
      run(['serve', temp.make(), '--host', '0.0.0.0', '--no-auth', '--state-dir', temp.make()]),
    ]);
    expect(serve.ready.token).toBeNull();
    expect(serve.ready.viewer).toBe(serve.ready.url.replace('ws://', 'http://'));
    expect(await upgradeStatus(serve.ready.url)).toBe(101);

    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--no-auth is only allowed on a loopback host');
    expect(refused.stdout).toBe('');
  });

  it('records automatic turns with --auto-turns', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const serve = await start(defer, [workspace, '--state-dir', temp.make(), '--auto-turns=300']);
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    await client.initialize();
    const session = await client.subscribe(serve.ready.sessions[0]!);
    const chat = (session.snapshot!.state as SessionState).defaultChat!;
    await client.subscribe(chat);
    // serve reads the starting state after its ready line: an edit before it is recorded belongs to that state, not to a turn.
    if ((session.snapshot!.state as SessionState).lifecycle !== 'ready') await client.waitForEnvelope((e) => e.action.type === 'session/ready', 20_000);
    writeFileSync(join(workspace, 'a.txt'), 'a\nb\n');
    const ended = await client.waitForEnvelope((e) => e.action.type === 'chat/turnComplete', 20_000);
    expect(summaryOf(ended)?.files.map((f) => f.path)).toEqual(['a.txt']);
    await client.close();
  });

  it('on SIGTERM ends the turn being recorded as cancelled, stores its end state, closes clients with 1001 and exits 0', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make();
    const serve = await start(defer, [workspace, '--state-dir', state]);
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    await client.initialize();
    const channel = serve.ready.sessions[0]!;
    const chat = ((await client.subscribe(channel)).snapshot!.state as SessionState).defaultChat!;
    await client.subscribe(chat);
    await client.request('harness/turnStarted', { channel, turnId: 'interrupted' }, { timeoutMs: 20_000 });
    writeFileSync(join(workspace, 'a.txt'), 'a\nchanged\n');

    const closed = client.waitForClose(20_000);
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect((await closed).code).toBe(1001);
    const cancelled = client.envelopes.find((e) => e.action.type === 'chat/turnCancelled');
    expect(cancelled).toBeDefined();
    const summary = summaryOf(cancelled!)!;
    expect(summary.files.map((f) => f.path)).toEqual(['a.txt']);
    // The end snapshot is in the server's store, readable after the process is gone.
    const { shadowDir } = workspaceLayout(state, workspace);
    expect(execFileSync('git', ['--git-dir', shadowDir, 'cat-file', '-t', summary.snapshot!.after], { encoding: 'utf8' }).trim()).toBe('tree');
    expect(serve.stderr()).toBe('');
  });

  it('refuses bad flags with exit code 2', async ({ temp, expect }) => {
    await Promise.all(
      [['--allow-origin', 'not an origin'], ['--token', ''], ['--no-auth=1'], ['--auto-turns=0']].map(async (args) => {
        const result = await run(['serve', temp.make(), '--state-dir', temp.make(), ...args]);
        expect(result.code, args.join(' ')).toBe(2);
      }),
    );
  });
});

function summaryOf(envelope: ActionEnvelope): { files: { path: string }[]; snapshot?: { after: string } } | undefined {
  const meta = (envelope.action as { _meta?: { summary?: unknown } })._meta;
  return meta?.summary as { files: { path: string }[]; snapshot?: { after: string } } | undefined;
}
