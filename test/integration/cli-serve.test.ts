import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { describe } from 'vitest';
import { TestClient } from '../helpers/client.js';
import { it, type PerTest } from '../helpers/per-test.js';

// Runs the built binary (`npm test` builds first; run `npm run build` before running this file alone).
const BIN = 'bin/changeset-server.js';
const run = promisify(execFile);

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing a line`)));
  });
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** A child process of the test, killed after it if it still runs. */
function started(child: ChildProcess, defer: PerTest['defer']): ChildProcess {
  defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

// Each test has its own process and directories: they run side by side.
describe.concurrent('changeset-server serve', { timeout: 120_000 }, () => {
  it('prints one JSON ready line, serves AHP, and exits 0 on SIGTERM', async ({ temp, defer, expect }) => {
    const workspace = temp.make('changeset-server-cli-');
    const child = started(
      spawn(process.execPath, [BIN, 'serve', workspace, '--json', '--port', '0', '--state-dir', join(workspace, 'state'), '--auto-turns'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      defer,
    );
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ready = JSON.parse(await firstLine(child)) as { url: string; token: string; sessions: string[]; viewer: string };
    expect(ready.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/$/);
    expect(ready.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ready.viewer).toBe(`${ready.url.replace('ws://', 'http://')}?token=${ready.token}`);
    expect(ready.sessions).toHaveLength(1);
    expect(ready.sessions[0]).toMatch(/^ahp-session:\/[0-9A-Z]{26}$/);

    const client = await TestClient.connect(ready.url, { token: ready.token });
    expect((await client.initialize()).protocolVersion).toBe('0.6.0');

    const closed = client.waitForClose();
    child.kill('SIGTERM');
    expect(await exitCode(child)).toBe(0);
    expect((await closed).code).toBe(1001);
    client.assertValid();
    expect(stderr).toBe('');
  });

  it('prints a short human line without --json and exits 0 on SIGINT', async ({ temp, defer, expect }) => {
    const workspace = temp.make('changeset-server-cli-');
    const child = started(
      spawn(process.execPath, [BIN, 'serve', workspace, '--port=0', '--auto-turns=500'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, XDG_STATE_HOME: join(workspace, '.state-home') },
      }),
      defer,
    );
    const line = await firstLine(child);
    expect(line).toMatch(/^changeset-server listening on ws:\/\/127\.0\.0\.1:\d+\/ /);
    child.kill('SIGINT');
    expect(await exitCode(child)).toBe(0);
  });

  it('rejects an unknown flag with exit code 2 and the usage', async ({ expect }) => {
    const failure = await run(process.execPath, [BIN, 'serve', '--bogus']).catch((err: { code: number; stderr: string }) => err);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toContain('unknown option --bogus');
  });

  it('rejects a bad port with exit code 2', async ({ expect }) => {
    // The three runs are independent: started together, they take about as long as one.
    const failures = await Promise.all(
      ['70000', 'abc', '-1'].map((port) => run(process.execPath, [BIN, 'serve', '--port', port]).catch((err: { code: number; stderr: string }) => err)),
    );
    for (const failure of failures) expect(failure).toMatchObject({ code: 2 });
  });

  it('rejects a directory that does not exist with exit code 2', async ({ temp, expect }) => {
    const workspace = temp.make('changeset-server-cli-');
    const failure = await run(process.execPath, [BIN, 'serve', join(workspace, 'missing')]).catch((err: { code: number }) => err);
    expect(failure).toMatchObject({ code: 2 });
  });
});
