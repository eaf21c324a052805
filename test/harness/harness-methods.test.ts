import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatState, SessionState } from '../../protocol/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { TestClient } from '../helpers/client.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { startTestService, type TestService } from '../helpers/service.js';

const SESSION = 'ahp-session:/harness-test';

describe('harness methods over a socket', () => {
  const temp = new TempDirs();
  let t: TestService;
  let client: TestClient;
  let repo: string;

  beforeEach(async () => {
    repo = makeRepo(temp.make('cs-harness-repo-'), {
      '.gitignore': '.env\n',
      'src/a.ts': 'one\ntwo\nthree\n',
      'src/b.ts': 'keep\n',
      'README.md': '# readme\n',
    });
    writeFiles(repo, { '.env': 'SECRET=1\n' });
    t = await startTestService();
    client = await TestClient.connect(t.url);
    await client.initialize();
  });

  afterEach(async () => {
    await client.close();
    await t.stop();
    temp.cleanup();
  });

  async function createSession(channel = SESSION, dir = repo): Promise<void> {
    expect(await client.request('createSession', { channel, workingDirectory: pathToFileURL(dir).href })).toBeNull();
  }

  it('records a full turn: baseline, captures, end snapshot, summary, and the chat turn list', async () => {
    await createSession();
    const session = await client.subscribe(SESSION);
    expect((session.snapshot!.state as SessionState).lifecycle).toBe('ready');
    const chatUri = (session.snapshot!.state as SessionState).defaultChat!;
    await client.subscribe(chatUri);

    const started = await client.request<{ turnId: string; chat: string }>('harness/turnStarted', {
      channel: SESSION,
      turnId: 'turn-1',
      message: 'Refactor a.ts',
    });
    expect(started).toEqual({ turnId: 'turn-1', chat: chatUri });
    await client.waitForEnvelope((e) => e.action.type === 'chat/turnStarted');
    expect(client.state<ChatState>(chatUri)!.activeTurn?.id).toBe('turn-1');

    const captured = await client.request<{ captured: string[] }>('harness/beforeEdit', {
      channel: SESSION,
      turnId: 'turn-1',
      paths: ['.env', join(repo, 'src/a.ts')],
      tool: 'Edit',
    });
    expect(captured.captured).toEqual([join(repo, '.env'), join(repo, 'src/a.ts')]);

    writeFileSync(join(repo, 'src/a.ts'), 'one\nTWO\nthree\nfour\n');
    writeFileSync(join(repo, '.env'), 'SECRET=2\n');
    rmSync(join(repo, 'README.md'));
    writeFiles(repo, { 'src/new.ts': 'x\ny\n' });

    const { summary } = await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: SESSION, turnId: 'turn-1' });
    expect(summary.turn).toBe('turn-1');
    expect(summary.cwd).toBe(repo);
    expect(summary.files.map((f) => [f.path, f.added, f.deleted])).toEqual([
      ['.env', 1, 1],
      ['README.md', 0, 1],
      ['src/a.ts', 2, 1],
      ['src/new.ts', 2, 0],
    ]);
    expect(summary).toMatchObject({ total: 4, added: 5, deleted: 3 });
    // The end snapshot is the tree git would write for the same files.
    git(repo, ['add', '-A']);
    expect(summary.snapshot!.after).toBe(git(repo, ['write-tree']));
    expect(summary.snapshot!.before).toBe(git(repo, ['rev-parse', 'HEAD^{tree}']));

    await client.waitForEnvelope((e) => e.action.type === 'chat/turnComplete');
    const chat = client.state<ChatState>(chatUri)!;
    expect(chat.activeTurn).toBeUndefined();
    expect(chat.turns.map((turn) => [turn.id, turn.state, turn.message.text])).toEqual([['turn-1', 'complete', 'Refactor a.ts']]);
  });

  it('picks a turn id when none is given and reports turns in harness/status', async () => {
    await createSession();
    const { turnId } = await client.request<{ turnId: string }>('harness/turnStarted', { channel: SESSION });
    expect(turnId).toMatch(/^[0-9A-Z]{26}$/);
    let status = await client.request<StatusResult>('harness/status', { channel: SESSION });
    expect(status.sessions).toHaveLength(1);
    expect(status.sessions[0]).toMatchObject({ channel: SESSION, workingDirectories: [repo], turnCount: 1, activeTurn: { turnId, index: 1 } });

    writeFileSync(join(repo, 'src/b.ts'), 'keep\nmore\n');
    await client.request('harness/turnEnded', { channel: SESSION, turnId, state: 'error' });
    status = await client.request<StatusResult>('harness/status');
    expect(status.sessions[0]!.activeTurn).toBeUndefined();
    expect(status.sessions[0]!.turns).toEqual([expect.objectContaining({ turnId, state: 'error', changes: { files: 1, added: 1, deleted: 0 } })]);
  });

  it('ends an active turn as cancelled when another starts', async () => {
    await createSession();
    const chat = (await client.subscribe(SESSION)).snapshot!.state as SessionState;
    await client.subscribe(chat.defaultChat!);
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 'first' });
    writeFileSync(join(repo, 'src/b.ts'), 'changed\n');
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 'second' });
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 'second' });
    await client.waitForEnvelope((e) => e.action.type === 'chat/turnComplete');
    const turns = client.state<ChatState>(chat.defaultChat!)!.turns;
    expect(turns.map((turn) => [turn.id, turn.state])).toEqual([
      ['first', 'cancelled'],
      ['second', 'complete'],
    ]);
    const status = await client.request<StatusResult>('harness/status', { channel: SESSION });
    expect(status.sessions[0]!.turns.map((turn) => [turn.turnId, turn.changes?.files])).toEqual([
      ['first', 1],
      ['second', 0],
    ]);
  });

  it('answers -32001 for an unknown session on every method', async () => {
    const unknown = 'ahp-session:/nope';
    expect((await client.requestError('harness/turnStarted', { channel: unknown })).code).toBe(-32001);
    expect((await client.requestError('harness/beforeEdit', { channel: unknown, turnId: 't', paths: ['a'] })).code).toBe(-32001);
    expect((await client.requestError('harness/turnEnded', { channel: unknown, turnId: 't' })).code).toBe(-32001);
    expect((await client.requestError('harness/status', { channel: unknown })).code).toBe(-32001);
    expect((await client.requestError('disposeSession', { channel: unknown })).code).toBe(-32001);
  });

  it('answers -32602 for a turn id that does not match, no active turn, a reused id, and bad params', async () => {
    await createSession();
    const noTurn = await client.requestError('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['src/a.ts'] });
    expect(noTurn.code).toBe(-32602);
    expect(noTurn.message).toContain('no turn is active');
    expect((await client.requestError('harness/turnEnded', { channel: SESSION, turnId: 't1' })).code).toBe(-32602);

    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' });
    const mismatch = await client.requestError('harness/beforeEdit', { channel: SESSION, turnId: 't2', paths: ['src/a.ts'] });
    expect(mismatch).toMatchObject({ code: -32602, message: 'turnId "t2" does not match the active turn "t1"' });
    expect((await client.requestError('harness/turnEnded', { channel: SESSION, turnId: 't2' })).code).toBe(-32602);
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });
    expect((await client.requestError('harness/turnStarted', { channel: SESSION, turnId: 't1' })).message).toContain('already exists');

    const bad: [string, unknown, string][] = [
      ['harness/turnStarted', { turnId: 'x' }, 'params.channel must be a non-empty string'],
      ['harness/turnStarted', { channel: SESSION, turnId: '' }, 'params.turnId must be a non-empty string'],
      ['harness/turnStarted', { channel: SESSION, message: 7 }, 'params.message must be a string'],
      ['harness/turnStarted', [SESSION], 'params must be an object'],
      ['harness/beforeEdit', { channel: SESSION, turnId: 'x', paths: 'a' }, 'params.paths must be an array of strings'],
      ['harness/beforeEdit', { channel: SESSION, turnId: 'x', paths: ['ok', 3] }, 'params.paths[1] must be a non-empty path'],
      ['harness/beforeEdit', { channel: SESSION, turnId: 'x', paths: ['a\0b'] }, 'params.paths[0] must be a non-empty path'],
      ['harness/beforeEdit', { channel: SESSION, turnId: 'x', paths: ['a'], tool: '' }, 'params.tool must be a non-empty string'],
      ['harness/turnEnded', { channel: SESSION, turnId: 'x', state: 'done' }, 'params.state must be one of complete, cancelled, error'],
      ['harness/status', { turns: -1 }, 'params.turns must be an integer from 0 to 1000'],
    ];
    for (const [method, params, message] of bad) {
      expect(await client.requestError(method, params), `${method} ${JSON.stringify(params)}`).toMatchObject({ code: -32602, message });
    }
  });

  it('creates a session over several directories and ends its active turn as cancelled when disposed', async () => {
    const second = makeRepo(temp.make('cs-harness-second-'), { 'lib.txt': 'a\n' });
    expect(
      await client.request('createSession', {
        channel: SESSION,
        workingDirectory: pathToFileURL(repo).href,
        config: { workingDirectories: [pathToFileURL(repo).href, second] },
      }),
    ).toBeNull();
    expect((await client.requestError('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href })).code).toBe(-32003);
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 'multi' });
    writeFileSync(join(second, 'lib.txt'), 'a\nb\n');
    writeFileSync(join(repo, 'src/b.ts'), 'keep\nx\n');
    const { summary } = await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: SESSION, turnId: 'multi' });
    expect(summary.files.map((f) => f.display).sort()).toEqual([`${second.split('/').pop()}/lib.txt`, `${repo.split('/').pop()}/src/b.ts`].sort());

    await client.request('harness/turnStarted', { channel: SESSION, turnId: 'open' });
    const session = t.service.sessions.get(SESSION)!;
    expect(await client.request('harness/sessionEnded', { channel: SESSION })).toBeNull();
    expect(session.turn('open')?.state).toBe('cancelled');
    const refused = await client.requestError('harness/turnStarted', { channel: SESSION });
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain('has ended');
  });

  it('refuses createSession for a directory that does not exist', async () => {
    const error = await client.requestError('createSession', { channel: SESSION, workingDirectory: pathToFileURL(join(repo, 'missing')).href });
    expect(error.code).toBe(-32602);
    expect(readFileSync(join(repo, 'src/a.ts'), 'utf8')).toBe('one\ntwo\nthree\n');
  });
});
