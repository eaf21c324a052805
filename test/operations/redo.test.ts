import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState, type SessionState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_svc, c) => {
  client = c;
});

const SID = 'redo';
const SESSION = `ahp-session:/${SID}`;
const SESSION_CS = changesetUriTemplate(SID, 'session');
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });

async function setUp(): Promise<{ read: (rel: string) => string; repo: string }> {
  const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'keep.txt': 'keep\n' });
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  await client.subscribe(SESSION);
  await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'A by turn 1\n', 'b.txt': 'B by turn 1\n' }));
  await subscribeReady(client, SESSION_CS);
  return { read: (rel) => readFileSync(join(repo, rel), 'utf8'), repo };
}

function invoke(channel: string, operationId: string, meta?: Record<string, unknown>) {
  return client.request<{ message: string; _meta?: Record<string, unknown> }>(
    'invokeChangesetOperation',
    { channel, operationId, ...(meta ? { _meta: meta } : {}) },
    { timeoutMs: 30_000 },
  );
}

const statusOf = (id: string) => client.state<ChangesetState>(SESSION_CS)?.operations?.find((o) => o.id === id)?.status;

describe('redo', () => {
  it('takes back the last undo, dry run first, and can itself be undone', async () => {
    const { read } = await setUp();
    await expect.poll(() => statusOf('redo')).toBe('disabled');
    await invoke(turnUri('t1'), 'revert');
    expect([read('a.txt'), read('b.txt')]).toEqual(['a\n', 'b\n']);
    await invoke(SESSION_CS, 'undo');
    expect([read('a.txt'), read('b.txt')]).toEqual(['A by turn 1\n', 'B by turn 1\n']);
    // Every client sees redo offered once there is an undo to take back.
    await expect.poll(() => statusOf('redo')).toBe('idle');

    const dry = await invoke(SESSION_CS, 'redo', { dryRun: true });
    expect(dry.message).toBe('Dry run: Redid the revert of turn 1: put back 2 files');
    expect(dry._meta?.['files']).toEqual([
      { path: 'a.txt', action: 'write' },
      { path: 'b.txt', action: 'write' },
    ]);
    expect([read('a.txt'), read('b.txt')]).toEqual(['A by turn 1\n', 'B by turn 1\n']);

    const done = await invoke(SESSION_CS, 'redo');
    expect(done.message).toBe('Redid the revert of turn 1: put back 2 files');
    expect(done._meta?.['action']).toBe('Redid: Reverted turn 1: a.txt, b.txt');
    expect([read('a.txt'), read('b.txt'), read('keep.txt')]).toEqual(['a\n', 'b\n', 'keep\n']);
    // The timeline shows it among the user's actions.
    await expect.poll(() => JSON.stringify(client.state<SessionState>(SESSION)?._meta ?? {})).toContain('Redid: Reverted turn 1');
    // One undo, one redo: nothing more to redo, and undo takes the redo back.
    await expect.poll(() => statusOf('redo')).toBe('disabled');
    expect((await invoke(SESSION_CS, 'undo')).message).toBe('Undid the redo of the revert of turn 1: put back 2 files');
    expect([read('a.txt'), read('b.txt')]).toEqual(['A by turn 1\n', 'B by turn 1\n']);
    expect((await invoke(SESSION_CS, 'redo')).message).toBe('Redid the revert of turn 1: put back 2 files');
    expect([read('a.txt'), read('b.txt')]).toEqual(['a\n', 'b\n']);
  });

  it('walks forward through several undos, the last undo first', async () => {
    const { read, repo } = await setUp();
    const file = (rel: string) => ({ kind: 'resource', resource: pathToFileURL(join(repo, rel)).href });
    await client.request('invokeChangesetOperation', { channel: turnUri('t1'), operationId: 'revert', target: file('a.txt') });
    await client.request('invokeChangesetOperation', { channel: turnUri('t1'), operationId: 'revert', target: file('b.txt') });
    await invoke(SESSION_CS, 'undo');
    await invoke(SESSION_CS, 'undo');
    expect([read('a.txt'), read('b.txt')]).toEqual(['A by turn 1\n', 'B by turn 1\n']);
    expect((await invoke(SESSION_CS, 'redo')).message).toBe('Redid the revert of turn 1: put back 1 file');
    expect([read('a.txt'), read('b.txt')]).toEqual(['a\n', 'B by turn 1\n']);
    await invoke(SESSION_CS, 'redo');
    expect([read('a.txt'), read('b.txt')]).toEqual(['a\n', 'b\n']);
    await expect.poll(() => statusOf('redo')).toBe('disabled');
  });

  it('has nothing to redo before an undo, and after a new operation since the undo, and says so', async () => {
    await setUp();
    const none = await client.requestError('invokeChangesetOperation', { channel: SESSION_CS, operationId: 'redo' });
    expect(none.code).toBe(-32602);
    expect(none.message).toMatch(/nothing to redo/);
    await invoke(turnUri('t1'), 'revert');
    await invoke(SESSION_CS, 'undo');
    await expect.poll(() => statusOf('redo')).toBe('idle');
    await invoke(turnUri('t1'), 'revert', { dryRun: true });
    // A dry run writes nothing and changes nothing about redo.
    await expect.poll(() => statusOf('redo')).toBe('idle');
    await invoke(turnUri('t1'), 'revert');
    await expect.poll(() => statusOf('redo')).toBe('disabled');
    const after = await client.requestError('invokeChangesetOperation', { channel: SESSION_CS, operationId: 'redo' });
    expect(after.code).toBe(-32602);
    expect(after.message).toMatch(/nothing to redo \(redo only follows an undo, and a new revert, discard or restore since leaves nothing to redo\)/);
  });

  it('refuses a file edited since the undo, writes nothing, and keeps the edit', async () => {
    const { read, repo } = await setUp();
    await invoke(turnUri('t1'), 'revert');
    await invoke(SESSION_CS, 'undo');
    writeFiles(repo, { 'a.txt': 'A by turn 1, then edited by the user\n' });
    const refused = await client.requestError('invokeChangesetOperation', { channel: SESSION_CS, operationId: 'redo' });
    expect(refused.code).toBe(-32010);
    expect(refused.message).toBe('Nothing was written: 1 conflict: a.txt (changed since undo wrote it)');
    expect([read('a.txt'), read('b.txt')]).toEqual(['A by turn 1, then edited by the user\n', 'B by turn 1\n']);
    // The dry run says the same, and redo stays possible once the file is as the undo left it.
    await expect(invoke(SESSION_CS, 'redo', { dryRun: true })).rejects.toThrow(/changed since undo wrote it/);
    writeFiles(repo, { 'a.txt': 'A by turn 1\n' });
    await invoke(SESSION_CS, 'redo');
    expect([read('a.txt'), read('b.txt')]).toEqual(['a\n', 'b\n']);
  });
});
