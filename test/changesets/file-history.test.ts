import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FileHistoryResult, WorkspaceFileDiff } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_svc, c) => {
  client = c;
});

const SESSION = 'ahp-session:/history';

/** Two turns over a.txt: the first in three steps (two of them edit a.txt), a hand edit, then a turn without steps deleting it. */
async function record(): Promise<string> {
  const repo = makeRepo(temp.make(), { 'a.txt': 'one\n', 'keep.txt': 'keep\n' });
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1', message: 'grow a.txt' });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['a.txt'], tool: 'Edit' });
  writeFiles(repo, { 'a.txt': 'one\ntwo\n' });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['b.txt'], tool: 'Write' });
  writeFiles(repo, { 'b.txt': 'b\n' });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['a.txt'], tool: 'MultiEdit' });
  writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' });
  await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' }, { timeoutMs: 60_000 });
  // The user edits a.txt between the turns.
  writeFiles(repo, { 'a.txt': 'zero\none\ntwo\nthree\n' });
  await client.request('harness/turnStarted', { channel: SESSION, turnId: 't2' });
  rmSync(join(repo, 'a.txt'));
  await client.request('harness/turnEnded', { channel: SESSION, turnId: 't2' }, { timeoutMs: 60_000 });
  return repo;
}

const history = (path: string, limit?: number) =>
  client.request<FileHistoryResult>('fileHistory', { session: SESSION, path, ...(limit !== undefined ? { limit } : {}) });

describe('fileHistory', () => {
  it('lists every turn and step that changed a file, oldest first, with its versions and line counts', async () => {
    const repo = await record();
    const answer = await history('a.txt');
    expect(answer.path).toBe('a.txt');
    expect(answer.truncated).toBeUndefined();
    expect(
      answer.entries.map(({ turn, step, tool, kind, added, removed, editedBefore }) => ({ turn, step, tool, kind, added, removed, editedBefore })),
    ).toEqual([
      { turn: 1, step: 1, tool: 'Edit', kind: 'modified', added: 1, removed: 0, editedBefore: undefined },
      { turn: 1, step: 3, tool: 'MultiEdit', kind: 'modified', added: 1, removed: 0, editedBefore: undefined },
      // The hand edit between the turns is said: turn 2 started from another version than turn 1 left.
      { turn: 2, step: undefined, tool: undefined, kind: 'deleted', added: 0, removed: 4, editedBefore: true },
    ]);
    const [first, second, third] = answer.entries;
    // Versions follow one another: each change starts where the one before ended, but for the hand edit.
    expect(second!.beforeOid).toBe(first!.afterOid);
    expect(third!.beforeOid).not.toBe(second!.afterOid);
    expect(third!.afterOid).toBeUndefined();
    expect(second!.changeset).toBe('ahp-changeset:/history/step/t1/3');
    expect(third!.changeset).toBe('ahp-changeset:/history/turn/t2');
    expect(Date.parse(first!.at)).not.toBeNaN();

    // Each entry names the diff of that version against the one before.
    const diff = await client.request<WorkspaceFileDiff>('changesetFileDiff', { channel: second!.changeset, fileId: second!.fileId });
    expect(diff.kind === 'text' && diff.hunks.flatMap((h) => h.lines)).toEqual([' one', ' two', '+three']);

    // Named by absolute path or file URI alike; a file only one step touched; one no turn touched.
    expect((await history(join(repo, 'a.txt'))).entries).toHaveLength(3);
    const b = await history(pathToFileURL(join(repo, 'b.txt')).href);
    expect(b.entries.map((e) => [e.turn, e.step, e.tool, e.kind, e.added])).toEqual([[1, 2, 'Write', 'added', 1]]);
    expect((await history('keep.txt')).entries).toEqual([]);
  });

  it('keeps the newest entries within the limit and says so; refuses paths outside and bad params', async () => {
    await record();
    const newest = await history('a.txt', 1);
    expect(newest.truncated).toBe(true);
    expect(newest.entries.map((e) => e.turn)).toEqual([2]);
    const outside = await client.requestError('fileHistory', { session: SESSION, path: '/etc/passwd' });
    expect(outside.code).toBe(-32602);
    expect(outside.message).toMatch(/outside the session's working directories/);
    expect((await client.requestError('fileHistory', { session: SESSION })).message).toMatch(/params.path must be a non-empty string/);
    expect((await client.requestError('fileHistory', { session: SESSION, path: 'a.txt', limit: 0 })).message).toMatch(/params.limit/);
    expect((await client.requestError('fileHistory', { session: 'ahp-session:/nope', path: 'a.txt' })).code).toBe(-32001);
  });
});
