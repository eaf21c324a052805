import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { BIN, startServe, stopRegistered, type ServeProcess } from './serve-process.js';

/** Runs the command on a terminal (a pseudo-terminal from `script`), typing `answer` when it asks. */
function onTerminal(args: string[], cwd: string, answer: string): Promise<{ code: number | null; output: string }> {
  const line = [process.execPath, resolve(BIN), ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qec', line, '/dev/null'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let answered = false;
    const take = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!answered && output.includes('[y/N]')) {
        answered = true;
        child.stdin.write(answer);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', fail);
    child.once('exit', (code) => done({ code, output }));
  });
}

/** The commands run in the test's process (test/helpers/cli-in-process.ts), those on a terminal through the binary. */
describe('forget', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  let id: string;
  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });

  afterAll(() => temp.cleanup());

  it('lists in its help only the flags it takes, and refuses the others', async () => {
    // Its arguments are checked before any server or store is looked for: no session is needed.
    [workspace, state] = [temp.make('cs-forget-ws-'), temp.make('cs-forget-state-')];
    const help = await cli('forget', '--help');
    expect([...new Set(help.stdout.match(/--[a-z-]+/g))].sort()).toEqual(['--dry-run', '--json', '--state-dir', '--token', '--url', '--yes']);
    const wrong = await cli('forget', '01M8T46DSY4X7W3CNR5161QKE4', '--session', '01M8T46DSY4X7W3CNR5161QKE4');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('unknown option --session');
  });

  describe('a session with a turn, recording', () => {
    let harness: TestClient;
    let sessions = 0;

    // One server for the tests: each forgets a session of its own, the server's first, then one a client creates over the folder.
    beforeAll(async () => {
      workspace = makeRepo(temp.make('cs-forget-ws-'), { 'a.txt': 'a\n' });
      state = temp.make('cs-forget-state-');
      serve = await startServe([workspace, '--state-dir', state]);
      harness = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
      await harness.initialize();
    }, 60_000);

    beforeEach(async () => {
      let channel = serve.ready.sessions[0]!;
      if (sessions++ > 0) {
        channel = `ahp-session:/forget-${sessions}`;
        await harness.request('createSession', { channel, workingDirectory: pathToFileURL(workspace).href });
      }
      id = channel.replace('ahp-session:/', '');
      expect((await cli('turn', 'start', '--message', 'Change a')).code).toBe(0);
      writeFileSync(join(workspace, 'a.txt'), `A${sessions}\n`);
      expect((await cli('turn', 'end')).code).toBe(0);
    }, 60_000);

    afterAll(async () => {
      await harness?.close();
      await serve?.stop('SIGKILL');
      await stopRegistered(state);
    });

    const listed = async () => JSON.parse((await cli('sessions', '--json')).stdout).sessions as { id: string }[];

    it('says what would go on a dry run, refuses without --yes when nobody can be asked, and removes it with --yes', async () => {
      const dry = await cli('forget', id, '--dry-run');
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(
        /^Dry run, nothing removed: forget would remove 1 session, ".*" \(still recording, started [\d-]+ [\d:]+\) and its 1 turn\.\n$/,
      );
      const dryJson = JSON.parse((await cli('forget', id, '--dry-run', '--json')).stdout);
      expect(dryJson).toMatchObject({ dryRun: true, session: { id, turns: 1, recording: true } });

      // No terminal to ask on (stdin is a pipe): refused, nothing removed.
      const refused = await cli('forget', id);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('add --yes to confirm (or --dry-run to see what would go)');
      expect((await listed()).map((s) => s.id)).toEqual([id]);

      const forgot = await cli('forget', id, '--yes');
      expect(forgot.code, forgot.stderr).toBe(0);
      expect(forgot.stdout).toMatch(/^Forgot ".*" \(still recording, started .*\) and its 1 turn: its history is removed from the store\.\n$/);
      expect(await listed()).toEqual([]);
    }, 90_000);

    it('asks on a terminal: anything but yes keeps the session, y removes it', async () => {
      const kept = await onTerminal(['forget', id, '--state-dir', state], workspace, 'n\n');
      expect(kept.output).toContain('and its 1 turn for good? [y/N]');
      expect(kept.output).toContain('Nothing removed.');
      expect(kept.code).toBe(1);
      expect((await listed()).map((s) => s.id)).toEqual([id]);

      const removed = await onTerminal(['forget', id, '--state-dir', state], workspace, 'y\n');
      expect(removed.code, removed.output).toBe(0);
      expect(removed.output).toContain('its history is removed from the store');
      expect(await listed()).toEqual([]);
    }, 90_000);
  });
});
