import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listServers } from '../../server/registry/index.js';
import { run } from '../helpers/cli-in-process.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run as binary, startServe, stopRegistered } from './serve-process.js';

/**
 * What the commands do in a folder no server records: after `stop`, or where nothing ever ran. `sessions` and `status` read the store; `open` starts a server.
 * The commands run in the test's process (test/helpers/cli-in-process.ts), the first `open` through the binary.
 */
describe('commands with no server running', () => {
  const temp = new TempDirs();
  let workspace: string;
  let state: string;
  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });

  beforeAll(async () => {
    workspace = makeRepo(temp.make('cs-noserver-ws-'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    state = temp.make('cs-noserver-state-');
    const serve = await startServe([workspace, '--state-dir', state]);
    for (const [message, file] of [
      ['Change a', 'a.txt'],
      ['Change b', 'b.txt'],
    ]) {
      expect((await cli('turn', 'start', '--message', message!)).code).toBe(0);
      writeFileSync(join(workspace, file!), `${file} changed\n`);
      expect((await cli('turn', 'end')).code).toBe(0);
    }
    expect((await cli('stop')).code).toBe(0);
    await serve.stop();
  }, 90_000);

  afterAll(async () => {
    await stopRegistered(state);
    temp.cleanup();
  });

  it('sessions reads the store and starts nothing', async () => {
    const listed = await cli('sessions');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      /^Recording:\n {2}\S.* — \d{4}-\d\d-\d\d \d\d:\d\d\n {4}2 turns; started \d{4}-\d\d-\d\d \d\d:\d\d; --session [0-9A-Z]{26}\n$/,
    );
    expect(listed.stderr).toBe(`No server is running for ${workspace}; these are read from its store ("changeset-server open" starts one to review them).\n`);
    const json = JSON.parse((await cli('sessions', '--json')).stdout);
    expect(json.sessions).toEqual([expect.objectContaining({ state: 'recording', turns: 2 })]);
    expect(JSON.stringify(json)).not.toMatch(/"status":\s*\d/);
    expect(await listServers(state)).toEqual([]);
  });

  it('shows the stored sessions and their numbered turns, says on stderr that no server runs, and starts none', async () => {
    const shown = await cli('status');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr).toBe(`No server is running for ${workspace}; this is its stored record ("changeset-server serve" starts one).\n`);
    expect(shown.stdout).toMatch(/^\S.*\(not ended: resumed when a server starts\)\n {2}session id: {2}[0-9A-Z]{26}\n/);
    expect(shown.stdout).toContain(`  directory:   ${workspace}\n`);
    expect(shown.stdout).toContain('  turns:       2 (latest last)\n    #1 complete "Change a"\n    #2 complete "Change b"\n');
    expect(await listServers(state)).toEqual([]);

    // --turns and --json as with a server; the JSON says the record is the stored one.
    const last = await cli('status', '--turns', '1', '--json');
    expect(last.code, last.stderr).toBe(0);
    const json = JSON.parse(last.stdout);
    expect(json).toMatchObject({ stored: true, note: expect.stringContaining('No server is running') });
    expect(json.sessions).toEqual([
      expect.objectContaining({ state: 'recording', turns: 2, recentTurns: [{ index: 2, message: 'Change b', state: 'complete' }] }),
    ]);

    // A session the store does not hold is refused in words.
    const unknown = await cli('status', '--session', 'NOSUCHSESSION');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no session "NOSUCHSESSION" was recorded in');
    expect(await listServers(state)).toEqual([]);
  });

  it('errors suggest "changeset-server serve", never the npm start of the folder the person is in', async () => {
    const elsewhere = temp.make('cs-noserver-empty-');
    const status = await run(['status', '--state-dir', temp.make('cs-noserver-state2-')], { cwd: elsewhere });
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('start one with "changeset-server serve" in the project folder');
    expect(status.stderr).not.toContain('npm');
    const sessions = await run(['sessions', '--state-dir', temp.make('cs-noserver-state3-')], { cwd: elsewhere });
    expect(sessions).toMatchObject({ code: 0, stdout: 'no sessions\n' });
  });

  it('open in a subfolder of recorded history starts a server, says so, and prints the viewer link', async () => {
    const sub = join(workspace, 'src');
    mkdirSync(sub, { recursive: true });
    // The state directory given relative to the subfolder, as a person types it.
    const opened = await binary(['open', '--state-dir', relative(sub, state)], { cwd: sub });
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n$/);
    expect(opened.stderr).toContain(`Started a server for ${workspace} in the background`);
    const servers = await listServers(state);
    expect(servers.map((s) => s.directories)).toEqual([[workspace]]);
    // Found running the second time: nothing to say.
    const again = await run(['open', '--state-dir', relative(sub, state)], { cwd: sub });
    expect(again).toMatchObject({ code: 0, stderr: '' });
  }, 60_000);
});
