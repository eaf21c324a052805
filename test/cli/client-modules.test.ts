import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as inProcess } from '../helpers/cli-in-process.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run, startServe, type ServeProcess } from './serve-process.js';

/**
 * What the client commands pay for at start-up: each is a process a person
 * (or an agent) waits on, so each loads what it runs and nothing else — no
 * dependency for `status`, `sessions` and `turn`, and none of the server.
 */
describe('what each client command loads', () => {
  const temp = new TempDirs();
  let workspace: string;
  let state: string;
  let serve: ServeProcess;

  beforeAll(async () => {
    workspace = makeRepo(temp.make('cs-modules-ws-'), { 'hello.txt': 'hi\n' });
    state = temp.make('cs-modules-state-');
    serve = await startServe([workspace, '--state-dir', state]);
    expect((await inProcess(['turn', 'start', '--message', 'Greet', '--state-dir', state], { cwd: workspace })).code).toBe(0);
    writeFileSync(join(workspace, 'hello.txt'), 'hello\n');
    expect((await inProcess(['turn', 'end', '--state-dir', state], { cwd: workspace })).code).toBe(0);
  });

  afterAll(async () => {
    await serve?.stop();
    temp.cleanup();
  });

  /** Runs the command with every loaded module logged; its output, and the modules as paths of the checkout. */
  async function loads(args: string[], stateDir = state): Promise<{ stdout: string; ours: string[]; dependencies: string[] }> {
    const log = join(temp.make(), 'modules.log');
    const result = await run([...args, '--state-dir', stateDir], {
      cwd: workspace,
      env: { CHANGESET_SERVER_TEST_MODULE_LOG: log },
      nodeArgs: ['--import', join(process.cwd(), 'test', 'cli', 'module-log.mjs')],
    });
    // `turn start` tells the person the turn's number on stderr (its stdout is the id, for scripts).
    const said = args[0] === 'turn' && args[1] === 'start' ? expect.stringMatching(/^Started turn \d+\.\n$/) : '';
    expect(result, args.join(' ')).toMatchObject({ code: 0, stderr: said });
    const loaded = readFileSync(log, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith('file:'))
      .map((url) => relative(process.cwd(), fileURLToPath(url)));
    const dependencies = [...new Set(loaded.filter((m) => m.includes('node_modules')).map((m) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m)![1]!))];
    return { stdout: result.stdout, ours: loaded.filter((m) => !m.includes('node_modules')), dependencies };
  }

  /** Modules of the server itself, the protocol's index and validators, or the reducers' index: none is a client's business. */
  const SERVER_SIDE =
    /^dist\/(protocol\/(index|validate)|reducers\/index|server\/(app|service|store\/(?!state-dir\.js)|transport|connection|session|channels|security\/(?!token\.js)|snapshot|watch|diff|changes|disk|changesets|operations|harness|auto-turns|mirror\/(?!mirror-status-text\.js)|registry\/index|mcp)\b)/;

  it('status, sessions, turn start and turn end load about twenty modules of ours and no dependency', async () => {
    for (const args of [['status'], ['sessions'], ['turn', 'start', '--message', 'Again'], ['turn', 'end']]) {
      const { stdout, ours, dependencies } = await loads(args);
      const what = `${args.join(' ')} loaded ${ours.join(', ')}`;
      expect(stdout.length, what).toBeGreaterThan(0);
      // The turn recorded before the file's tests.
      if (args[0] === 'status') expect(stdout, what).toContain('#1 ');
      expect(dependencies, what).toEqual([]);
      expect(
        ours.filter((m) => SERVER_SIDE.test(m)),
        what,
      ).toEqual([]);
      expect(ours, what).toContain(join('dist', 'server', 'client', 'rpc-client.js'));
      expect(ours.length, what).toBeLessThanOrEqual(20);
    }
  }, 90_000);

  it('revert and restore add only the changeset reducer and its URI templates (immer, url-template)', async () => {
    for (const args of [
      ['revert', '--turn', '1', '--dry-run'],
      ['restore', '--turn', '1', '--dry-run'],
    ]) {
      const { stdout, ours, dependencies } = await loads(args);
      const what = `${args.join(' ')} loaded ${ours.join(', ')}`;
      expect(stdout, what).toContain('hello.txt');
      expect(dependencies.sort(), what).toEqual(['immer', 'url-template']);
      expect(
        ours.filter((m) => SERVER_SIDE.test(m)),
        what,
      ).toEqual([]);
      expect(ours.length, what).toBeLessThanOrEqual(25);
    }
  }, 60_000);

  it('serve answers, records and stops without loading the WebSocket and JSON-RPC libraries while no client connects', async () => {
    // A second folder and state: the idle timeout stops this serve once its ready line is out (no client, no turn).
    const folder = makeRepo(temp.make('cs-modules-serve-'), { 'a.txt': 'a\n' });
    const { stdout, ours, dependencies } = await loads(['serve', folder, '--json', '--idle-timeout', '1'], temp.make('cs-modules-serve-state-'));
    const what = `serve loaded ${dependencies.join(', ')} and ${ours.join(', ')}`;
    expect(JSON.parse(stdout)).toMatchObject({ sessions: [expect.stringMatching(/^ahp-session:/)] });
    expect(dependencies.sort(), what).toEqual(['immer', 'url-template']);
    // What the first client, the first operation or --auto-turns loads, each when it comes.
    expect(
      ours.filter((m) => /server\/(transport\/ws-|connection\/(client-connection|params)\.js|operations\/(execute|plan|write-guard)\.js|auto-turns\/)/.test(m)),
      what,
    ).toEqual([]);
  }, 60_000);

  it('--help prints the usage loading the entry point alone, --version the version with the package reader beside it, neither a dependency', async () => {
    const help = await loads(['--help']);
    expect(help.stdout).toMatch(/^Usage: changeset-server/);
    expect(help.ours).toEqual([join('bin', 'changeset-server.js'), join('dist', 'server', 'cli', 'main.js')]);
    expect(help.dependencies).toEqual([]);
    const version = await loads(['--version']);
    expect(version.stdout).toMatch(/^changeset-server \d+\.\d+\.\d+\n$/);
    expect(version.ours).toEqual([
      join('bin', 'changeset-server.js'),
      join('dist', 'server', 'cli', 'main.js'),
      join('dist', 'server', 'client', 'package-root.js'),
    ]);
    expect(version.dependencies).toEqual([]);
  });
});
