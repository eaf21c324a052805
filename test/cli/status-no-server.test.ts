import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listServers } from '../../server/registry/index.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run, startServe, stopRegistered } from './serve-process.js';

// Run `npm run build` first: these tests start the built binary.
describe('status with no server running', () => {
  const temp = new TempDirs();
  let workspace: string;
  let state: string;
  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });

  beforeAll(async () => {
    workspace = makeRepo(temp.make('cs-status-ws-'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    state = temp.make('cs-status-state-');
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
});
