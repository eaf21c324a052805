import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StatusResult } from '../../server/harness/status.js';
import { isProcessAlive } from '../../server/registry/index.js';
import { recordTurn } from '../helpers/changesets.js';
import { run } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run as binary, startServe, stopRegistered, type ServeProcess } from './serve-process.js';

const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');

describe('the command line as a client people use', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  const clients: TestClient[] = [];
  let turns = 0;
  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });
  const read = (rel: string) => readFileSync(join(workspace, rel), 'utf8');

  /** A repository and a server recording it. */
  async function start(): Promise<void> {
    workspace = makeRepo(temp.make(), { 'a.txt': lines(30), 'b.txt': 'b\n' });
    state = temp.make();
    serve = await startServe([workspace, '--state-dir', state]);
  }

  async function stop(): Promise<void> {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    turns = 0;
    await serve?.stop('SIGKILL');
    // A server a command started in the background for the folder's history.
    if (state) await stopRegistered(state);
    temp.cleanup();
  }

  /** A client of the server over the harness methods, as an IDE or agent would record turns; closed after the test. */
  async function harness(): Promise<TestClient> {
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    await client.initialize();
    clients.push(client);
    return client;
  }

  /** Records a turn over the harness (the turn commands have their own tests, below and in client-commands). */
  async function turn(message: string, edit: () => void): Promise<void> {
    const client = clients[0] ?? (await harness());
    await recordTurn(client, serve.ready.sessions[0]!, `t${++turns}`, edit, message);
  }

  /** The session's turn count, as the server has it. */
  async function turnCount(): Promise<number> {
    const client = clients[0] ?? (await harness());
    const status = await client.request<StatusResult>('harness/status', { channel: serve.ready.sessions[0]!, turns: 0 });
    return status.sessions[0]!.turnCount;
  }

  // Neither records a turn before its own: they share a server.
  describe('over one server', () => {
    beforeAll(start);
    afterAll(stop);

    // The binary itself, once per file: its exit codes and output through bin/changeset-server.js; the other tests run the commands in
    // the test's process (test/helpers/cli-in-process.ts).
    it('prints its version, the viewer link, and suggests the nearest command and option', async () => {
      const args = (...a: string[]) => [...a, '--state-dir', state];
      const [version, status, typo, command] = await Promise.all([
        binary(['--version']),
        binary(args('status'), { cwd: workspace }),
        binary(args('revert', '--dryrun'), { cwd: workspace }),
        binary(['revrt']),
      ]);
      expect(version.stdout).toMatch(/^changeset-server \d+\.\d+\.\d+\n$/);
      expect(status.stdout).toContain(`viewer: ${serve.ready.viewer}`);
      expect(typo).toMatchObject({ code: 2 });
      expect(typo.stderr).toContain('unknown option --dryrun; did you mean --dry-run?');
      expect(command.stderr).toContain('did you mean "revert"?');
    });

    it('reports a conflict by file, in words, and as JSON with its code', async () => {
      await turn('edit b', () => writeFileSync(join(workspace, 'b.txt'), 'B\n'));
      writeFileSync(join(workspace, 'b.txt'), 'mine\n');
      // Both are refused and write nothing: they run side by side.
      const [human, json] = await Promise.all([cli('revert'), cli('revert', '--json')]);
      expect(human.code).toBe(1);
      expect(human.stderr).toMatch(/^changeset-server revert: Nothing was written: 1 file would lose edits:\n {2}b\.txt: /);
      expect(human.stderr).not.toMatch(/invokeChangesetOperation|-32010/);
      expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: -32010, data: { conflicts: [{ path: 'b.txt' }] } } });
      expect(read('b.txt')).toBe('mine\n');
    });
  });

  describe('each over a server of its own', () => {
    beforeEach(start);
    afterEach(stop);

    it('names turns as status numbers them, dry-runs, reverts lines as typed, restores and undoes, always naming the turn and the files', async () => {
      await turn('make a.txt louder', () => writeFileSync(join(workspace, 'a.txt'), lines(30, { 3: 'LINE 3', 25: 'LINE 25' })));
      await turn('add notes', () => writeFileSync(join(workspace, 'notes.txt'), 'one\ntwo\nthree\n'));
      const status = await cli('status');
      expect(status.stdout).toMatch(/#1 complete {2}1 file \+2 -2 "make a.txt louder"/);
      expect(status.stdout).toMatch(/#2 complete {2}1 file \+3 -0 "add notes"/);

      const dry = await cli('revert', '--turn', '1', '--dry-run');
      expect(dry).toMatchObject({ code: 0, stderr: '' });
      expect(dry.stdout).toBe('Dry run, nothing written: revert turn 1 ("make a.txt louder") would change 1 file:\n  write  a.txt\n');
      expect(read('a.txt')).toBe(lines(30, { 3: 'LINE 3', 25: 'LINE 25' }));

      const range = await cli('revert', '--turn', '1', '--file', 'a.txt', '--lines', '25-25');
      expect(range).toMatchObject({ code: 0, stdout: 'Reverted line 25 of a.txt (turn 1)\n  a.txt\n' });
      expect(read('a.txt')).toBe(lines(30, { 3: 'LINE 3' }));

      // A line of a file the turn created: only that line goes.
      const newFile = await cli('revert', '--turn', 'last', '--file', 'notes.txt', '--lines', '2-2');
      expect(newFile).toMatchObject({ code: 0, stdout: 'Reverted line 2 of notes.txt (turn 2)\n  notes.txt\n' });
      expect(read('notes.txt')).toBe('one\nthree\n');

      const undo = await cli('undo');
      expect(undo).toMatchObject({ code: 0, stdout: 'Undid: Reverted line 2 of notes.txt (turn 2)\n  notes.txt\n' });
      expect(read('notes.txt')).toBe('one\ntwo\nthree\n');

      const restore = await cli('restore', '--turn', '-1', '--and-turns', '--json');
      expect(restore.code).toBe(0);
      const restored = JSON.parse(restore.stdout) as { turn: { index: number }; action: string; files: string[] };
      // The start of turn 2 also had line 25 as turn 1 left it, before the range revert above.
      expect(restored).toMatchObject({
        turn: { index: 2 },
        action: 'Restored the start of turn 2 and removed it and the turns after it: a.txt, notes.txt',
        files: ['a.txt', 'notes.txt'],
      });
      expect(() => read('notes.txt')).toThrow();
      expect(read('a.txt')).toBe(lines(30, { 3: 'LINE 3', 25: 'LINE 25' }));
      expect(await turnCount()).toBe(1);

      // Three refusals: nothing is written, so they run side by side.
      const [missing, nothing, beyond] = await Promise.all([
        cli('revert', '--turn', '7', '--json'),
        cli('revert', '--turn', '1', '--file', 'a.txt', '--lines', '0-2'),
        cli('revert', '--turn', '1', '--file', 'a.txt', '--lines', '31-40'),
      ]);
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout)).toEqual({ error: { code: 'failed', message: expect.stringContaining('has no turn 7') } });
      expect(nothing).toMatchObject({ code: 2 });
      // Refused lines are said back as typed, 1-based.
      expect(beyond).toMatchObject({ code: 1, stderr: 'changeset-server revert: --lines 31-40: a.txt has 30 lines after the turn\n' });
    });

    it('says what turn start did to a turn still being recorded, and which session it used when two record the folder', async () => {
      expect((await cli('turn', 'start', '--id', 'first')).code).toBe(0);
      const second = await cli('turn', 'start', '--id', 'second');
      expect(second).toMatchObject({ code: 0, stdout: 'second\n' });
      expect(second.stderr).toContain('Turn 1 was still being recorded: it ended as cancelled');
      await cli('turn', 'end');

      const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
      await client.initialize();
      await client.request('createSession', { channel: 'ahp-session:/other', workingDirectory: pathToFileURL(workspace).href });
      await client.request('harness/turnStarted', { channel: 'ahp-session:/other', turnId: 'o1' });
      // The session recording a turn is the one used; the command says so and how to pick the other.
      const dry = await cli('status', '--turns', '0');
      expect(dry.code).toBe(0);
      const ended = await cli('turn', 'end');
      expect(ended.stderr).toContain('(--session other). Also recording this folder:');
      expect(ended.stderr).toContain(`add --session ${serve.ready.sessions[0]!.replace('ahp-session:/', '')}`);
      expect(ended.stdout).toMatch(/^turn 1: /);
      await client.close();
    });

    it('lists, stops, brings the history back on demand, and forgets', async () => {
      await turn('one', () => writeFileSync(join(workspace, 'b.txt'), 'B\n'));
      const session = serve.ready.sessions[0]!;
      const sessions = await cli('sessions');
      expect(sessions.stdout).toContain('Recording:');
      expect(sessions.stdout).toContain(`--session ${session.replace('ahp-session:/', '')}`);
      const stopped = await cli('stop');
      expect(stopped.stdout).toBe(`Stopped the server for ${workspace} (pid ${serve.child.pid}). Its sessions resume when it starts again.\n`);
      expect(isProcessAlive(serve.child.pid!)).toBe(false);

      // Nothing runs now; the folder's history is still there for the asking.
      // status reads the stored record and starts nothing; open starts a server and says so.
      const status = await cli('status');
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`session id:  ${session.replace('ahp-session:/', '')}`);
      expect(status.stdout).toContain('#1 ');
      const open = JSON.parse((await cli('open', '--json')).stdout) as { viewer: string; opened: boolean };
      expect(open).toEqual({
        viewer: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/),
        opened: false,
        note: expect.stringMatching(/^Started a server for .* in the background/),
      });
      expect((await cli('revert', '--turn', '1')).stdout).toBe('Reverted turn 1: b.txt\n  b.txt\n');

      expect(await cli('forget', session, '--yes')).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^Forgot ".*" \(.*\) and its 1 turn: its history is removed from the store\.\n$/),
      });
      const [listed, unknown] = await Promise.all([cli('sessions'), cli('forget', session, '--json')]);
      expect(listed.stdout).not.toContain(session);
      expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { code: -32001 } });
      expect((await cli('stop')).code).toBe(0);
    });
  });
});
