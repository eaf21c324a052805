import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn as record, subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { executeTestHooks } from '../../server/operations/execute.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { until } from '../helpers/wait.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
let repo: string;
/** One server for the file; each test records in a session of its own. */
let sessions = 0;
let SID = '';
let SESSION_CS = '';
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });
const perm = (rel: string) => statSync(join(repo, rel)).mode & 0o777;
const read = (rel: string) => readFileSync(join(repo, rel), 'utf8');

async function start(files: Record<string, string>): Promise<void> {
  repo = makeRepo(temp.make(), files);
  SID = `safety${++sessions}`;
  SESSION_CS = changesetUriTemplate(SID, 'session');
  await client.request('createSession', { channel: `ahp-session:/${SID}`, workingDirectory: pathToFileURL(repo).href });
}

const recordTurn = (turnId: string, edit: () => void) => record(client, `ahp-session:/${SID}`, turnId, edit);

async function invoke(channel: string, operationId: string, target?: unknown): Promise<string> {
  await subscribeReady(client, channel);
  const result = await client.request<{ message: string }>(
    'invokeChangesetOperation',
    { channel, operationId, ...(target ? { target } : {}) },
    { timeoutMs: 30_000 },
  );
  return result.message;
}

function invokeError(channel: string, operationId: string) {
  return client.requestError('invokeChangesetOperation', { channel, operationId }, { timeoutMs: 30_000 });
}

beforeAll(async () => {
  svc = await startTestService();
  client = await svc.client();
});
afterEach(() => {
  delete executeTestHooks.betweenWrites;
});
afterAll(async () => {
  try {
    await svc?.stop();
  } finally {
    temp.cleanup();
  }
});

describe('operations write safely', () => {
  it('keep permission bits 0600, 0640 and 0700 through revert, restore and undo; a recreated file is never wider than before', async () => {
    await start({ 'secret.txt': 'secret\n', 'shared.txt': 'shared\n', 'tool.sh': '#!/bin/sh\n', 'gone.txt': 'private\n' });
    chmodSync(join(repo, 'secret.txt'), 0o600);
    chmodSync(join(repo, 'shared.txt'), 0o640);
    chmodSync(join(repo, 'tool.sh'), 0o700);
    await recordTurn('t1', () => {
      writeFiles(repo, { 'secret.txt': 'SECRET\n', 'shared.txt': 'SHARED\n', 'tool.sh': '#!/bin/sh\necho\n', 'made.txt': 'made by the turn\n' });
      chmodSync(join(repo, 'made.txt'), 0o600);
    });
    const expectModes = () => expect([perm('secret.txt'), perm('shared.txt'), perm('tool.sh')]).toEqual([0o600, 0o640, 0o700]);

    expect(await invoke(turnUri('t1'), 'revert')).toBe('Reverted 4 files');
    expectModes();
    expect(read('secret.txt')).toBe('secret\n');
    expect(existsSync(join(repo, 'made.txt'))).toBe(false);
    // Undo recreates the deleted file with the permissions it had, not the umask's.
    expect(await invoke(SESSION_CS, 'undo')).toMatch(/^Undid the revert of turn 1/);
    expectModes();
    expect(perm('made.txt')).toBe(0o600);
    expect(await invoke(turnUri('t1'), 'restore-checkpoint')).toMatch(/^Restored 4 files/);
    expectModes();
    expect(read('shared.txt')).toBe('shared\n');
  });

  it('handles a 250-byte file name: temporary names stay short, so nothing half-applies', async () => {
    const long = `${'n'.repeat(246)}.txt`;
    await start({ [long]: 'old\n', 'a.txt': 'a\n' });
    await recordTurn('t1', () => writeFiles(repo, { [long]: 'new\n', 'a.txt': 'A\n' }));
    expect(await invoke(turnUri('t1'), 'revert')).toBe('Reverted 2 files');
    expect(read(long)).toBe('old\n');
    expect(await invoke(SESSION_CS, 'undo')).toMatch(/^Undid the revert of turn 1: put back 2 files/);
    expect([read(long), read('a.txt')]).toEqual(['new\n', 'A\n']);
  });

  it('writes nothing outside the workspace when a directory is swapped for a symlink mid-operation', async () => {
    const dirs = Array.from({ length: 20 }, (_, i) => `d${String(i).padStart(2, '0')}`);
    await start(Object.fromEntries(dirs.map((d) => [`${d}/f.txt`, `${d}\n`])));
    await recordTurn('t1', () => {
      for (const d of dirs) rmSync(join(repo, d, 'f.txt'));
    });
    const outside = temp.make('outside-');
    // Once the revert has started writing, the last directory becomes a link to a directory outside before it reaches it.
    let swapped = false;
    executeTestHooks.betweenWrites = async () => {
      if (swapped || !existsSync(join(repo, 'd01', 'f.txt'))) return;
      renameSync(join(repo, 'd19'), join(repo, 'd19.moved'));
      symlinkSync(outside, join(repo, 'd19'));
      swapped = true;
    };
    const error = await invokeError(turnUri('t1'), 'revert');
    expect(swapped).toBe(true);
    expect([-32009, -32010]).toContain(error.code);
    expect(error.message).toContain('d19');
    expect(readdirSync(outside)).toEqual([]);
    // Stopped part-way, it put back what it had written.
    expect(dirs.slice(0, 19).filter((d) => existsSync(join(repo, d, 'f.txt')))).toEqual([]);
  });

  it('reverts a turn that spans 300 directories, more than it holds open at once', async () => {
    const dirs = Array.from({ length: 300 }, (_, i) => `d${String(i).padStart(3, '0')}`);
    await start(Object.fromEntries(dirs.map((d) => [`${d}/f.txt`, `${d}\n`])));
    await recordTurn('t1', () => writeFiles(repo, Object.fromEntries(dirs.map((d) => [`${d}/f.txt`, `${d} changed\n`]))));
    expect(await invoke(turnUri('t1'), 'revert')).toBe('Reverted 300 files');
    expect(dirs.filter((d) => read(`${d}/f.txt`) !== `${d}\n`)).toEqual([]);
  }, 60_000);

  it('stops when a file changes while the operation runs, puts back what it wrote, and leaves undo as it was', async () => {
    await start({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n', 'c.txt': 'C\n' }));
    await subscribeReady(client, SESSION_CS);
    // Saved by the user right after the revert's first write.
    let saved = false;
    executeTestHooks.betweenWrites = async () => {
      if (saved || read('a.txt') !== 'a\n') return;
      writeFileSync(join(repo, 'c.txt'), 'saved by the user\n');
      saved = true;
    };
    const error = await invokeError(turnUri('t1'), 'revert');
    expect(saved).toBe(true);
    expect(error.code).toBe(-32010);
    expect(error.message).toContain('c.txt changed while the operation ran');
    expect(error.message).toContain('put back');
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['A\n', 'B\n', 'saved by the user\n']);
    // Nothing is left to undo: the stopped revert cancelled its own safety checkpoint.
    await until(() => client.state<ChangesetState>(SESSION_CS)!.operations!.find((o) => o.id === 'undo')!.status === 'disabled', 'undo to be disabled');
  });

  it('undo refuses a file edited since the operation wrote it, and writes nothing', async () => {
    await start({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n' }));
    await invoke(turnUri('t1'), 'revert');
    writeFileSync(join(repo, 'b.txt'), 'edited after the revert\n');
    const error = await invokeError(SESSION_CS, 'undo');
    expect(error.code).toBe(-32010);
    expect(error.message).toContain('b.txt (changed since revert wrote it)');
    expect([read('a.txt'), read('b.txt')]).toEqual(['a\n', 'edited after the revert\n']);
  });

  it('removes the directories a reverted turn created once they are empty, and keeps the ones that were there', async () => {
    await start({ 'kept/old.txt': 'old\n' });
    await recordTurn('t1', () => {
      mkdirSync(join(repo, 'new/deep/dir'), { recursive: true });
      writeFiles(repo, { 'new/deep/dir/x.txt': 'x\n', 'kept/added.txt': 'added\n' });
      rmSync(join(repo, 'kept/old.txt'));
    });
    expect(await invoke(turnUri('t1'), 'revert')).toBe('Reverted 3 files');
    expect(existsSync(join(repo, 'new'))).toBe(false);
    expect(readdirSync(join(repo, 'kept'))).toEqual(['old.txt']);
  });

  it('skips, and says why, a file that is no longer a regular file; the rest of the operation goes ahead', async () => {
    await start({ 'a.txt': 'a\n', 'pipe.txt': 'p\n' });
    await recordTurn('t1', () => writeFiles(repo, { 'a.txt': 'A\n', 'pipe.txt': 'P\n' }));
    rmSync(join(repo, 'pipe.txt'));
    spawnSync('mkfifo', [join(repo, 'pipe.txt')]);
    expect(await invoke(turnUri('t1'), 'revert')).toBe(
      'Reverted 1 file; skipped pipe.txt (not a regular file now (a directory, FIFO or device is there): left as it is)',
    );
    expect(read('a.txt')).toBe('a\n');
    expect(statSync(join(repo, 'pipe.txt')).isFIFO()).toBe(true);
    const restored = await invoke(turnUri('t1'), 'restore-checkpoint');
    expect(restored).toContain('skipped pipe.txt');
    expect(statSync(join(repo, 'pipe.txt')).isFIFO()).toBe(true);
  });

  it('with core.fileMode=false, reverts content and leaves an executable bit the repository does not track alone', async () => {
    await start({ 'run.sh': 'echo one\n' });
    git(repo, ['config', 'core.fileMode', 'false']);
    chmodSync(join(repo, 'run.sh'), 0o755);
    await recordTurn('t1', () => writeFiles(repo, { 'run.sh': 'echo two\n' }));
    expect(await invoke(turnUri('t1'), 'revert')).toBe('Reverted 1 file');
    expect(read('run.sh')).toBe('echo one\n');
    expect(perm('run.sh')).toBe(0o755);
  });

  it('restore counts as edits no turn made only files whose content no turn or operation produced', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `f${i}.txt`);
    await start(Object.fromEntries(names.map((n) => [n, `${n} start\n`])));
    await recordTurn('t1', () => writeFiles(repo, Object.fromEntries(names.map((n) => [n, `${n} turn 1\n`]))));
    await recordTurn('t2', () => writeFiles(repo, Object.fromEntries(names.map((n) => [n, `${n} turn 2\n`]))));
    await invoke(turnUri('t2'), 'revert');
    const restored = await invoke(turnUri('t1'), 'restore-checkpoint');
    expect(restored).toBe('Restored 20 files to the start of turn 1');
    await recordTurn('t3', () => writeFiles(repo, { 'f1.txt': 'f1.txt turn 3\n' }));
    writeFileSync(join(repo, 'f3.txt'), 'by hand\n');
    expect(await invoke(turnUri('t1'), 'restore-checkpoint')).toBe(
      'Restored 2 files to the start of turn 1; 1 file had edits no turn made: f3.txt (undo brings them back)',
    );
  });
});
