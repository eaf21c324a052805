import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState, type ChatState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn as record, subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
let repo: string;
const SID = 'ops';
const SESSION = `ahp-session:/${SID}`;
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });
const SESSION_CS = changesetUriTemplate(SID, 'session');
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i}`}\n`).join('');
const read = (rel: string) => readFileSync(join(repo, rel), 'utf8');
const fileId = (rel: string) => pathToFileURL(join(repo, rel)).href;

beforeEach(async () => {
  svc = await startTestService();
  client = await svc.client();
  repo = makeRepo(temp.make(), { 'a.txt': lines(20), 'b.txt': 'b\n', 'c.sh': '#!/bin/sh\necho c\n', 'keep.txt': 'untouched\n' });
  chmodSync(join(repo, 'c.sh'), 0o755);
  git(repo, ['commit', '-q', '-a', '-m', 'exec']);
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
});
afterEach(async () => {
  await svc.stop();
  temp.cleanup();
});

function invoke(channel: string, operationId: string, target?: unknown, meta?: unknown) {
  return client.request<{ message: string; _meta?: Record<string, unknown> }>(
    'invokeChangesetOperation',
    { channel, operationId, ...(target ? { target } : {}), ...(meta ? { _meta: meta } : {}) },
    { timeoutMs: 20_000 },
  );
}

function paths(state: ChangesetState): string[] {
  return state.files.map((f) => (f._meta as { path: string }).path);
}

const recordTurn = (turnId: string, edit: () => void) => record(client, SESSION, turnId, edit);
const ready = (uri: string, c: TestClient = client) => subscribeReady(c, uri);

describe('changeset operations', () => {
  it('a stop during an operation waits for it: nothing is written to the state directory afterwards', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': lines(20, { 3: 'three' }), 'b.txt': 'B\n' }));
    await ready(SESSION_CS);
    const running = invoke(SESSION_CS, 'revert').catch(() => undefined);
    // Stop as soon as the operation has started writing the workspace back.
    await expect.poll(() => read('b.txt'), { interval: 1 }).toBe('b\n');
    await svc.service.stop();
    await running;
    const listing = (): string[] =>
      readdirSync(svc.stateDir, { recursive: true, withFileTypes: true }).map((d) => {
        const path = join(d.parentPath, d.name);
        return `${path} ${d.isFile() ? statSync(path).size : ''}`;
      });
    const after = listing().sort();
    await new Promise((r) => setTimeout(r, 500));
    expect(listing().sort()).toEqual(after);
  });

  it('reverts a turn under later edits, and undo brings back the exact bytes', async () => {
    await recordTurn('t1', () => {
      writeFiles(repo, { 'a.txt': lines(20, { 2: 'by t1' }), 'b.txt': 'B\n', 'new.txt': 'created\n' });
      rmSync(join(repo, 'c.sh'));
    });
    await recordTurn('t2', () => writeFiles(repo, { 'a.txt': lines(20, { 2: 'by t1', 15: 'by t2' }) }));
    const turn = await ready(turnUri('t1'));
    expect(turn.operations!.map((o) => [o.id, o.scopes, typeof o.confirmation])).toEqual([
      ['revert', ['changeset', 'resource', 'range'], 'string'],
      ['restore-checkpoint', ['changeset'], 'string'],
      ['restore-checkpoint-and-turns', ['changeset'], 'string'],
    ]);
    await ready(SESSION_CS);
    const beforeRevert = { a: read('a.txt'), b: read('b.txt'), n: read('new.txt') };

    const result = await invoke(turnUri('t1'), 'revert');
    expect(result.message).toBe('Reverted 4 files');
    expect(read('a.txt')).toBe(lines(20, { 15: 'by t2' }));
    expect(read('b.txt')).toBe('b\n');
    expect(existsSync(join(repo, 'new.txt'))).toBe(false);
    expect(read('c.sh')).toBe('#!/bin/sh\necho c\n');
    expect(statSync(join(repo, 'c.sh')).mode & 0o111).not.toBe(0);
    expect(read('keep.txt')).toBe('untouched\n');
    // The reverted files leave the live session view; t2's edit stays.
    await client.waitForEnvelope((e) => e.channel === SESSION_CS && e.action.type === 'changeset/fileRemoved');
    await waitFor(() => paths(client.state<ChangesetState>(SESSION_CS)!).join() === 'a.txt');

    const session = client.state<ChangesetState>(SESSION_CS)!;
    await waitFor(() => client.state<ChangesetState>(SESSION_CS)!.operations!.find((o) => o.id === 'undo')!.status === 'idle');
    expect(session.operations!.map((o) => o.id)).toEqual(['revert', 'undo', 'redo']);
    expect((await invoke(SESSION_CS, 'undo')).message).toBe('Undid the revert of turn 1: put back 4 files');
    expect({ a: read('a.txt'), b: read('b.txt'), n: read('new.txt') }).toEqual(beforeRevert);
    expect(existsSync(join(repo, 'c.sh'))).toBe(false);
  });

  it('refuses a conflicting revert, writes nothing, and reports every conflicting path', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': lines(20, { 2: 'by t1' }), 'b.txt': 'B\n' }));
    writeFiles(repo, { 'a.txt': lines(20, { 2: 'by the user' }) });
    await ready(turnUri('t1'));
    const error = await client.requestError('invokeChangesetOperation', { channel: turnUri('t1'), operationId: 'revert' });
    expect(error.code).toBe(-32010);
    expect(error.message).toContain('a.txt (edited since on the same lines)');
    expect(read('a.txt')).toBe(lines(20, { 2: 'by the user' }));
    expect(read('b.txt')).toBe('B\n');
    const op = client.state<ChangesetState>(turnUri('t1'))!.operations!.find((o) => o.id === 'revert')!;
    expect(op.status).toBe('error');
    expect(op.error?.message).toContain('a.txt');
  });

  it('reverts one hunk by range, and one file by resource', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': lines(20, { 1: 'first', 17: 'second' }), 'b.txt': 'B\n' }));
    await ready(turnUri('t1'));
    const range = { start: { line: 17, character: 0 }, end: { line: 17, character: 3 } };
    await invoke(turnUri('t1'), 'revert', { kind: 'range', resource: fileId('a.txt'), side: 'after', range });
    expect(read('a.txt')).toBe(lines(20, { 1: 'first' }));
    await invoke(turnUri('t1'), 'revert', { kind: 'resource', resource: fileId('b.txt') });
    expect(read('b.txt')).toBe('b\n');
    expect(read('a.txt')).toBe(lines(20, { 1: 'first' }));
  });

  it('discards an uncommitted file back to HEAD without touching the index', async () => {
    const index = readFileSync(join(repo, '.git', 'index'));
    writeFiles(repo, { 'b.txt': 'edited by hand\n' });
    const state = await ready(changesetUriTemplate(SID, 'uncommitted'));
    expect(state.operations!.map((o) => o.id)).toEqual(['discard']);
    expect((await invoke(changesetUriTemplate(SID, 'uncommitted'), 'discard', { kind: 'resource', resource: fileId('b.txt') })).message).toBe(
      'Discarded changes to 1 file',
    );
    expect(read('b.txt')).toBe('b\n');
    expect(readFileSync(join(repo, '.git', 'index'))).toEqual(index);
  });

  it('restores a checkpoint, names files with edits no turn made, and undo brings them back', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': lines(20, { 0: 't1' }) }));
    await recordTurn('t2', () => writeFiles(repo, { 'b.txt': 'B by t2\n', 'made.txt': 'made by t2\n' }));
    writeFiles(repo, { 'keep.txt': 'edited by the user\n' });
    await ready(turnUri('t2'));
    const dry = await invoke(turnUri('t2'), 'restore-checkpoint', undefined, { dryRun: true });
    expect(dry._meta?.['files']).toEqual([
      { path: 'b.txt', action: 'write' },
      { path: 'keep.txt', action: 'write' },
      { path: 'made.txt', action: 'delete' },
    ]);
    expect(read('b.txt')).toBe('B by t2\n');

    const result = await invoke(turnUri('t2'), 'restore-checkpoint');
    expect(result.message).toBe('Restored 3 files to the start of turn 2; 1 file had edits no turn made: keep.txt (undo brings them back)');
    expect([read('a.txt'), read('b.txt'), read('keep.txt'), existsSync(join(repo, 'made.txt'))]).toEqual([lines(20, { 0: 't1' }), 'b\n', 'untouched\n', false]);
    await ready(SESSION_CS);
    await waitFor(() => client.state<ChangesetState>(SESSION_CS)!.operations!.find((o) => o.id === 'undo')!.status === 'idle');
    await invoke(SESSION_CS, 'undo');
    expect([read('b.txt'), read('keep.txt'), read('made.txt')]).toEqual(['B by t2\n', 'edited by the user\n', 'made by t2\n']);
  });

  it('restores a checkpoint and drops the later turns from the chat', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': 'one\n' }));
    await recordTurn('t2', () => writeFiles(repo, { 'a.txt': 'two\n' }));
    await recordTurn('t3', () => writeFiles(repo, { 'a.txt': 'three\n' }));
    const chatUri = `ahp-chat:/${SID}`;
    await client.subscribe(chatUri);
    await ready(turnUri('t3'));
    await ready(turnUri('t2'));
    const cleared = client.waitForEnvelope((e) => e.channel === turnUri('t3') && e.action.type === 'changeset/cleared');
    await invoke(turnUri('t2'), 'restore-checkpoint-and-turns');
    expect(read('a.txt')).toBe('one\n');
    await cleared;
    await waitFor(
      () =>
        client
          .state<ChatState>(chatUri)!
          .turns.map((t) => t.id)
          .join() === 't1',
    );
    expect((await client.requestError('subscribe', { channel: turnUri('t3') })).code).toBe(-32008);
  });

  it('validates every invocation precisely', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': lines(20, { 2: 'x' }) }));
    await ready(turnUri('t1'));
    await ready(SESSION_CS);
    const expectCode = async (params: Record<string, unknown>, code: number, text?: RegExp) => {
      const error = await client.requestError('invokeChangesetOperation', params);
      expect(error.code, JSON.stringify(params)).toBe(code);
      if (text) expect(error.message).toMatch(text);
    };
    await expectCode({ channel: turnUri('t1'), operationId: 'explode' }, -32602, /not an operation/);
    await expectCode(
      { channel: turnUri('t1'), operationId: 'restore-checkpoint', target: { kind: 'resource', resource: fileId('a.txt') } },
      -32602,
      /target.kind/,
    );
    await expectCode({ channel: turnUri('t1'), operationId: 'revert', target: { kind: 'resource', resource: fileId('keep.txt') } }, -32602, /not a file of/);
    await expectCode(
      {
        channel: turnUri('t1'),
        operationId: 'revert',
        target: { kind: 'range', resource: fileId('a.txt'), range: { start: { line: 90, character: 0 }, end: { line: 91, character: 0 } } },
      },
      -32602,
      /outside the file/,
    );
    await expectCode({ channel: SESSION_CS, operationId: 'undo' }, -32602, /nothing to undo/);
    await expectCode({ channel: 'ahp-changeset:/nope/session', operationId: 'revert' }, -32001);
    await expectCode({ channel: turnUri('t1'), operationId: 'revert', _meta: { dryRun: 'yes' } }, -32602, /dryRun/);
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't2' });
    await expectCode({ channel: turnUri('t1'), operationId: 'revert' }, -32004);
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't2' });
    expect(read('a.txt')).toBe(lines(20, { 2: 'x' }));
  });

  it('refuses a file that resolves through a symlink outside the working directory', async () => {
    const outside = temp.make('outside-');
    await recordTurn('t1', () => {
      mkdirSync(join(repo, 'dir'));
      writeFiles(repo, { 'dir/f.txt': 'x\n' });
    });
    await ready(turnUri('t1'));
    rmSync(join(repo, 'dir'), { recursive: true });
    symlinkSync(outside, join(repo, 'dir'));
    const error = await client.requestError('invokeChangesetOperation', {
      channel: turnUri('t1'),
      operationId: 'revert',
      target: { kind: 'resource', resource: fileId('dir/f.txt') },
    });
    expect(error.code).toBe(-32009);
  });

  it('serializes two clients invoking at once; both see one consistent result', async () => {
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': lines(20, { 2: 'x' }), 'b.txt': 'B\n' }));
    const other = await svc.client();
    await ready(turnUri('t1'));
    await ready(turnUri('t1'), other);
    const params = { channel: turnUri('t1'), operationId: 'revert' };
    const [r1, r2] = await Promise.all([
      client.request<{ message: string }>('invokeChangesetOperation', params, { timeoutMs: 20_000 }),
      other.request<{ message: string }>('invokeChangesetOperation', params, { timeoutMs: 20_000 }),
    ]);
    expect(r1.message).toBe('Reverted 2 files');
    expect(r2.message).toBe(r1.message);
    expect([read('a.txt'), read('b.txt')]).toEqual([lines(20), 'b\n']);
    const safety = await svc.service.sessions.list()[0]!.safety.list();
    expect(safety).toHaveLength(1);
  });
});

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
