import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, type ChangesetState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { cloneAtStart, recordMirroredSession } from '../helpers/mirrored-session.js';
import { importMirror } from '../../server/mirror/import.js';

const temp = new TempDirs();
const services: TestService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  temp.cleanup();
});

const SID = 'ended';
const SESSION = `ahp-session:/${SID}`;
const SESSION_CS = changesetUriTemplate(SID, 'session');
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i}`}\n`).join('');

async function service(stateDir?: string): Promise<{ svc: TestService; client: TestClient }> {
  const svc = await startTestService(stateDir ? { stateDir } : {});
  services.push(svc);
  return { svc, client: await svc.client() };
}

function paths(state: ChangesetState): string[] {
  return state.files.map((f) => (f._meta as { path: string }).path);
}

function invoke(client: TestClient, operationId: string, meta?: Record<string, unknown>) {
  return client.request<{ message: string; _meta?: Record<string, unknown> }>(
    'invokeChangesetOperation',
    { channel: SESSION_CS, operationId, ...(meta ? { _meta: meta } : {}) },
    { timeoutMs: 30_000 },
  );
}

/** A session whose one turn edits a.txt and b.txt, ended; then the user creates NEW.txt and edits b.txt far from the turn's lines. */
async function endedThenEdited(client: TestClient, svc: TestService): Promise<string> {
  const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'b.txt': lines(20) });
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'A by the turn\n', 'b.txt': lines(20, { 1: 'by the turn' }) }));
  expect(paths(await subscribeReady(client, SESSION_CS))).toEqual(['a.txt', 'b.txt']);
  await svc.service.sessions.get(SESSION)!.end();
  writeFiles(repo, { 'NEW.txt': 'made after the session ended\n', 'b.txt': lines(20, { 1: 'by the turn', 18: 'by hand later' }) });
  return repo;
}

/** The session changeset as a new subscriber gets it once it was recomputed after the working tree changed (it is live while recording). */
async function settledState(svc: TestService): Promise<ChangesetState> {
  const owner = svc.service.changesets.of(svc.service.sessions.get(SESSION)!)!;
  await owner.refreshLive();
  await owner.channels.get(SESSION_CS)?.ready;
  return subscribeReady(await svc.client(), SESSION_CS);
}

describe("an ended session's session changes", () => {
  it('run from its start to its end: later hand edits and new files are not its changes', async () => {
    const { svc, client } = await service();
    const repo = await endedThenEdited(client, svc);
    const state = await settledState(svc);
    expect(paths(state)).toEqual(['a.txt', 'b.txt']);
    const b = state.files.find((f) => (f._meta as { path: string }).path === 'b.txt')!;
    const after = await client.request<{ data: string; encoding: string }>('resourceRead', { channel: 'ahp-root://', uri: b.edit.after!.content });
    expect(Buffer.from(after.data, after.encoding === 'base64' ? 'base64' : 'utf8').toString()).toBe(lines(20, { 1: 'by the turn' }));
    expect(existsSync(join(repo, 'NEW.txt'))).toBe(true);
  });

  it('its revert keeps files made later, names later changes to its files, keeps them, and undo brings everything back', async () => {
    const { svc, client } = await service();
    const repo = await endedThenEdited(client, svc);
    await settledState(svc);
    const dry = await invoke(client, 'revert', { dryRun: true });
    expect(dry._meta?.['files']).toEqual([
      { path: 'a.txt', action: 'write' },
      { path: 'b.txt', action: 'write' },
    ]);
    expect(dry._meta?.['userEdited']).toEqual(['b.txt']);
    expect(dry._meta?.['userEdits']).toEqual([{ path: 'b.txt', reason: expect.stringContaining('changed since the session ended') }]);

    const done = await invoke(client, 'revert');
    expect(done._meta?.['files']).toEqual(['a.txt', 'b.txt']);
    expect(done._meta?.['userEdits']).toEqual([{ path: 'b.txt', reason: expect.stringContaining('changed since the session ended') }]);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe(lines(20, { 18: 'by hand later' }));
    expect(readFileSync(join(repo, 'NEW.txt'), 'utf8')).toBe('made after the session ended\n');
    // What it changed stays what it changed: the later hand edit never becomes one of its changes.
    const after = await settledState(svc);
    expect(paths(after)).toEqual(['a.txt', 'b.txt']);
    const b = after.files.find((f) => (f._meta as { path: string }).path === 'b.txt')!;
    const bAfter = await client.request<{ data: string }>('resourceRead', { channel: 'ahp-root://', uri: b.edit.after!.content });
    expect(bAfter.data).toBe(lines(20, { 1: 'by the turn' }));
    const diff = await client.request<{ hunks: { lines: string[]; reverted?: boolean }[] }>('changesetFileDiff', { channel: SESSION_CS, fileId: b.id });
    expect(diff.hunks.map((h) => [h.lines.filter((l) => l.startsWith('+')), h.reverted === true])).toEqual([[['+by the turn'], true]]);

    await invoke(client, 'undo');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('A by the turn\n');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe(lines(20, { 1: 'by the turn', 18: 'by hand later' }));
    expect(readFileSync(join(repo, 'NEW.txt'), 'utf8')).toBe('made after the session ended\n');
  });

  it('end where it ended once imported from a mirror, whatever the checkout holds', async () => {
    const mirrored = await recordMirroredSession(temp, { 'a.txt': 'a\n', 'b.txt': lines(20) }, [
      { id: 't1', message: 'edit both', edit: (repo) => writeFiles(repo, { 'a.txt': 'A by the turn\n', 'b.txt': lines(20, { 1: 'by the turn' }) }) },
    ]);
    services.push({ stop: () => mirrored.stop() } as TestService);
    const checkout = cloneAtStart(temp, mirrored);
    const stateDir = temp.make('state-b-');
    await importMirror({ url: mirrored.url, stateDir, workspaceDir: checkout, env: mirrored.env });
    const { svc, client } = await service(stateDir);
    await svc.service.openHistory([checkout]);
    writeFiles(checkout, { 'a.txt': 'A by the turn\n', 'b.txt': lines(20, { 1: 'by the turn', 18: 'by hand later' }), 'NEW.txt': 'made here\n' });
    const uri = changesetUriTemplate(mirrored.sessionId, 'session');
    expect(paths(await subscribeReady(client, uri))).toEqual(['a.txt', 'b.txt']);
    const dry = await client.request<{ _meta?: Record<string, unknown> }>(
      'invokeChangesetOperation',
      { channel: uri, operationId: 'revert', _meta: { dryRun: true } },
      { timeoutMs: 30_000 },
    );
    expect(dry._meta?.['files']).toEqual([
      { path: 'a.txt', action: 'write' },
      { path: 'b.txt', action: 'write' },
    ]);
    expect(dry._meta?.['userEdits']).toEqual([{ path: 'b.txt', reason: expect.stringContaining('changed since the session ended') }]);
  }, 120_000);

  it('still end where it ended after a restart', async () => {
    const stateDir = temp.make('state-');
    const first = await service(stateDir);
    const repo = await endedThenEdited(first.client, first.svc);
    await first.svc.service.stop();
    writeFileSync(join(repo, 'LATER.txt'), 'made while the server was stopped\n');

    const second = await service(stateDir);
    const [session] = await second.svc.service.sessions.openStored([repo]);
    expect(session?.isEnded).toBe(true);
    const state = await subscribeReady(second.client, SESSION_CS);
    expect(paths(state)).toEqual(['a.txt', 'b.txt']);
    const dry = await invoke(second.client, 'revert', { dryRun: true });
    expect(dry._meta?.['userEdits']).toEqual([{ path: 'b.txt', reason: expect.stringContaining('changed since the session ended') }]);
  });
});
