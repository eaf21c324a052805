import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  changesetUriTemplate,
  expandChangesetUri,
  ROOT_CHANNEL,
  SessionStatus,
  type ChangesetState,
  type ChatState,
  type ListSessionsResult,
  type SessionState,
} from '../../protocol/index.js';
import { type AutoTurns, startAutoTurns } from '../../server/auto-turns/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import { ChangesetService } from '../../server/service.js';
import type { TimelineMeta } from '../../server/session/timeline.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { nextEvent } from '../helpers/next-event.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const running: ChangesetService[] = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((s) => s.stop()));
  temp.cleanup();
});

async function start(stateDir: string, dirs: string[] = []): Promise<{ service: ChangesetService; client: TestClient }> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  running.push(service);
  const { url } = await service.start();
  await service.openHistory(dirs);
  const client = await TestClient.connect(url);
  await client.initialize();
  return { service, client };
}

async function stop(service: ChangesetService, client: TestClient): Promise<void> {
  await client.close();
  await service.stop();
  running.splice(running.indexOf(service), 1);
}

const SID = 'claude-1';
const SESSION = `ahp-session:/${SID}`;
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i + 1}`}\n`).join('');
const metaOf = (client: TestClient, uri = SESSION) => client.state<SessionState>(uri)!._meta as unknown as TimelineMeta;

function invoke(client: TestClient, channel: string, operationId: string, target?: unknown) {
  return client.request<{ message: string; _meta?: { action?: string; files?: string[] } }>(
    'invokeChangesetOperation',
    { channel, operationId, ...(target ? { target } : {}) },
    { timeoutMs: 20_000 },
  );
}

describe('history that outlives the agent', () => {
  // Three server starts, two turns and two operations: on a machine under heavy load, longer than the default 30 s.
  it('keeps an ended session listed, reviewable and revertable, across a restart, until it is forgotten', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': lines(10), 'b.txt': 'b\n' });
    const stateDir = temp.make('state-');
    let { service, client } = await start(stateDir, [repo]);
    await client.request('createSession', { channel: SESSION, provider: 'claude-code', workingDirectory: pathToFileURL(repo).href });
    await client.subscribe(SESSION);
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': lines(10, { 2: 'by t1' }), 'c.txt': 'new\n' }), 'fix the login redirect');
    await recordTurn(client, SESSION, 't2', () => writeFiles(repo, { 'b.txt': 'B\n' }), 'second prompt');

    expect(client.state<SessionState>(SESSION)!.title).toBe('Claude Code — fix the login redirect');
    expect(await client.request('harness/sessionEnded', { channel: SESSION })).toBeNull();
    await client.waitForEnvelope((e) => e.channel === SESSION && e.action.type === 'session/isArchivedChanged');

    // Ended, not gone: listed with the archived flag, its turns and figures in state.
    const listed = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
    const summary = listed.items.find((s) => s.resource === SESSION)!;
    expect(summary.status & SessionStatus.IsArchived).toBe(SessionStatus.IsArchived);
    expect(summary._meta).toMatchObject({ agent: 'Claude Code', firstPrompt: 'fix the login redirect', turnCount: 2 });
    expect(metaOf(client).endedAt).toEqual(expect.any(String));
    expect((await client.requestError('harness/turnStarted', { channel: SESSION })).message).toContain('has ended');

    // Still revertable: revert t1's hunk on a.txt, recorded as the user's action.
    const t1 = await subscribeReady(client, turnUri('t1'));
    const file = t1.files.find((f) => (f._meta as { path: string }).path === 'a.txt')!;
    const result = await invoke(client, turnUri('t1'), 'revert', {
      kind: 'range',
      resource: file.edit.after!.uri,
      range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } },
    });
    expect(result._meta).toEqual({ action: 'Reverted line 3 of a.txt (turn 1)', files: ['a.txt'] });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe(lines(10));
    await client.waitForEnvelope((e) => e.channel === SESSION && e.action.type === 'session/metaChanged');
    expect(metaOf(client).userActions.map((a) => a.text)).toEqual(['Reverted line 3 of a.txt (turn 1)']);

    // A restart lists it again, still ended, with its turn figures and the user's action.
    await stop(service, client);
    ({ service, client } = await start(stateDir, [repo]));
    const again = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
    const restored = again.items.find((s) => s.resource === SESSION)!;
    expect(restored.status & SessionStatus.IsArchived).toBe(SessionStatus.IsArchived);
    expect(restored.title).toBe('Claude Code — fix the login redirect');
    await client.subscribe(SESSION);
    const meta = metaOf(client);
    expect(meta.turns['t1']).toMatchObject({ files: 2, added: 2, deleted: 1, title: 'fix the login redirect' });
    expect(meta.turns['t2']).toMatchObject({ files: 1, added: 1, deleted: 1 });
    expect(meta.userActions.map((a) => a.text)).toEqual(['Reverted line 3 of a.txt (turn 1)']);
    const t2 = await subscribeReady(client, turnUri('t2'));
    expect(t2.files).toHaveLength(1);
    expect((await invoke(client, turnUri('t2'), 'revert')).message).toContain('Reverted 1 file');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b\n');

    // Forgotten: gone from the list, and it does not come back after a restart.
    expect(await client.request('forgetSession', { channel: SESSION })).toBeNull();
    await client.waitForNotification('root/sessionRemoved');
    expect((await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL })).items.map((s) => s.resource)).not.toContain(SESSION);
    expect((await client.requestError('forgetSession', { channel: SESSION })).code).toBe(-32001);
    expect((await client.requestError('forgetSession', { channel: 'nope' })).code).toBe(-32602);
    await stop(service, client);
    ({ service, client } = await start(stateDir, [repo]));
    expect((await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL })).items.map((s) => s.resource)).not.toContain(SESSION);
  }, 90_000);

  it('resumes recording when the agent creates an ended session again', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const { client } = await start(temp.make('state-'));
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'b\n' }));
    await client.request('harness/sessionEnded', { channel: SESSION });
    expect(await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href })).toBeNull();
    await recordTurn(client, SESSION, 't2', () => writeFiles(repo, { 'a.txt': 'c\n' }));
    const status = await client.request<StatusResult>('harness/status', { channel: SESSION });
    expect(status.sessions[0]!.endedAt).toBeUndefined();
    expect(status.sessions[0]!.turns.map((t) => t.turnId)).toEqual(['t1', 't2']);
  });
});

describe('turn figures are state', () => {
  it('reach a client on subscribe and after a restart, and the session totals equal the session changeset', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    let { service, client } = await start(stateDir);
    const session = await service.openWorkspace([repo]);
    await recordTurn(client, session.uri, 'one', () => writeFiles(repo, { 'a.txt': 'A\nB\n', 'n.txt': 'n\n' }));
    // A client arriving later gets the figures in the state, not from events it never saw.
    const late = await TestClient.connect(service.server.url!);
    await late.initialize();
    await late.subscribe(session.uri);
    expect(metaOf(late, session.uri).turns['one']).toMatchObject({ files: 2, added: 3, deleted: 1, paths: ['a.txt', 'n.txt'] });
    await late.close();

    await stop(service, client);
    ({ service, client } = await start(stateDir));
    const resumed = await service.openWorkspace([repo]);
    expect(resumed.id).toBe(session.id);
    await client.subscribe(resumed.uri);
    expect(metaOf(client, resumed.uri).turns['one']).toMatchObject({ files: 2, added: 3, deleted: 1 });
    const sessionCs = await subscribeReady(client, changesetUriTemplate(session.id, 'session'));
    const totals = await waitForTotals(client, resumed.uri);
    expect(totals).toEqual({
      files: sessionCs.files.length,
      additions: sessionCs.files.reduce((n, f) => n + (f.edit.diff?.added ?? 0), 0),
      deletions: sessionCs.files.reduce((n, f) => n + (f.edit.diff?.removed ?? 0), 0),
    });
    expect(totals.files).toBe(2);
  });
});

/**
 * Lets polling automatic turns look at the workspace: the first poll, made as
 * they start and awaited by `idle()`, compares with the baseline; later ones
 * with the poll before. A turn they start is listed at once, so three polls
 * after that show whether one started, without waiting out a fixed second.
 */
async function afterPolls(auto: AutoTurns, pollIntervalMs: number): Promise<void> {
  await auto.idle();
  await new Promise((r) => setTimeout(r, 3 * pollIntervalMs));
  await auto.idle();
}

async function waitForStats(client: TestClient, uri: string, turnId: string): Promise<TimelineMeta['turns'][string]> {
  for (let i = 0; i < 500; i++) {
    const stats = metaOf(client, uri)?.turns[turnId];
    if (stats) return stats;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no figures for turn ${turnId}`);
}

async function waitForTotals(client: TestClient, uri: string): Promise<{ files?: number; additions?: number; deletions?: number }> {
  for (let i = 0; i < 500; i++) {
    const item = (await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL })).items.find((s) => s.resource === uri);
    if (item?.changes?.files) return item.changes;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no session totals');
}

describe('restore and remove later turns', () => {
  it('sets the operation idle before the removed turns go, removes them everywhere, and keeps recording', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const { service, client } = await start(temp.make('state-'));
    const session = await service.openWorkspace([repo]);
    const sid = session.id;
    const uri = (t: string) => expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: t });
    await recordTurn(client, session.uri, 'one', () => writeFiles(repo, { 'a.txt': 'one\n' }));
    await recordTurn(client, session.uri, 'two', () => writeFiles(repo, { 'a.txt': 'two\n' }));
    await client.subscribe(session.uri);
    await client.subscribe(session.chatUri);
    await subscribeReady(client, uri('two'));
    const other = await TestClient.connect(service.server.url!);
    await other.initialize();
    await subscribeReady(other, uri('two'));

    const result = await invoke(client, uri('two'), 'restore-checkpoint-and-turns');
    expect(result._meta?.action).toBe('Restored the start of turn 2 and removed it and the turns after it: a.txt');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\n');
    for (const c of [client, other]) {
      const types = c.envelopes.filter((e) => e.channel === uri('two')).map((e) => e.action.type);
      const statuses = c.envelopes
        .filter((e) => e.channel === uri('two') && e.action.type === 'changeset/operationStatusChanged')
        .map((e) => (e.action as { status: string }).status);
      expect(statuses).toEqual(['running', 'idle']);
      // Idle arrives before the channel is cleared, and the cleared turn shows no running operation.
      expect(types.lastIndexOf('changeset/operationStatusChanged')).toBeLessThan(types.lastIndexOf('changeset/cleared'));
      const cleared = c.state<ChangesetState>(uri('two'))!;
      expect(cleared.files).toEqual([]);
      expect(cleared.operations?.every((o) => o.status === 'idle')).toBe(true);
    }
    expect(client.state<ChatState>(session.chatUri)!.turns.map((t) => t.id)).toEqual(['one']);
    expect(Object.keys(metaOf(client, session.uri).turns)).toEqual(['one']);
    expect((await client.requestError('subscribe', { channel: uri('two') })).code).toBe(-32008);

    // Recording goes on: automatic turns do not take the restore for an edit, and the next edit is a turn.
    const auto = startAutoTurns(service.sessions, session, { quietMs: 300, mode: 'poll', pollIntervalMs: 100 });
    await afterPolls(auto, 100);
    expect(session.turns.map((t) => t.id)).toEqual(['one']);
    writeFiles(repo, { 'a.txt': 'three\n' });
    const ended = await nextEvent(auto.onTurnEnded).then((ended) => ended.turnId);
    auto.stop();
    expect(session.turns.map((t) => t.id)).toEqual(['one', ended]);
    const stats = await waitForStats(client, session.uri, ended);
    expect(stats).toMatchObject({ files: 1, added: 1, deleted: 1, title: 'Edited a.txt', automatic: true });
    expect(Date.parse(stats.editSpan!.to) - Date.parse(stats.editSpan!.from)).toBeLessThan(300);
    await other.close();
  });
});

describe('a truthful timeline', () => {
  it('takes the files an operation wrote, as it wrote them, into the next baseline; an edit made meanwhile is still a turn', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const { service, client } = await start(temp.make('state-'));
    const session = await service.openWorkspace([repo]);
    await recordTurn(client, session.uri, 't1', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n' }));
    const auto = startAutoTurns(service.sessions, session, { quietMs: 300, mode: 'poll', pollIntervalMs: 100 });
    // The operation pauses between its two writes; the user saves another file meanwhile.
    process.env['CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS'] = '800';
    try {
      const revert = invoke(client, expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId: 't1' }), 'revert');
      await new Promise((r) => setTimeout(r, 400));
      writeFiles(repo, { 'c.txt': 'mine\n' });
      expect((await revert)._meta?.files).toEqual(['a.txt', 'b.txt']);
    } finally {
      delete process.env['CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS'];
    }
    const turnId = await nextEvent(auto.onTurnEnded).then((ended) => ended.turnId);
    auto.stop();
    expect(session.turn(turnId)!.summary!.files.map((f) => f.display)).toEqual(['c.txt']);
    expect(session.turns).toHaveLength(2);
  });

  it('remembers across a restart what the last operation left, so automatic turns still ignore its writes', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    let { service, client } = await start(stateDir);
    const session = await service.openWorkspace([repo]);
    await recordTurn(client, session.uri, 't1', () => writeFiles(repo, { 'a.txt': 'A\n' }));
    await invoke(client, expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId: 't1' }), 'revert');
    await stop(service, client);

    ({ service, client } = await start(stateDir));
    const resumed = await service.openWorkspace([repo]);
    const auto = startAutoTurns(service.sessions, resumed, { quietMs: 200, mode: 'poll', pollIntervalMs: 100 });
    await afterPolls(auto, 100);
    expect(resumed.turns.map((t) => t.id)).toEqual(['t1']);
    writeFiles(repo, { 'a.txt': 'mine\n' });
    const turnId = await nextEvent(auto.onTurnEnded).then((ended) => ended.turnId);
    auto.stop();
    expect(resumed.turn(turnId)!.summary).toMatchObject({ total: 1, added: 1, deleted: 1 });
    // Still exactly one user action: the settled state is no action of its own.
    await client.subscribe(resumed.uri);
    expect(metaOf(client, resumed.uri).userActions.map((a) => a.operation)).toEqual(['revert']);
  });

  it('records a hunk revert as the user action it is, not as an automatic turn', async () => {
    const repo = makeRepo(temp.make('app-'), { 'src/app.ts': lines(30) });
    const { service, client } = await start(temp.make('state-'));
    const session = await service.openWorkspace([repo]);
    expect(session.sessionState.title).toMatch(/^app-\w+ — \d{4}-\d\d-\d\d \d\d:\d\d$/);
    const auto = startAutoTurns(service.sessions, session, { quietMs: 300, mode: 'poll', pollIntervalMs: 100 });
    const ended = nextEvent(auto.onTurnEnded).then((ended) => ended.turnId);
    writeFiles(repo, { 'src/app.ts': lines(30, { 2: 'x', 3: 'y', 25: 'z' }), 'README.md': 'hi\n', 'b.txt': 'b\n' });
    const turnId = await ended;
    await client.subscribe(session.uri);
    expect((await waitForStats(client, session.uri, turnId)).title).toBe('Edited README.md, b.txt and 1 more');

    const turn = await subscribeReady(client, expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId }));
    const file = turn.files.find((f) => (f._meta as { path: string }).path === 'src/app.ts')!;
    const result = await invoke(client, expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId }), 'revert', {
      kind: 'range',
      resource: file.edit.after!.uri,
      range: { start: { line: 2, character: 0 }, end: { line: 3, character: 0 } },
    });
    expect(result._meta!.action).toBe('Reverted lines 3–4 of src/app.ts (turn 1)');
    expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe(lines(30, { 25: 'z' }));
    const undo = await invoke(client, changesetUriTemplate(session.id, 'session'), 'undo');
    expect(undo._meta!.action).toBe('Undid: Reverted lines 3–4 of src/app.ts (turn 1)');
    // Polls after the last write: the server's own writes start no turn.
    await afterPolls(auto, 100);
    auto.stop();
    expect(session.turns).toHaveLength(1);
    expect(metaOf(client, session.uri).userActions.map((a) => a.text)).toEqual([
      'Reverted lines 3–4 of src/app.ts (turn 1)',
      'Undid: Reverted lines 3–4 of src/app.ts (turn 1)',
    ]);
  });
});
