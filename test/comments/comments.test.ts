/**
 * Review comments over a real WebSocket: written on lines of a turn's file
 * or on a whole turn, listed, resolved, reopened and deleted; refused with
 * the field or the thing that is wrong; kept in the store across a restart
 * and gone with a forgotten session; moved when a later turn inserts lines
 * above them and outdated when their lines are rewritten; and
 * `comments/changed` only for a connection that asked to follow.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, MAX_COMMENT_BYTES, type ReviewComment } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';
import { listRefs } from '../../server/store/refs.js';
import { workspaceLayout } from '../../server/store/state-dir.js';
import { recordTurn } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { commentsCheck } from './comment-check.js';

useMemoryTempDir();

const temp = new TempDirs();
const running: { service: ChangesetService; clients: TestClient[] }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    const closed = await Promise.allSettled(r.clients.map((c) => c.close()));
    await r.service.stop();
    const failed = closed.find((c): c is PromiseRejectedResult => c.status === 'rejected');
    if (failed) throw failed.reason;
  }
  temp.cleanup();
});

const SID = 'review-1';
const SESSION = `ahp-session:/${SID}`;
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');

async function start(stateDir: string, dirs: string[] = []) {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const entry = { service, clients: [] as TestClient[] };
  running.push(entry);
  const { url } = await service.start();
  await service.openHistory(dirs);
  const connect = async () => {
    const client = await TestClient.connect(url, { check: commentsCheck });
    await client.initialize();
    entry.clients.push(client);
    return client;
  };
  return { service, client: await connect(), connect };
}

async function stop(service: ChangesetService): Promise<void> {
  const at = running.findIndex((r) => r.service === service);
  const [entry] = running.splice(at, 1);
  for (const c of entry!.clients) await c.close();
  await service.stop();
}

/** A session over a repository whose turn t1 rewrote lines 5–6 of src/app.ts (20 lines). */
async function reviewed(stateDir = temp.make('state-')) {
  const repo = makeRepo(temp.make(), { 'src/app.ts': lines(20), 'README.md': 'hello\n' });
  const started = await start(stateDir);
  await started.client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  await recordTurn(started.client, SESSION, 't1', () => writeFiles(repo, { 'src/app.ts': lines(20, { 5: 'const a = 1;', 6: 'const b = 2;' }) }), 'first');
  return { ...started, repo, stateDir };
}

const onLines = (startLine: number, endLine: number, side: 'before' | 'after' = 'after', turnId = 't1') => ({
  kind: 'lines' as const,
  changeset: turnUri(turnId),
  path: 'src/app.ts',
  side,
  startLine,
  endLine,
});

const list = async (client: TestClient, params: Record<string, unknown> = {}) =>
  (await client.request<{ comments: ReviewComment[] }>('comments/list', { channel: SESSION, ...params })).comments;

describe('review comments', () => {
  it('are added on lines and on a turn, listed, resolved by the agent, reopened and deleted', async () => {
    const { client } = await reviewed();
    const added = await client.request<ReviewComment>('comments/add', { channel: SESSION, anchor: onLines(5, 6), body: 'Name these better' });
    expect(added).toMatchObject({
      id: '1',
      channel: SESSION,
      turn: 1,
      body: 'Name these better',
      author: 'you',
      state: 'open',
      code: ['const a = 1;', 'const b = 2;'],
      now: { path: 'src/app.ts', startLine: 5, endLine: 6 },
    });
    const before = await client.request<ReviewComment>('comments/add', {
      channel: SESSION,
      anchor: onLines(5, 5, 'before'),
      body: 'This line was fine',
      author: 'Ada',
    });
    expect(before).toMatchObject({ id: '2', author: 'Ada', code: ['line 5'], now: null });
    const turn = await client.request<ReviewComment>('comments/add', { channel: SESSION, anchor: { kind: 'turn', turnId: 't1' }, body: 'Add a test' });
    expect(turn).toMatchObject({ id: '3', turn: 1, anchor: { kind: 'turn', turnId: 't1' } });
    expect(turn.code).toBeUndefined();
    expect((await list(client)).map((c) => c.id)).toEqual(['1', '2', '3']);
    expect((await list(client, { path: 'src/app.ts' })).map((c) => c.id)).toEqual(['1', '2']);

    const resolved = await client.request<ReviewComment>('comments/resolve', { channel: SESSION, id: '1', by: 'agent', note: 'Renamed them' });
    expect(resolved).toMatchObject({ state: 'resolved', resolution: { by: 'agent', note: 'Renamed them' } });
    expect((await list(client)).map((c) => c.id)).toEqual(['2', '3']);
    expect((await list(client, { state: 'resolved' })).map((c) => c.id)).toEqual(['1']);
    const reopened = await client.request<ReviewComment>('comments/reopen', { channel: SESSION, id: '#1' });
    expect(reopened.state).toBe('open');
    expect(reopened.resolution).toBeUndefined();
    expect(await client.request('comments/delete', { channel: SESSION, id: '2' })).toBeNull();
    expect((await list(client, { state: 'all' })).map((c) => c.id)).toEqual(['1', '3']);
    // Numbers are never given twice, even after a delete.
    expect((await client.request<ReviewComment>('comments/add', { channel: SESSION, anchor: onLines(1, 1), body: 'x' })).id).toBe('4');
  });

  it('refuse what is wrong with the field or the thing it names', async () => {
    const { client } = await reviewed();
    const error = (method: string, params: unknown) => client.requestError(method, params);
    const add = (anchor: unknown, body: unknown = 'text', channel = SESSION) => error('comments/add', { channel, anchor, body });

    expect(await add(onLines(1, 1), 'x', 'ahp-session:/nobody')).toMatchObject({ code: -32001 });
    expect(await add(onLines(1, 1), 'x', 'nope')).toMatchObject({ code: -32602, message: expect.stringContaining('params.channel') });
    expect(await add(onLines(1, 1, 'after', 'no-such-turn'))).toMatchObject({ code: -32008, message: expect.stringContaining('no-such-turn') });
    expect(await add({ ...onLines(1, 1), path: 'src/other.ts' })).toMatchObject({
      code: -32008,
      message: 'src/other.ts is not among the files turn 1 changed',
    });
    expect(await add(onLines(20, 21))).toMatchObject({
      code: -32602,
      message: expect.stringContaining('src/app.ts has 20 lines after turn 1, so lines 20–21 are outside it'),
    });
    expect(await add(onLines(3, 2))).toMatchObject({ code: -32602, message: expect.stringContaining('params.anchor.endLine') });
    expect(await add({ ...onLines(1, 1), changeset: 'ahp-changeset:/other/turn/t1' })).toMatchObject({
      code: -32602,
      message: expect.stringContaining('another session'),
    });
    expect(await add({ kind: 'turn', turnId: 'no-such-turn' })).toMatchObject({ code: -32008 });
    expect(await add(onLines(1, 1), '   ')).toMatchObject({ code: -32602, message: 'params.body must be a non-empty text' });
    expect(await add(onLines(1, 1), 'x'.repeat(MAX_COMMENT_BYTES + 1))).toMatchObject({
      code: -32602,
      message: `params.body is longer than ${MAX_COMMENT_BYTES} bytes`,
    });
    expect(await add(onLines(1, 1), 'clear the screen \u001b[2J')).toMatchObject({ code: -32602, message: expect.stringContaining('control characters') });
    expect(await error('comments/resolve', { channel: SESSION, id: '9' })).toMatchObject({ code: -32008, message: 'the session has no comment #9' });
    expect(await error('comments/delete', { channel: SESSION, id: 'abc' })).toMatchObject({ code: -32602, message: expect.stringContaining('params.id') });
    expect(await error('comments/resolve', { channel: SESSION, id: '1', by: 'robot' })).toMatchObject({ code: -32602 });
    expect(await error('comments/list', { channel: SESSION, state: 'closed' })).toMatchObject({ code: -32602 });
    expect(await list(client, { state: 'all' })).toEqual([]);
  });

  it('move with lines a later turn inserts above them, become outdated when their lines are rewritten, and tell only followers', async () => {
    const { client, connect, repo } = await reviewed();
    const follower = await connect();
    const bystander = await connect();
    await client.request('comments/add', { channel: SESSION, anchor: onLines(5, 6), body: 'Name these better' });
    await client.request('comments/add', { channel: SESSION, anchor: onLines(18, 18), body: 'And this' });
    expect(await list(follower, { follow: true })).toHaveLength(2);

    await recordTurn(client, SESSION, 't2', () =>
      writeFiles(repo, { 'src/app.ts': `// one\n// two\n// three\n${lines(20, { 5: 'const a = 1;', 6: 'const b = 2;', 18: 'rewritten' })}` }),
    );
    const moved = await follower.waitForNotification<{ comment: ReviewComment }>('comments/changed', (p) => p.comment?.id === '1');
    expect(moved.comment.now).toEqual({ path: 'src/app.ts', startLine: 8, endLine: 9 });
    const outdated = await follower.waitForNotification<{ comment: ReviewComment }>('comments/changed', (p) => p.comment?.id === '2');
    expect(outdated.comment.now).toBeNull();
    expect((await list(client)).map((c) => [c.id, c.now])).toEqual([
      ['1', { path: 'src/app.ts', startLine: 8, endLine: 9 }],
      ['2', null],
    ]);

    // A change to the comments themselves reaches followers too; deleting says which.
    await client.request('comments/resolve', { channel: SESSION, id: '1' });
    expect((await follower.waitForNotification<{ comment: ReviewComment }>('comments/changed', (p) => p.comment?.state === 'resolved')).comment.id).toBe('1');
    await client.request('comments/delete', { channel: SESSION, id: '2' });
    expect(await follower.waitForNotification('comments/changed', (p: { deleted?: string }) => p.deleted === '2')).toEqual({ channel: SESSION, deleted: '2' });

    // Following stops when asked to.
    await list(follower, { follow: false });
    await client.request('comments/reopen', { channel: SESSION, id: '1' });
    await list(client);
    const sent = (c: TestClient) => c.received.filter((m) => m['method'] === 'comments/changed').length;
    expect(sent(follower)).toBe(4);
    expect(sent(bystander)).toBe(0);
    expect(sent(client)).toBe(0);
  });

  it('follow their file when a later turn renames it', async () => {
    const { client, repo } = await reviewed();
    await client.request('comments/add', { channel: SESSION, anchor: onLines(5, 6), body: 'Name these better' });
    const text = lines(20, { 5: 'const a = 1;', 6: 'const b = 2;' });
    await recordTurn(client, SESSION, 't2', () => {
      rmSync(join(repo, 'src/app.ts'));
      writeFiles(repo, { 'src/main.ts': `// moved\n${text}` });
    });
    const [moved] = await list(client);
    expect(moved).toMatchObject({ anchor: { path: 'src/app.ts', startLine: 5 }, now: { path: 'src/main.ts', startLine: 6, endLine: 7 } });
    expect((await list(client, { path: 'src/main.ts' })).map((c) => c.id)).toEqual(['1']);
  });

  it('survive a restart in the store, and go with a forgotten session', async () => {
    const first = await reviewed();
    await first.client.request('comments/add', { channel: SESSION, anchor: onLines(5, 6), body: 'Name these better' });
    await first.client.request('comments/add', { channel: SESSION, anchor: { kind: 'turn', turnId: 't1' }, body: 'Add a test' });
    await first.client.request('comments/resolve', { channel: SESSION, id: '2', note: 'done' });
    const kept = await list(first.client, { state: 'all' });
    await stop(first.service);

    const again = await start(first.stateDir, [first.repo]);
    expect(await list(again.client, { state: 'all' })).toEqual(kept);
    expect((await again.client.request<ReviewComment>('comments/add', { channel: SESSION, anchor: onLines(1, 1), body: 'x' })).id).toBe('3');

    const shadow = workspaceLayout(first.stateDir, first.repo).shadowDir;
    expect([...(await listRefs(shadow, 'refs/changeset-server/sessions/')).keys()]).toContain(`refs/changeset-server/sessions/${SID}/comments`);
    expect(await again.client.request('forgetSession', { channel: SESSION })).toBeNull();
    expect([...(await listRefs(shadow, 'refs/changeset-server/sessions/')).keys()]).toEqual([]);
  });
});
