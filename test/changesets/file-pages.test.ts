import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetFile, type ChangesetState } from '../../protocol/index.js';
import { expandCompactFiles, type ChangesetFilesParams, type ChangesetFilesResult } from '../../protocol/extensions/changeset-files.js';
import { findChangedFile } from '../../server/client/operation-request.js';
import { RpcClient } from '../../server/client/rpc-client.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn } from '../helpers/changesets.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

useMemoryTempDir();

/** 12,000 files over 120 folders: with the default caps the state carries about 1,400 of them. */
const COUNT = 12_000;
const MIB = 1024 * 1024;
const temp = new TempDirs();
const pathOf = (i: number) => `pkg${String(Math.floor(i / 100)).padStart(3, '0')}/file${String(i).padStart(5, '0')}.ts`;

let svc: TestService;
let client: TestClient;
let repo: string;
let uri: string;
/** The largest frame each client received. */
const largest = new Map<TestClient, number>();

async function connect(): Promise<TestClient> {
  const c = await svc.client();
  largest.set(c, 0);
  c.socket.on('message', (data: Buffer) => largest.set(c, Math.max(largest.get(c)!, data.length)));
  return c;
}

const files = (c: TestClient, params: Omit<ChangesetFilesParams, 'channel'>) =>
  c.request<ChangesetFilesResult>('changesetFiles', { channel: uri, ...params }, { timeoutMs: 60_000 });

/** Every page of a listing, in order. */
async function allPages(c: TestClient, params: Omit<ChangesetFilesParams, 'channel' | 'cursor'>): Promise<ChangesetFilesResult[]> {
  const pages = [await files(c, params)];
  while (pages.at(-1)!.nextCursor !== undefined) pages.push(await files(c, { ...params, cursor: pages.at(-1)!.nextCursor! }));
  return pages;
}

/** Subscribes to the turn changeset and resolves with its state once ready (generous waits: the machine may be busy). */
async function subscribeReady(c: TestClient, channel: string): Promise<ChangesetState> {
  await c.request('subscribe', { channel }, { timeoutMs: 60_000 });
  if (c.state<ChangesetState>(channel)?.status === 'computing') {
    await c.waitForEnvelope((e) => e.channel === channel && e.action.type === 'changeset/statusChanged', 120_000);
  }
  return c.state<ChangesetState>(channel)!;
}

const listed = (pages: ChangesetFilesResult[]): ChangesetFile[] => pages.flatMap((p) => (p.compact ? expandCompactFiles(p.compact) : p.files!));
const path = (f: ChangesetFile) => (f._meta as { path: string }).path;

const TOTAL = COUNT + 2;
const EXPECTED = [...Array.from({ length: COUNT }, (_, i) => pathOf(i)), 'seed.txt', 'zz-last/new-name.txt'];

beforeAll(async () => {
  svc = await startTestService();
  client = await connect();
  repo = makeRepo(temp.make(), { 'seed.txt': 'seed\n', 'old-name.txt': 'kept\nacross\nthe rename\n' });
  await client.request('createSession', { channel: 'ahp-session:/P', workingDirectory: pathToFileURL(repo).href });
  const many: Record<string, string> = {};
  for (let i = 0; i < COUNT; i++) many[pathOf(i)] = `export const v${i} = ${i};\n`;
  await recordTurn(client, 'ahp-session:/P', 't', () => {
    writeFiles(repo, many);
    writeFiles(repo, { 'zz-last/new-name.txt': readFileSync(join(repo, 'old-name.txt')), 'seed.txt': 'seed\nmore\n' });
    rmSync(join(repo, 'old-name.txt'));
  });
  uri = expandChangesetUri(changesetUriTemplate('P', 'turn'), { turnId: 't' });
}, 180_000);

afterAll(async () => {
  await svc.stop();
  temp.cleanup();
});

describe('a changeset past its state cap', () => {
  it('gives AHP clients a valid state capped under 1 MiB with the totals of every file', async () => {
    const state = await subscribeReady(client, uri);
    expect(state.status).toBe('ready');
    expect(state.files.length).toBeGreaterThan(100);
    expect(state.files.length).toBeLessThan(COUNT);
    expect(state._meta).toEqual({ totalFiles: TOTAL, additions: COUNT + 1, deletions: 0, truncated: true });
    expect(state.files.map(path)).toEqual(EXPECTED.slice(0, state.files.length));
    expect(largest.get(client)).toBeLessThan(MIB);
    client.assertValid();
  }, 120_000);

  it('lists every file exactly once, in display order, in compact and full pages each under 1 MiB', async () => {
    const c = await connect();
    const compact = await allPages(c, { limit: 5000 });
    expect(compact.map((p) => p.offset)).toEqual([0, 5000, 10_000]);
    expect(compact.every((p) => p.total === TOTAL && p.matched === TOTAL && p.version === compact[0]!.version)).toBe(true);
    const all = listed(compact);
    expect(all.map(path)).toEqual(EXPECTED);
    expect(new Set(all.map((f) => f.id)).size).toBe(TOTAL);
    const last = all[COUNT - 1]!;
    expect(last.id).toBe(pathToFileURL(join(repo, pathOf(COUNT - 1))).href);
    expect(last.edit).toEqual({ after: { uri: last.id, content: '' }, diff: { added: 1, removed: 0 } });
    expect(last._meta).toEqual({ path: pathOf(COUNT - 1), kind: 'added', root: 0 });
    const renamed = all.at(-1)!;
    expect(renamed._meta).toEqual({ path: 'zz-last/new-name.txt', kind: 'renamed', root: 0, oldPath: 'old-name.txt', similarity: 1 });
    expect(renamed.edit.before?.uri).toBe(pathToFileURL(join(repo, 'old-name.txt')).href);

    // The full form: the same files as the state has them, cut by size into several pages.
    const full = await allPages(c, { form: 'full' });
    expect(full.length).toBeGreaterThan(3);
    expect(listed(full).map((f) => f.id)).toEqual(all.map((f) => f.id));
    const state = await subscribeReady(c, uri);
    expect(listed(full).slice(0, state.files.length)).toEqual(state.files);
    // One page of the whole list, compact: 12,002 files fit in one answer.
    const one = await files(c, {});
    expect(one.nextCursor).toBeUndefined();
    expect(expandCompactFiles(one.compact!).length).toBe(TOTAL);
    expect(largest.get(c)).toBeLessThan(MIB);
    c.assertValid();
  }, 120_000);

  it('filters by path, kind and review state across every file', async () => {
    const c = await connect();
    const pkg = await files(c, { filter: { text: 'PKG117/' } });
    expect(pkg.matched).toBe(100);
    expect(expandCompactFiles(pkg.compact!).map(path)).toEqual(EXPECTED.slice(11_700, 11_800));
    const renames = await files(c, { filter: { kind: 'renamed' }, form: 'full' });
    expect(renames.files!.map(path)).toEqual(['zz-last/new-name.txt']);
    const paged = await allPages(c, { filter: { text: '/file1' }, limit: 700 });
    expect(paged.map((p) => p.offset)).toEqual([0, 700, 1400]);
    expect(listed(paged).map(path)).toEqual(EXPECTED.filter((p) => p.includes('/file1')));
    const wanted = [pathToFileURL(join(repo, pathOf(9_000))).href, 'file:///not/in/it', pathToFileURL(join(repo, pathOf(2))).href];
    const byId = await files(c, { ids: wanted });
    expect(byId.files!.map(path)).toEqual([pathOf(2), pathOf(9_000)]);
    expect(byId.files![1]!.edit.after?.content).toMatch(/\S/);
  });

  it('reviews, diffs and reverts a file past the cap', async () => {
    const reviewer = await connect();
    const other = await connect();
    await subscribeReady(reviewer, uri);
    await subscribeReady(other, uri);
    const id = pathToFileURL(join(repo, pathOf(10_500))).href;
    expect(reviewer.state<ChangesetState>(uri)!.files.some((f) => f.id === id)).toBe(false);

    // "Viewed" on a file the state does not carry: echoed to every subscriber, and kept by the server.
    const seq = reviewer.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [id], reviewed: true });
    const echo = await other.waitForEnvelope((e) => e.channel === uri && e.origin?.clientSeq === seq && e.origin.clientId === reviewer.clientId, 60_000);
    expect(echo.rejectionReason).toBeUndefined();
    expect(echo.action).toEqual({ type: 'changeset/filesReviewChanged', files: [id], reviewed: true });
    const viewed = await files(other, { filter: { reviewed: true } });
    expect(expandCompactFiles(viewed.compact!).map((f) => [f.id, f.reviewed])).toEqual([[id, true]]);
    expect((await files(other, { filter: { reviewed: false } })).matched).toBe(TOTAL - 1);

    const diff = await other.request<{ kind: string; added: number; hunks: { lines: string[] }[] }>(
      'changesetFileDiff',
      { channel: uri, fileId: id },
      { timeoutMs: 60_000 },
    );
    expect(diff).toMatchObject({ kind: 'text', added: 1, hunks: [{ lines: ['+export const v10500 = 10500;'] }] });

    // Revert of that one file: the dry run names it, the revert takes it away, nothing else moves.
    const target = { kind: 'resource', resource: id };
    const dry = await other.request<{ _meta: { files: { path: string; action: string }[] } }>(
      'invokeChangesetOperation',
      { channel: uri, operationId: 'revert', target, _meta: { dryRun: true } },
      { timeoutMs: 60_000 },
    );
    expect(dry._meta.files).toEqual([expect.objectContaining({ path: pathOf(10_500) })]);
    expect(existsSync(join(repo, pathOf(10_500)))).toBe(true);
    await other.request('invokeChangesetOperation', { channel: uri, operationId: 'revert', target }, { timeoutMs: 60_000 });
    expect(existsSync(join(repo, pathOf(10_500)))).toBe(false);
    expect(existsSync(join(repo, pathOf(10_499)))).toBe(true);
    for (const c of [reviewer, other]) {
      expect(largest.get(c)).toBeLessThan(MIB);
      c.assertValid();
    }
  }, 120_000);

  it('finds a file past the cap for the command line and MCP by its path', async () => {
    const rpc = await RpcClient.connect(svc.url);
    try {
      const state = await subscribeReady(client, uri);
      const file = await findChangedFile(rpc, uri, state, pathOf(11_234), repo);
      expect(file?.id).toBe(pathToFileURL(join(repo, pathOf(11_234))).href);
      expect(file?.edit.after?.content).toMatch(/\S/);
      expect(await findChangedFile(rpc, uri, state, 'pkg999/none.ts', repo)).toBeUndefined();
    } finally {
      await rpc.close();
    }
  });

  it('refuses a cursor of another version and bad params, naming the field', async () => {
    const c = await connect();
    const first = await files(c, { limit: 10 });
    expect(first.nextCursor).toBe(`${first.version}:10`);
    const stale = await c.requestError('changesetFiles', { channel: uri, cursor: `${first.version + 1}:10` });
    expect(stale).toMatchObject({ code: -32602, message: expect.stringMatching(/files changed since that page/) });
    expect(await c.requestError('changesetFiles', { channel: uri, limit: 0 }, { timeoutMs: 60_000 })).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/params\.limit/),
    });
    expect(await c.requestError('changesetFiles', { channel: uri, filter: { kind: 'moved' } }, { timeoutMs: 60_000 })).toMatchObject({ code: -32602 });
    expect(await c.requestError('changesetFiles', { channel: uri, ids: ['x'], form: 'full' }, { timeoutMs: 60_000 })).toMatchObject({ code: -32602 });
  });
});
