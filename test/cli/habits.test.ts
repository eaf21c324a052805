import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run as binary, startServe, stopRegistered, type ServeProcess } from './serve-process.js';

/**
 * One server and session for the file: the history test only reads them, and runs first. The commands run in the test's
 * process (test/helpers/cli-in-process.ts), one through the binary.
 */
describe('redo and history on the command line', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  let client: TestClient | undefined;
  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });
  const read = (rel: string) => readFileSync(join(workspace, rel), 'utf8');

  beforeAll(async () => {
    workspace = makeRepo(temp.make(), { 'a.txt': 'one\n', 'b.txt': 'b\n' });
    state = temp.make();
    serve = await startServe([workspace, '--state-dir', state]);
    client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    await client.initialize();
    // Turn 1 edits a.txt in one tool call; turn 2 adds a line to it without steps.
    const session = serve.ready.sessions[0]!;
    await client.request('harness/turnStarted', { channel: session, turnId: 't1', message: 'first' });
    await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: ['a.txt'], tool: 'Edit' });
    writeFileSync(join(workspace, 'a.txt'), 'one\ntwo\n');
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 60_000 });
    await client.request('harness/turnStarted', { channel: session, turnId: 't2', message: 'second' });
    writeFileSync(join(workspace, 'a.txt'), 'one\ntwo\nthree\n');
    await client.request('harness/turnEnded', { channel: session, turnId: 't2' }, { timeoutMs: 60_000 });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await serve.stop('SIGKILL');
    await stopRegistered(state);
    temp.cleanup();
  });

  it('history lists every turn and step that changed a file, in words and as JSON', async () => {
    const text = await binary(['history', 'a.txt', '--state-dir', state], { cwd: workspace });
    expect(text.code).toBe(0);
    const [head, first, second] = text.stdout.trimEnd().split('\n');
    expect(head).toBe('a.txt: 2 changes, oldest first');
    expect(first).toMatch(/^ {2}turn 1, step 1 \(Edit\) +\d{4}-\d\d-\d\d \d\d:\d\d UTC {2}modified +\+1 -0$/);
    expect(second).toMatch(/^ {2}turn 2 +\d{4}-\d\d-\d\d \d\d:\d\d UTC {2}modified +\+1 -0$/);

    const json = JSON.parse((await cli('history', 'a.txt', '--json')).stdout) as { path: string; entries: Record<string, unknown>[] };
    expect(json.path).toBe('a.txt');
    expect(json.entries.map((e) => [e['turn'], e['step'], e['tool'], e['kind'], e['added'], e['removed']])).toEqual([
      [1, 1, 'Edit', 'modified', 1, 0],
      [2, undefined, undefined, 'modified', 1, 0],
    ]);
    expect(json.entries[1]!['beforeOid']).toBe(json.entries[0]!['afterOid']);
    expect(Object.keys(json.entries[0]!)).not.toContain('changeset');

    expect((await cli('history', 'b.txt')).stdout).toBe('b.txt: no turn changed it\n');
    const missing = await cli('history');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('history needs a FILE');
  });

  it('redo takes back the last undo, dry run first, and says plainly when there is nothing to redo', async () => {
    const nothing = await cli('redo');
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('Nothing to redo');

    expect((await cli('revert', '--turn', '2')).code).toBe(0);
    expect(read('a.txt')).toBe('one\ntwo\n');
    expect((await cli('undo')).code).toBe(0);
    expect(read('a.txt')).toBe('one\ntwo\nthree\n');

    const dry = await cli('redo', '--dry-run');
    expect(dry).toMatchObject({ code: 0, stdout: 'Dry run, nothing written: redo would change 1 file:\n  write  a.txt\n' });
    expect(read('a.txt')).toBe('one\ntwo\nthree\n');
    const done = await cli('redo');
    expect(done).toMatchObject({ code: 0, stdout: 'Redid: Reverted turn 2: a.txt\n  a.txt\n' });
    expect(read('a.txt')).toBe('one\ntwo\n');
    const json = JSON.parse((await cli('undo', '--json')).stdout) as { operation: string };
    expect(json.operation).toBe('undo');
    const redone = JSON.parse((await cli('redo', '--json')).stdout) as { operation: string; files: string[]; message: string };
    expect(redone).toMatchObject({ operation: 'redo', files: ['a.txt'], message: 'Redid the revert of turn 2: put back 1 file' });

    // A new operation after an undo leaves nothing to redo.
    expect((await cli('undo')).code).toBe(0);
    expect((await cli('revert', '--turn', '2')).code).toBe(0);
    const after = await cli('redo');
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('Nothing to redo');
    expect((await cli('redo', '--help')).stdout).toContain('Usage: changeset-server redo');
  }, 180_000);
});
