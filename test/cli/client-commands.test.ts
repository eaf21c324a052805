import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StatusResult } from '../../server/harness/status.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { recordTurn } from '../helpers/changesets.js';
import { run } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { startServe, type ServeProcess } from './serve-process.js';

/** The commands run in the test's process (test/helpers/cli-in-process.ts); client-modules.test.ts runs them through the binary. */
describe('turn and status commands', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  const clients: TestClient[] = [];

  /** A client recording turns over the harness methods, as an IDE or agent would; closed after the test. */
  async function harness(): Promise<TestClient> {
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    await client.initialize();
    clients.push(client);
    return client;
  }

  /** A repository and a server recording it. */
  async function start(): Promise<void> {
    workspace = makeRepo(temp.make(), { 'src/a.txt': 'a\n', 'b.txt': 'b\n' });
    state = temp.make();
    serve = await startServe([workspace, '--state-dir', state]);
  }

  async function stop(): Promise<void> {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await serve?.stop('SIGKILL');
    temp.cleanup();
  }

  // The failures need no turn numbered from the first: they follow the turn of the first test on its server.
  describe('over one server', () => {
    beforeAll(start);
    afterAll(stop);

    it('start a turn, end it, and show it, finding the server through the registry from a subdirectory', async () => {
      const cwd = join(workspace, 'src');
      const started = await run(['turn', 'start', '--message', 'Rename things', '--id', 'shell-1', '--state-dir', state], { cwd });
      expect(started).toMatchObject({ code: 0, stdout: 'shell-1\n' });

      const active = await run(['status', '--json', '--state-dir', state], { cwd });
      const status = JSON.parse(active.stdout) as StatusResult;
      expect(status.sessions[0]).toMatchObject({ channel: serve.ready.sessions[0], activeTurn: { turnId: 'shell-1', message: 'Rename things' } });

      writeFileSync(join(workspace, 'src/a.txt'), 'a\nb\n');
      const ended = await run(['turn', 'end', '--json', '--state-dir', state], { cwd });
      expect(ended.code).toBe(0);
      const { summary } = JSON.parse(ended.stdout) as { summary: TurnSummary };
      expect(summary).toMatchObject({ turn: 'shell-1', total: 1, added: 1, deleted: 0 });

      const human = await run(['status', '--state-dir', state], { cwd });
      expect(human.stdout).toContain('no active turn');
      expect(human.stdout).toContain('#1 complete  1 file +1 -0 "Rename things"');
    });

    it('reports failures with exit code 1 and usage mistakes with exit code 2', async () => {
      const mistakes = [
        ['turn', 'stop'],
        ['turn', 'end', '--state', 'done'],
        ['status', '--bogus'],
        ['status', '--turns', 'x'],
        ['revert', '--lines', '1-2'],
      ];
      // Each is refused and changes nothing: they run side by side.
      const [noServer, noTurn] = await Promise.all([
        run(['status', '--state-dir', temp.make()], { cwd: workspace }),
        run(['turn', 'end', '--state-dir', state], { cwd: workspace }),
        ...mistakes.map(async (args) => {
          const result = await run([...args, '--state-dir', state], { cwd: workspace });
          expect(result.code, args.join(' ')).toBe(2);
        }),
      ]);
      expect(noServer!.code).toBe(1);
      expect(noServer!.stderr).toContain('no running changeset-server records');
      expect(noTurn!.code).toBe(1);
      expect(noTurn!.stderr).toContain('no turn is active');

      // A turn id the session already has (recorded over the harness here).
      await recordTurn(await harness(), serve.ready.sessions[0]!, 'dup', () => undefined);
      const duplicate = await run(['turn', 'start', '--id', 'dup', '--state-dir', state], { cwd: workspace });
      expect(duplicate.code).toBe(1);
      expect(duplicate.stderr).toBe('changeset-server turn: turn "dup" already exists in this session\n');
    });
  });

  describe('each over a server of its own', () => {
    beforeEach(start);
    afterEach(stop);

    it('takes --url and --token instead of the registry', async () => {
      const args = ['--url', serve.ready.url, `--token=${serve.ready.token!}`, '--state-dir', temp.make()];
      // A refused token changes nothing: that command runs beside the first.
      const [started, wrong] = await Promise.all([
        run(['turn', 'start', ...args], { cwd: temp.make() }),
        run(['status', '--url', serve.ready.url, '--token', 'wrong'], { cwd: workspace }),
      ]);
      expect(started.code).toBe(0);
      const turnId = started.stdout.trim();
      expect(turnId).toMatch(/^[0-9A-Z]{26}$/);
      const ended = await run(['turn', 'end', '--state', 'cancelled', ...args], { cwd: temp.make() });
      expect(ended).toMatchObject({ code: 0, stdout: 'turn 1: 0 files changed, +0 -0\n' });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('refused the token (HTTP 401)');
    });

    it('reverts a line range, a file, and a whole turn', async () => {
      const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`);
      writeFileSync(join(workspace, 'c.txt'), lines.join(''));
      // The turns are recorded over the harness: the turn commands have the tests above.
      const client = await harness();
      const session = serve.ready.sessions[0]!;
      await recordTurn(client, session, 'setup', () => undefined);
      await recordTurn(client, session, 'r1', () => {
        writeFileSync(join(workspace, 'b.txt'), 'b\nmore\n');
        writeFileSync(join(workspace, 'src/a.txt'), 'changed\n');
        const edited = [...lines];
        edited[1] = 'LINE 2\n';
        edited[17] = 'LINE 18\n';
        writeFileSync(join(workspace, 'c.txt'), edited.join(''));
      });

      // A file the turn did not change is refused and nothing is written: it runs beside the first revert.
      const [range, missing] = await Promise.all([
        run(['revert', '--turn', 'r1', '--file', 'c.txt', '--lines', '18-18', '--state-dir', state], { cwd: workspace }),
        run(['revert', '--turn', 'r1', '--file', 'nope.txt', '--state-dir', state], { cwd: workspace }),
      ]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('turn 2 ("Edited b.txt, c.txt and 1 more") did not change nope.txt (it changed: b.txt, c.txt, src/a.txt)');
      expect(range, range.stderr).toMatchObject({ code: 0 });
      const afterRange = [...lines];
      afterRange[1] = 'LINE 2\n';
      expect(readFileSync(join(workspace, 'c.txt'), 'utf8')).toBe(afterRange.join(''));

      const file = await run(['revert', '--turn', 'r1', '--file', 'b.txt', '--state-dir', state], { cwd: workspace });
      expect(file, file.stderr).toMatchObject({ code: 0 });
      expect(readFileSync(join(workspace, 'b.txt'), 'utf8')).toBe('b\n');
      expect(readFileSync(join(workspace, 'src/a.txt'), 'utf8')).toBe('changed\n');

      const turn = await run(['revert', '--turn', 'r1', '--state-dir', state], { cwd: workspace });
      expect(turn, turn.stderr).toMatchObject({ code: 0 });
      expect(readFileSync(join(workspace, 'src/a.txt'), 'utf8')).toBe('a\n');
      expect(readFileSync(join(workspace, 'c.txt'), 'utf8')).toBe(lines.join(''));
    });
  });
});
