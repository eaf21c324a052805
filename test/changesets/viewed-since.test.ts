import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, type ChangesetFile, type ChangesetState, type WorkspaceFileDiff } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest, startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
serviceForEachTest(temp, (s, c) => {
  svc = s;
  client = c;
});

const SID = 'viewed';
const SESSION = `ahp-session:/${SID}`;
const SESSION_CS = changesetUriTemplate(SID, 'session');

const fileIn = (c: TestClient, id: string): ChangesetFile | undefined => c.state<ChangesetState>(SESSION_CS)?.files.find((f) => f.id === id);
const lines = (diff: WorkspaceFileDiff) => (diff.kind === 'text' ? diff.hunks.flatMap((h) => h.lines) : diff.kind);

describe('changed since you viewed', () => {
  it('unticks a viewed file a later turn or a hand edit changes, marks it, and diffs the viewed version against now', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\n', 'b.txt': 'b\n' });
    const id = (rel: string) => pathToFileURL(join(repo, rel)).href;
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'one\ntwo\n', 'b.txt': 'B\n' }));
    await subscribeReady(client, SESSION_CS);
    client.dispatch(SESSION_CS, { type: 'changeset/filesReviewChanged', files: [id('a.txt'), id('b.txt')], reviewed: true });
    await expect.poll(() => [fileIn(client, id('a.txt'))?.reviewed, fileIn(client, id('b.txt'))?.reviewed]).toEqual([true, true]);
    const notChanged = await client.requestError('changesetFileDiff', { channel: SESSION_CS, fileId: id('a.txt'), sinceViewed: true });
    expect(notChanged.code).toBe(-32602);
    expect(notChanged.message).toBe('fileId: a.txt has not changed since it was ticked "Viewed"');

    // A later turn changes a.txt: its tick goes, through the same reducers every client runs, and it says why.
    await recordTurn(client, SESSION, 't2', () => writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' }));
    await expect.poll(() => fileIn(client, id('a.txt'))?.reviewed).toBeUndefined();
    expect(fileIn(client, id('a.txt'))?._meta?.['changedSinceViewed']).toBe(true);
    expect(fileIn(client, id('b.txt'))?.reviewed).toBe(true);
    expect(fileIn(client, id('b.txt'))?._meta?.['changedSinceViewed']).toBeUndefined();
    // A client subscribing now sees the same: a plain untick, and the mark.
    const late = await svc.client();
    await subscribeReady(late, SESSION_CS);
    expect(fileIn(late, id('a.txt'))).toMatchObject({ _meta: { changedSinceViewed: true } });
    expect(fileIn(late, id('a.txt'))?.reviewed).toBeUndefined();

    // The changes since it was viewed: only turn 2's line, not the whole session's.
    const since = await client.request<WorkspaceFileDiff>('changesetFileDiff', { channel: SESSION_CS, fileId: id('a.txt'), sinceViewed: true });
    expect(lines(since)).toEqual([' one', ' two', '+three']);
    const whole = await client.request<WorkspaceFileDiff>('changesetFileDiff', { channel: SESSION_CS, fileId: id('a.txt') });
    expect(lines(whole)).toEqual([' one', '+two', '+three']);

    // A hand edit the session changeset follows does the same to b.txt.
    writeFiles(repo, { 'b.txt': 'B, edited by hand\n' });
    await expect.poll(() => fileIn(client, id('b.txt'))?._meta?.['changedSinceViewed'], { timeout: 15_000 }).toBe(true);
    expect(fileIn(client, id('b.txt'))?.reviewed).toBeUndefined();
    const sinceB = await client.request<WorkspaceFileDiff>('changesetFileDiff', { channel: SESSION_CS, fileId: id('b.txt'), sinceViewed: true });
    expect(lines(sinceB)).toEqual(['-B', '+B, edited by hand']);

    // Ticked again: viewed at the new content, nothing changed since.
    client.dispatch(SESSION_CS, { type: 'changeset/filesReviewChanged', files: [id('a.txt')], reviewed: true });
    await expect.poll(() => fileIn(client, id('a.txt'))?.reviewed).toBe(true);
    await expect
      .poll(async () => (await client.requestError('changesetFileDiff', { channel: SESSION_CS, fileId: id('a.txt'), sinceViewed: true })).code)
      .toBe(-32602);
  });

  it('keeps what was viewed across a restart', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\n' });
    const id = pathToFileURL(join(repo, 'a.txt')).href;
    const stateDir = temp.make('state-');
    const first = await startTestService({ stateDir });
    const c1 = await first.client();
    await c1.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await recordTurn(c1, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'one\ntwo\n' }));
    await subscribeReady(c1, SESSION_CS);
    c1.dispatch(SESSION_CS, { type: 'changeset/filesReviewChanged', files: [id], reviewed: true });
    await expect.poll(() => fileIn(c1, id)?.reviewed).toBe(true);
    await recordTurn(c1, SESSION, 't2', () => writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' }));
    await expect.poll(() => fileIn(c1, id)?._meta?.['changedSinceViewed']).toBe(true);
    await c1.close();
    await first.service.stop();

    const second = await startTestService({ stateDir });
    try {
      await second.service.sessions.create({ id: SID, workingDirectories: [repo] });
      const c2 = await second.client();
      await subscribeReady(c2, SESSION_CS);
      await expect.poll(() => fileIn(c2, id)?._meta?.['changedSinceViewed']).toBe(true);
      expect(fileIn(c2, id)?.reviewed).toBeUndefined();
      const since = await c2.request<WorkspaceFileDiff>('changesetFileDiff', { channel: SESSION_CS, fileId: id, sinceViewed: true });
      expect(lines(since)).toEqual([' one', ' two', '+three']);
    } finally {
      await second.service.stop();
    }
  });
});
