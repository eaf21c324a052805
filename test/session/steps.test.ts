import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  changesetUriTemplate,
  expandChangesetUri,
  type ChangesetFileSetAction,
  type ChangesetState,
  type ChatState,
  type SessionState,
} from '../../protocol/index.js';
import type { TimelineMeta, TurnStats } from '../../protocol/extensions/timeline.js';
import { ChangesetService } from '../../server/service.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
const running: { service: ChangesetService; client: TestClient }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.client.close().catch(() => undefined);
    await r.service.stop().catch(() => undefined);
  }
  temp.cleanup();
});

const SID = 'steps-test';
const SESSION = `ahp-session:/${SID}`;
const uriOf = (kind: 'turn' | 'step' | 'since', vars: Record<string, string>) => expandChangesetUri(changesetUriTemplate(SID, kind), vars);

async function start(stateDir: string, dir: string): Promise<{ service: ChangesetService; client: TestClient }> {
  // These tests read back files presented from outside the workspace, which only this flag serves.
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined, serveOutsideFiles: true });
  const { url } = await service.start();
  const client = await TestClient.connect(url);
  await client.initialize();
  running.push({ service, client });
  // A stored, unended session with this id is resumed with its turns.
  expect(await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 30_000 })).toBeNull();
  return { service, client };
}

async function stop(r: { service: ChangesetService; client: TestClient }): Promise<void> {
  running.splice(running.indexOf(r), 1);
  await r.client.close();
  await r.service.stop();
}

/** A turn's entry in the session state's `_meta.turns`: its steps and presented files. */
async function turnMeta(client: TestClient, turnId: string): Promise<TurnStats> {
  const state = (await client.subscribe(SESSION)).snapshot!.state as SessionState;
  return (state._meta as unknown as TimelineMeta).turns[turnId]!;
}

function read(dir: string, path: string): string | undefined {
  return existsSync(join(dir, path)) ? readFileSync(join(dir, path), 'utf8') : undefined;
}

function paths(state: ChangesetState): string[] {
  return state.files.map((f) => (f._meta as { path: string }).path);
}

/** One turn of three tool calls, each announced with beforeEdit before it writes. */
async function threeToolCalls(client: TestClient, dir: string): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1', message: 'three edits' }, { timeoutMs: 30_000 });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['a.txt'], tool: 'Edit' }, { timeoutMs: 30_000 });
  writeFiles(dir, { 'a.txt': 'a1\n' });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['b.txt', 'a.txt'], tool: 'MultiEdit' }, { timeoutMs: 30_000 });
  writeFiles(dir, { 'b.txt': 'b2\n', 'a.txt': 'a2\n' });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [join(dir, 'c.txt')], tool: 'Write' }, { timeoutMs: 30_000 });
  writeFiles(dir, { 'c.txt': 'c3\n' });
  await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' }, { timeoutMs: 60_000 });
}

function workspace(): { dir: string; stateDir: string } {
  const dir = temp.make('cs-steps-');
  writeFiles(dir, { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'keep.txt': 'keep\n' });
  return { dir, stateDir: temp.make('cs-steps-state-') };
}

describe('step checkpoints', () => {
  // The first test of the file starts the first server: on a machine under heavy load, longer than the default 30 s.
  it('lists the steps of a turn in the session state _meta and restores to before the second tool call, exactly', async () => {
    const { dir, stateDir } = workspace();
    const { client } = await start(stateDir, dir);
    await threeToolCalls(client, dir);

    const steps = (await turnMeta(client, 't1')).steps!;
    expect(steps.map((s) => [s.step, s.tool, s.paths])).toEqual([
      [1, 'Edit', ['a.txt']],
      [2, 'MultiEdit', ['b.txt', 'a.txt']],
      [3, 'Write', ['c.txt']],
    ]);
    expect(steps.every((s) => !Number.isNaN(Date.parse(s.at)))).toBe(true);

    const result = await client.request<{ message: string }>(
      'invokeChangesetOperation',
      { channel: uriOf('turn', { turnId: 't1' }), operationId: 'restore-checkpoint', _meta: { step: 2 } },
      { timeoutMs: 30_000 },
    );
    expect(result.message).toBe('Restored 3 files to before step 2 (MultiEdit) of turn 1');
    // Before the second tool call: the first one's edit is there, nothing after it.
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt'), read(dir, 'keep.txt')]).toEqual(['a1\n', 'b0\n', undefined, 'keep\n']);

    // `undo` brings back the state the restore overwrote.
    await client.request('invokeChangesetOperation', { channel: `ahp-changeset:/${SID}/session`, operationId: 'undo' }, { timeoutMs: 30_000 });
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt')]).toEqual(['a2\n', 'b2\n', 'c3\n']);
  }, 90_000);

  it('shows exactly what one tool call changed in its step changeset, which also restores to before it', async () => {
    const { dir, stateDir } = workspace();
    const { client } = await start(stateDir, dir);
    await threeToolCalls(client, dir);

    const second = await subscribeReady(client, uriOf('step', { turnId: 't1', step: '2' }));
    expect(second.status).toBe('ready');
    expect(paths(second)).toEqual(['a.txt', 'b.txt']);
    expect(second.files.map((f) => [(f._meta as { kind: string }).kind, f.edit.diff])).toEqual([
      ['modified', { added: 1, removed: 1 }],
      ['modified', { added: 1, removed: 1 }],
    ]);
    expect((await turnMeta(client, 't1')).steps![1]!.tool).toBe('MultiEdit');
    const before = await client.request<{ data: string }>('resourceRead', { channel: 'ahp-root://', uri: second.files[0]!.edit.before!.content });
    expect(before.data).toBe('a1\n');
    expect(second.operations!.map((o) => o.id)).toEqual(['revert', 'restore-checkpoint']);

    const third = await subscribeReady(client, uriOf('step', { turnId: 't1', step: '3' }));
    expect(paths(third)).toEqual(['c.txt']);

    await client.request(
      'invokeChangesetOperation',
      { channel: uriOf('step', { turnId: 't1', step: '3' }), operationId: 'restore-checkpoint' },
      { timeoutMs: 30_000 },
    );
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt')]).toEqual(['a2\n', 'b2\n', undefined]);
  });

  it('answers malformed and unknown step targets with precise errors', async () => {
    const { dir, stateDir } = workspace();
    const { client } = await start(stateDir, dir);
    await threeToolCalls(client, dir);
    const code = async (method: string, params: unknown) => (await client.requestError(method, params)).code;

    expect(await code('subscribe', { channel: `ahp-changeset:/${SID}/step/t1` })).toBe(-32602);
    expect(await code('subscribe', { channel: `ahp-changeset:/${SID}/step/t1/0` })).toBe(-32602);
    expect(await code('subscribe', { channel: `ahp-changeset:/${SID}/step/t1/02` })).toBe(-32602);
    expect(await code('subscribe', { channel: `ahp-changeset:/${SID}/step/t1/start` })).toBe(-32602);
    expect(await code('subscribe', { channel: `ahp-changeset:/${SID}/since/t1/x` })).toBe(-32602);
    const missing = await client.requestError('subscribe', { channel: uriOf('step', { turnId: 't1', step: '4' }) });
    expect(missing).toMatchObject({ code: -32008, message: 'turn 1 has no step 4 (it has 3 steps)' });
    expect(await code('subscribe', { channel: uriOf('since', { turnId: 'nope', step: 'start' }) })).toBe(-32008);

    const turnUri = uriOf('turn', { turnId: 't1' });
    const invoke = (operationId: string, meta: unknown) => client.requestError('invokeChangesetOperation', { channel: turnUri, operationId, _meta: meta });
    expect(await invoke('restore-checkpoint', { step: 0 })).toMatchObject({
      code: -32602,
      message: 'params._meta.step must be a step number (an integer from 1)',
    });
    expect(await invoke('restore-checkpoint', { step: '2' })).toMatchObject({ code: -32602 });
    expect(await invoke('restore-checkpoint', { step: 9 })).toMatchObject({ code: -32602, message: 'turn 1 has no step 9 (it has 3 steps)' });
    expect(await invoke('revert', { step: 2 })).toMatchObject({
      code: -32602,
      message: 'params._meta.step: only restore-checkpoint on a turn changeset takes a step',
    });
    expect(await invoke('restore-checkpoint-and-turns', { step: 2 })).toMatchObject({ code: -32602 });
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt')]).toEqual(['a2\n', 'b2\n', 'c3\n']);
  });
});

describe('since changesets', () => {
  it('shows a turn start → now, follows edits live, and reverts selected files to the checkpoint', async () => {
    const { dir, stateDir } = workspace();
    const { client } = await start(stateDir, dir);
    await threeToolCalls(client, dir);

    const uri = uriOf('since', { turnId: 't1', step: 'start' });
    expect(uri).toBe(`ahp-changeset:/${SID}/since/t1/start`);
    const since = await subscribeReady(client, uri);
    expect(paths(since)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(since.operations!.map((o) => o.id)).toEqual(['revert']);

    // Live: an edit after the turn shows up while subscribed.
    writeFiles(dir, { 'keep.txt': 'kept no more\n' });
    await client.waitForEnvelope(
      (e) =>
        e.channel === uri && e.action.type === 'changeset/fileSet' && ((e.action as ChangesetFileSetAction).file._meta as { path: string }).path === 'keep.txt',
      15_000,
    );
    expect(paths(client.state<ChangesetState>(uri)!)).toEqual(['a.txt', 'b.txt', 'c.txt', 'keep.txt']);

    // Review works on it like on every kind.
    const bId = client.state<ChangesetState>(uri)!.files.find((f) => (f._meta as { path: string }).path === 'b.txt')!.id;
    client.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [bId], reviewed: true });
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/filesReviewChanged');

    // Revert the selected files: each back to the checkpoint, nothing else touched.
    for (const name of ['a.txt', 'c.txt']) {
      const id = client.state<ChangesetState>(uri)!.files.find((f) => (f._meta as { path: string }).path === name)!.id;
      const result = await client.request<{ message: string }>(
        'invokeChangesetOperation',
        { channel: uri, operationId: 'revert', target: { kind: 'resource', resource: id } },
        { timeoutMs: 30_000 },
      );
      expect(result.message).toBe('Reverted 1 file');
    }
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt'), read(dir, 'keep.txt')]).toEqual(['a0\n', 'b2\n', undefined, 'kept no more\n']);
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/fileRemoved', 15_000);
    await expect.poll(() => paths(client.state<ChangesetState>(uri)!), { interval: 5 }).toEqual(['b.txt', 'keep.txt']);
  });

  it('starts from a step checkpoint when one is named', async () => {
    const { dir, stateDir } = workspace();
    const { client } = await start(stateDir, dir);
    await threeToolCalls(client, dir);
    const uri = uriOf('since', { turnId: 't1', step: '3' });
    const since = await subscribeReady(client, uri);
    expect(paths(since)).toEqual(['c.txt']);
    await client.request('invokeChangesetOperation', { channel: uri, operationId: 'revert' }, { timeoutMs: 30_000 });
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt')]).toEqual(['a2\n', 'b2\n', undefined]);
  });
});

describe('presented files', () => {
  it('shows them in the chat response and the session state _meta, serves their content, refuses what was never presented', async () => {
    const { dir, stateDir } = workspace();
    const outside = temp.make('cs-presented-');
    writeFileSync(join(outside, 'report.md'), '# Report\n');
    writeFiles(dir, { 'docs/plan.txt': 'plan\n' });
    const { client } = await start(stateDir, dir);
    const chatUri = ((await client.subscribe(SESSION)).snapshot!.state as SessionState).defaultChat!;
    await client.subscribe(chatUri);

    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' }, { timeoutMs: 30_000 });
    const presented = await client.request<{ presented: { path: string; uri: string }[] }>('harness/presentFiles', {
      channel: SESSION,
      turnId: 't1',
      files: [{ path: join(outside, 'report.md'), description: 'What was found' }, { path: 'docs/plan.txt' }],
    });
    const reportUri = pathToFileURL(join(outside, 'report.md')).href;
    const planUri = pathToFileURL(join(dir, 'docs/plan.txt')).href;
    expect(presented.presented.map((p) => p.uri)).toEqual([reportUri, planUri]);
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' }, { timeoutMs: 60_000 });

    const chat = client.state<ChatState>(chatUri)!;
    const parts = chat.turns.find((t) => t.id === 't1')!.responseParts;
    expect(parts.filter((p) => p.kind === 'contentRef').map((p) => (p as { uri: string }).uri)).toEqual([reportUri, planUri]);
    expect(parts.find((p) => p.kind === 'markdown' && p.id === 'presented-1')).toMatchObject({ content: expect.stringContaining('What was found') });

    const meta = (await turnMeta(client, 't1')).presentedFiles!;
    expect(meta.map((f) => [f.uri, f.description])).toEqual([
      [reportUri, 'What was found'],
      [planUri, undefined],
    ]);
    expect(meta[1]!.path).toBe('docs/plan.txt');

    const readUri = (uri: string) => client.request<{ data: string; encoding: string }>('resourceRead', { channel: 'ahp-root://', uri });
    expect(await readUri(reportUri)).toMatchObject({ data: '# Report\n', encoding: 'utf-8' });
    // Their current content, not a copy.
    writeFileSync(join(outside, 'report.md'), '# Report v2\n');
    expect((await readUri(reportUri)).data).toBe('# Report v2\n');

    const refused = (uri: string) => client.requestError('resourceRead', { channel: 'ahp-root://', uri });
    expect(await refused(pathToFileURL(join(outside, 'other.md')).href)).toMatchObject({ code: -32006, data: { reason: 'not-presented' } });
    expect(await refused(pathToFileURL(join(dir, 'keep.txt')).href)).toMatchObject({ code: -32006, data: { reason: 'not-presented' } });
    writeFileSync(join(dir, 'docs/plan.txt'), Buffer.alloc(1024 * 1024 + 1, 'x'));
    expect(await refused(planUri)).toMatchObject({ code: -32006, data: { reason: 'oversized' } });
    rmSync(join(outside, 'report.md'));
    expect(await refused(reportUri)).toMatchObject({ code: -32006, data: { reason: 'missing' } });
  });

  it('refuses files that do not exist, directories, and malformed requests, naming the field', async () => {
    const { dir, stateDir } = workspace();
    const { client } = await start(stateDir, dir);
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' }, { timeoutMs: 30_000 });
    const present = (params: Record<string, unknown>) => client.requestError('harness/presentFiles', { channel: SESSION, turnId: 't1', ...params });

    expect(await present({ files: [{ path: 'a.txt' }, { path: 'missing.md' }] })).toMatchObject({
      code: -32602,
      message: 'params.files[1].path: missing.md does not exist',
    });
    expect(await present({ files: [{ path: '.' }] })).toMatchObject({ code: -32602, message: 'params.files[0].path: . is not a regular file' });
    expect(await present({ files: [] })).toMatchObject({ code: -32602, message: 'params.files must be a non-empty array of {path, description?}' });
    expect(await present({ files: ['a.txt'] })).toMatchObject({ code: -32602, message: 'params.files[0] must be an object {path, description?}' });
    expect(await present({ files: [{ path: 'a.txt', description: 7 }] })).toMatchObject({
      code: -32602,
      message: 'params.files[0].description must be a string',
    });
    expect(await present({ files: Array.from({ length: 101 }, () => ({ path: 'a.txt' })) })).toMatchObject({
      code: -32602,
      message: 'params.files must have at most 100 entries',
    });
    expect(await present({ files: [{ path: `${'x'.repeat(256)}.md` }] })).toMatchObject({
      code: -32602,
      message: 'params.files[0].path has a path component longer than 255 bytes',
    });
    expect(await present({ turnId: 't2', files: [{ path: 'a.txt' }] })).toMatchObject({
      code: -32602,
      message: 'turnId "t2" does not match the active turn "t1"',
    });
    expect(await client.requestError('harness/presentFiles', { channel: 'ahp-session:/nope', turnId: 't1', files: [{ path: 'a.txt' }] })).toMatchObject({
      code: -32001,
    });
  });
});

describe('steps and presented files across a restart', () => {
  it('keeps the steps, their changesets, the restore target and the presented files', async () => {
    const { dir, stateDir } = workspace();
    const outside = temp.make('cs-presented-');
    writeFileSync(join(outside, 'notes.txt'), 'notes\n');
    const first = await start(stateDir, dir);
    await first.client.request('harness/turnStarted', { channel: SESSION, turnId: 't1', message: 'three edits' }, { timeoutMs: 30_000 });
    await first.client.request('harness/presentFiles', { channel: SESSION, turnId: 't1', files: [{ path: join(outside, 'notes.txt'), description: 'Notes' }] });
    await first.client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' }, { timeoutMs: 60_000 });
    await threeToolCallsAs(first.client, dir, 't2');
    await stop(first);

    const second = await start(stateDir, dir);
    const client = second.client;
    const chatUri = ((await client.subscribe(SESSION)).snapshot!.state as SessionState).defaultChat!;
    await client.subscribe(chatUri);
    const parts = client.state<ChatState>(chatUri)!.turns.find((t) => t.id === 't1')!.responseParts;
    const notesUri = pathToFileURL(join(outside, 'notes.txt')).href;
    expect(parts.filter((p) => p.kind === 'contentRef').map((p) => (p as { uri: string }).uri)).toEqual([notesUri]);
    expect((await client.request<{ data: string }>('resourceRead', { channel: 'ahp-root://', uri: notesUri })).data).toBe('notes\n');
    expect((await turnMeta(client, 't1')).presentedFiles!.map((f) => f.description)).toEqual(['Notes']);
    expect((await turnMeta(client, 't2')).steps!.map((s) => s.tool)).toEqual(['Edit', 'MultiEdit', 'Write']);
    expect(paths(await subscribeReady(client, uriOf('step', { turnId: 't2', step: '2' })))).toEqual(['a.txt', 'b.txt']);
    await client.request(
      'invokeChangesetOperation',
      { channel: uriOf('turn', { turnId: 't2' }), operationId: 'restore-checkpoint', _meta: { step: 2 } },
      { timeoutMs: 30_000 },
    );
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'c.txt')]).toEqual(['a1\n', 'b0\n', undefined]);
  });
});

async function threeToolCallsAs(client: TestClient, dir: string, turnId: string): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId }, { timeoutMs: 30_000 });
  for (const [tool, files] of [
    ['Edit', { 'a.txt': 'a1\n' }],
    ['MultiEdit', { 'b.txt': 'b2\n', 'a.txt': 'a2\n' }],
    ['Write', { 'c.txt': 'c3\n' }],
  ] as const) {
    await client.request('harness/beforeEdit', { channel: SESSION, turnId, paths: Object.keys(files), tool }, { timeoutMs: 30_000 });
    writeFiles(dir, files);
  }
  await client.request('harness/turnEnded', { channel: SESSION, turnId }, { timeoutMs: 60_000 });
}
