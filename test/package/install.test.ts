import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/**
 * The package as users get it: `npm pack`, then the packed files installed
 * in an empty project beside exactly the packages its declared dependencies
 * need, then the installed command serving a repository, its viewer, a turn
 * and a revert. (`npm test` builds first; `npm run build` before running
 * this file alone.)
 *
 * The dependencies are not fetched and unpacked again by `npm install`
 * (140 packages, about 5,000 files, most of this file's time): they are the
 * ones `npm ci` installed in the checkout from the same `dependencies`,
 * reached by walking each package's own declared dependencies from the
 * packed `package.json`, as Node resolves them; only those are linked into
 * the project's `node_modules`, so a module of ours that imports anything
 * else (a dev dependency, a file left out of the package) fails to load as
 * it would for a user. The command is linked into `node_modules/.bin` from
 * the packed `bin`, as npm links it.
 */
const temp = new TempDirs();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  temp.cleanup();
});

const ROOT = process.cwd();

interface Manifest {
  name: string;
  version: string;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The directory of package `name` as Node finds it from `dir` in the checkout (up its `node_modules` folders), if installed. */
function installedFrom(dir: string, name: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (at === ROOT || dirname(at) === at) return undefined;
  }
}

/**
 * The checkout's installed packages that a package with `root`'s declared
 * dependencies needs: each dependency as found from its dependent, then its
 * own dependencies, peers and the optional ones installed for this platform.
 */
function dependencyClosure(root: Manifest): Set<string> {
  const needed = new Set<string>();
  const visit = (from: string, pkg: Manifest): void => {
    const optional = new Set([
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.entries(pkg.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional === true)
        .map(([name]) => name),
    ]);
    const names = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
    for (const name of names) {
      const dir = installedFrom(from, name);
      if (!dir) {
        if (optional.has(name)) continue;
        throw new Error(`${pkg.name} depends on ${name}, which the checkout has not installed (npm ci)`);
      }
      if (needed.has(dir)) continue;
      needed.add(dir);
      visit(dir, manifest(dir));
    }
  };
  visit(ROOT, root);
  return needed;
}

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

describe('the packed package', () => {
  it('installs from its tarball with only its declared dependencies and serves, shows the viewer, records a turn and reverts it', async () => {
    const packDir = temp.make('pack-');
    // The build already ran; packing must not rebuild into the tree under test.
    const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], ROOT)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('bin/changeset-server.js');
    expect(files).toContain('dist/viewer/index.html');
    expect(files.some((f) => f.startsWith('test/') || f.startsWith('bench/') || f.startsWith('server/'))).toBe(false);
    // What the build keeps for the next build (tsc's build info, the viewer's inputs) is not the package's.
    expect(files.some((f) => f.startsWith('dist/build-info/') || f.endsWith('.tsbuildinfo'))).toBe(false);

    // An empty project, the package unpacked into its node_modules as npm unpacks it.
    const app = temp.make('app-');
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2)}\n`);
    const modules = join(app, 'node_modules');
    const installedPackage = join(modules, 'changeset-server');
    mkdirSync(installedPackage, { recursive: true });
    execFileSync('tar', ['-xzf', join(packDir, packed[0]!.filename), '-C', installedPackage, '--strip-components=1']);
    const published = manifest(installedPackage);
    expect(published.dependencies).toEqual(manifest(ROOT).dependencies);

    // Its dependencies, and theirs: the packages npm puts at the top of node_modules, each at its place there.
    const needed = dependencyClosure(published);
    for (const dir of needed) {
      const place = relative(join(ROOT, 'node_modules'), dir);
      if (place.includes('node_modules')) continue;
      mkdirSync(dirname(join(modules, place)), { recursive: true });
      symlinkSync(dir, join(modules, place), 'dir');
    }
    const installed = readdirSync(modules);
    for (const name of Object.keys(published.dependencies ?? {})) expect(installed).toContain(name.split('/')[0]);
    // Bundled into the viewer at build time, or used only by tests and benches.
    for (const devOnly of ['vitest', 'typescript', 'esbuild', 'playwright-core', 'diff', 'highlight.js']) expect(installed).not.toContain(devOnly);

    // The command, linked from the packed bin as npm links it.
    expect(Object.keys(published.bin ?? {})).toEqual(['changeset-server']);
    const target = join(installedPackage, published.bin!['changeset-server']!);
    expect(readFileSync(target, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    chmodSync(target, 0o755);
    mkdirSync(join(modules, '.bin'));
    const bin = join(modules, '.bin', 'changeset-server');
    symlinkSync(relative(join(modules, '.bin'), target), bin);
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8', cwd: app }).trim()).toContain(manifest(ROOT).version);

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
