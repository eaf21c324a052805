import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, ROOT_CHANNEL, SessionStatus, type ListSessionsResult, type SessionState } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

/**
 * AHP's `disposeSession` removes a session; an agent's session end keeps it
 * for review; `session/isArchivedChanged` is the client's to set.
 */
const temp = new TempDirs();
const running: { service: ChangesetService; clients: TestClient[] }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await Promise.allSettled(r.clients.map((c) => c.close()));
    await r.service.stop();
  }
  temp.cleanup();
});

async function start(stateDir: string, dirs: string[] = []): Promise<{ service: ChangesetService; connect: () => Promise<TestClient> }> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const entry = { service, clients: [] as TestClient[] };
  running.push(entry);
  const { url } = await service.start();
  await service.openHistory(dirs);
  return {
    service,
    connect: async () => {
      const client = await TestClient.connect(url);
      await client.initialize();
      entry.clients.push(client);
      return client;
    },
  };
}

async function stop(service: ChangesetService): Promise<void> {
  const index = running.findIndex((r) => r.service === service);
  const [entry] = running.splice(index, 1);
  await Promise.all(entry!.clients.map((c) => c.close()));
  await service.stop();
}

const SID = 'disposed';
const SESSION = `ahp-session:/${SID}`;
const listed = async (client: TestClient) => (await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL })).items;
const isArchived = (status: number) => (status & SessionStatus.IsArchived) !== 0;

async function recorded(client: TestClient, repo: string): Promise<void> {
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href }, { timeoutMs: 60_000 });
  await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'changed\n', 'new.txt': 'new\n' }), 'edit');
}

describe("a client's disposeSession", () => {
  it('removes the session: root/sessionRemoved, its changesets cleared, its channels gone, files on disk untouched', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    const { service, connect } = await start(stateDir);
    const client = await connect();
    const watcher = await connect();
    await recorded(client, repo);
    const turn = expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' });
    const whole = expandChangesetUri(changesetUriTemplate(SID, 'session'));
    await subscribeReady(watcher, turn);
    await subscribeReady(watcher, whole);
    await watcher.subscribe(SESSION);

    expect(await client.request('disposeSession', { channel: SESSION })).toBeNull();
    await watcher.waitForNotification('root/sessionRemoved', (p: { session: string }) => p.session === SESSION);
    for (const uri of [turn, whole]) await watcher.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/cleared');
    // Its chat leaves the session's catalogue (AHP: a chat goes with its session, announced by session/chatRemoved).
    const chat = `ahp-chat:/${SID}`;
    await watcher.waitForEnvelope((e) => e.channel === SESSION && e.action.type === 'session/chatRemoved' && (e.action as { chat: string }).chat === chat);
    expect((await client.requestError('subscribe', { channel: chat })).code).toBe(-32008);

    expect((await listed(client)).map((s) => s.resource)).not.toContain(SESSION);
    expect((await client.requestError('subscribe', { channel: SESSION })).code).toBe(-32001);
    expect((await client.requestError('subscribe', { channel: turn })).code).toBe(-32001);
    expect((await client.requestError('disposeSession', { channel: SESSION })).code).toBe(-32001);
    // What the agent wrote is still on disk: only the record goes.
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('changed\n');
    expect(readFileSync(join(repo, 'new.txt'), 'utf8')).toBe('new\n');

    // Like `forget`, its history is gone from the store: a restart does not bring it back.
    await stop(service);
    const again = await start(stateDir, [repo]);
    expect((await listed(await again.connect())).map((s) => s.resource)).not.toContain(SESSION);
  }, 120_000);
});

describe("an agent's session end (harness/sessionEnded)", () => {
  it('ends recording and keeps the session listed, reviewable and flagged IsArchived', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const { connect } = await start(temp.make('state-'));
    const client = await connect();
    await recorded(client, repo);
    expect(await client.request('harness/sessionEnded', { channel: SESSION })).toBeNull();
    const summary = (await listed(client)).find((s) => s.resource === SESSION)!;
    expect(isArchived(summary.status)).toBe(true);
    const turn = await subscribeReady(client, expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' }));
    expect(turn.files.length).toBe(2);
    expect((await client.requestError('harness/sessionEnded', { channel: 'ahp-session:/nope' })).code).toBe(-32001);
    expect((await client.requestError('harness/sessionEnded', {})).code).toBe(-32602);
  }, 120_000);
});

describe('session/isArchivedChanged from a client', () => {
  it('is accepted, echoed to every subscriber with its origin, announced to the root, and kept across a restart', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    const first = await start(stateDir);
    const client = await first.connect();
    const other = await first.connect();
    await recorded(client, repo);
    await client.subscribe(SESSION);
    await other.subscribe(SESSION);

    const seq = client.dispatch(SESSION, { type: 'session/isArchivedChanged', isArchived: true });
    const echo = await client.waitForEnvelope((e) => e.channel === SESSION && e.origin?.clientSeq === seq);
    expect(echo.rejectionReason).toBeUndefined();
    expect(echo.action).toEqual({ type: 'session/isArchivedChanged', isArchived: true });
    await other.waitForEnvelope((e) => e.channel === SESSION && e.origin?.clientId === client.clientId && e.origin.clientSeq === seq);
    expect(isArchived(other.state<SessionState>(SESSION)!.status)).toBe(true);
    await other.waitForNotification(
      'root/sessionSummaryChanged',
      (p: { session: string; changes: { status?: number } }) => p.session === SESSION && p.changes.status !== undefined && isArchived(p.changes.status),
    );
    expect(isArchived((await listed(other)).find((s) => s.resource === SESSION)!.status)).toBe(true);

    // Kept across a restart, for a session that is still recording.
    await stop(first.service);
    const second = await start(stateDir, [repo]);
    const back = await second.connect();
    expect(isArchived((await listed(back)).find((s) => s.resource === SESSION)!.status)).toBe(true);
    await back.subscribe(SESSION);
    expect(isArchived(back.state<SessionState>(SESSION)!.status)).toBe(true);

    // And taken back the same way.
    const undo = back.dispatch(SESSION, { type: 'session/isArchivedChanged', isArchived: false });
    await back.waitForEnvelope((e) => e.channel === SESSION && e.origin?.clientSeq === undo);
    await stop(second.service);
    const third = await start(stateDir, [repo]);
    expect(isArchived((await listed(await third.connect())).find((s) => s.resource === SESSION)!.status)).toBe(false);
  }, 120_000);

  it('refuses a malformed flag or a channel that is not a session, echoing the reason to the sender only', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const { connect } = await start(temp.make('state-'));
    const client = await connect();
    const other = await connect();
    await recorded(client, repo);
    await client.subscribe(SESSION);
    await other.subscribe(SESSION);
    const turn = expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' });
    await subscribeReady(client, turn);

    const bad = client.dispatch(SESSION, { type: 'session/isArchivedChanged', isArchived: 'yes' } as Record<string, unknown>);
    const refused = await client.waitForEnvelope((e) => e.origin?.clientSeq === bad);
    expect(refused.rejectionReason).toBe('params.action.isArchived must be a boolean');
    const wrong = client.dispatch(turn, { type: 'session/isArchivedChanged', isArchived: true });
    const misplaced = await client.waitForEnvelope((e) => e.origin?.clientSeq === wrong);
    expect(misplaced.rejectionReason).toBe('params.action.type "session/isArchivedChanged" can only be dispatched to an ahp-session:/<id> channel');
    // Another session action clients may not send is still refused.
    const title = client.dispatch(SESSION, { type: 'session/titleChanged', title: 'mine' });
    expect((await client.waitForEnvelope((e) => e.origin?.clientSeq === title)).rejectionReason).toContain('is not client-dispatchable');

    await client.request('ping', { channel: ROOT_CHANNEL });
    expect(isArchived(client.state<SessionState>(SESSION)!.status)).toBe(false);
    expect(other.envelopes.filter((e) => e.origin?.clientId === client.clientId)).toEqual([]);
  }, 120_000);
});
