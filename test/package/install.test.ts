import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/**
 * The package as users get it: `npm pack`, then the tarball installed in an
 * empty directory without dev dependencies, then the installed command
 * serving a repository, its viewer, a turn and a revert. (`npm test` builds
 * first; `npm run build` before running this file alone.)
 */
const temp = new TempDirs();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  temp.cleanup();
});

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

describe('the packed package', () => {
  it('installs from its tarball without dev dependencies and serves, shows the viewer, records a turn and reverts it', async () => {
    const packDir = temp.make('pack-');
    // The build already ran; packing must not rebuild into the tree under test.
    const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], process.cwd())) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('bin/changeset-server.js');
    expect(files).toContain('dist/viewer/index.html');
    expect(files.some((f) => f.startsWith('test/') || f.startsWith('bench/') || f.startsWith('server/'))).toBe(false);

    const app = temp.make('app-');
    // An empty project to install into, written directly rather than by `npm init -y` (one npm start less).
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2)}\n`);
    npm(['install', '--omit=dev', '--prefer-offline', join(packDir, packed[0]!.filename)], app);
    const installed = readdirSync(join(app, 'node_modules'));
    // Bundled into the viewer at build time, or used only by tests and benches.
    for (const devOnly of ['vitest', 'typescript', 'esbuild', 'playwright-core', 'diff', 'highlight.js']) expect(installed).not.toContain(devOnly);
    const bin = join(app, 'node_modules', '.bin', 'changeset-server');
    expect(existsSync(bin)).toBe(true);
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toContain(JSON.parse(readFileSync('package.json', 'utf8')).version);

    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const child = spawn(bin, ['serve', repo, '--json', '--port', '0', '--state-dir', temp.make('state-')], { stdio: ['ignore', 'pipe', 'inherit'], cwd: app });
    children.push(child);
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
    });
    const ready = JSON.parse(line) as { url: string; token: string; sessions: string[]; viewer?: string };
    const viewer = await fetch(ready.viewer ?? `${ready.url.replace(/^ws/, 'http')}?token=${ready.token}`);
    expect(viewer.status).toBe(200);
    expect(await viewer.text()).toContain('<script');

    const client = await TestClient.connect(ready.url, { token: ready.token });
    await client.initialize();
    const session = ready.sessions[0]!;
    await client.request('harness/turnStarted', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    writeFiles(repo, { 'a.txt': 'changed by the turn\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    const turn = expandChangesetUri(changesetUriTemplate(session.slice('ahp-session:/'.length), 'turn'), { turnId: 't1' });
    await subscribeReady(client, turn);
    const result = await client.request<{ message: string }>('invokeChangesetOperation', { channel: turn, operationId: 'revert' }, { timeoutMs: 20_000 });
    expect(result.message).toMatch(/^Reverted 1 file/);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    await client.close();
  }, 300_000);
});
