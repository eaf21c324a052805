/**
 * Line endings come back as they were: a repository whose index holds LF
 * and whose checkout holds CRLF (`text=auto` with `core.autocrlf=true`,
 * `eol=crlf`) shows no changes for a clean checkout, and operations write
 * CRLF files back with CRLF.
 */
import { readFileSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest } from '../helpers/service.js';
import { git, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
let repo: string;
const SID = 'eol';
const SESSION = `ahp-session:/${SID}`;
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });
const crlf = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i}`}\r\n`).join('');
const bytes = (rel: string) => readFileSync(join(repo, rel));

serviceForEachTest(temp, (_s, c) => (client = c));
beforeEach(async () => {
  repo = temp.make();
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['config', 'core.autocrlf', 'true']);
  writeFiles(repo, {
    '.gitattributes': '* text=auto\n*.cmd eol=crlf\n*.dat binary\n',
    'a.txt': crlf(20),
    'b.md': crlf(10),
    'run.cmd': 'echo one\r\necho two\r\n',
    'blob.dat': Buffer.from('raw\r\n\0bytes\r\n'),
  });
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'initial']);
  // A clean checkout: the index holds LF, the files CRLF.
  for (const f of ['a.txt', 'b.md', 'run.cmd', 'blob.dat']) rmSync(join(repo, f));
  git(repo, ['checkout', '--', '.']);
  expect(git(repo, ['show', 'HEAD:a.txt'])).not.toContain('\r');
  expect(bytes('a.txt').toString()).toBe(crlf(20));
});

async function createSession(): Promise<void> {
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
}

describe('line endings', () => {
  it('shows no uncommitted changes for a clean CRLF checkout of a text=auto repository, also when every file is re-read', async () => {
    // Times the index does not know: the files are read and converted instead of taken from the index.
    const later = new Date(Date.now() + 5_000);
    for (const f of ['a.txt', 'b.md', 'run.cmd']) utimesSync(join(repo, f), later, later);
    await createSession();
    const uncommitted = await subscribeReady(client, changesetUriTemplate(SID, 'uncommitted'));
    expect(uncommitted.status).toBe('ready');
    expect(uncommitted.files).toEqual([]);
    expect(git(repo, ['status', '--porcelain'])).toBe('');
  });

  it('reverts a turn that edited CRLF files back to the exact CRLF bytes, keeping a later edit with CRLF', async () => {
    await createSession();
    const original = { a: bytes('a.txt'), cmd: bytes('run.cmd'), b: bytes('b.md') };
    await recordTurn(client, SESSION, 't1', () =>
      writeFiles(repo, { 'a.txt': crlf(20, { 2: 'by t1' }), 'run.cmd': 'echo one\r\necho changed\r\n', 'b.md': crlf(10, { 1: 'by t1' }) }),
    );
    await recordTurn(client, SESSION, 't2', () => writeFiles(repo, { 'b.md': crlf(10, { 1: 'by t1', 8: 'by t2' }) }));
    const turn = await subscribeReady(client, turnUri('t1'));
    expect(turn.files.map((f) => (f._meta as { path: string }).path).sort()).toEqual(['a.txt', 'b.md', 'run.cmd']);

    const result = await client.request<{ message: string }>(
      'invokeChangesetOperation',
      { channel: turnUri('t1'), operationId: 'revert' },
      { timeoutMs: 20_000 },
    );
    expect(result.message).toBe('Reverted 3 files');
    expect(bytes('a.txt')).toEqual(original.a);
    expect(bytes('run.cmd')).toEqual(original.cmd);
    // Merged with t2's edit: every line still ends in CRLF.
    expect(bytes('b.md').toString()).toBe(crlf(10, { 8: 'by t2' }));
    expect(bytes('b.md')).not.toEqual(original.b);
    expect(git(repo, ['status', '--porcelain'])).toBe('M b.md');
  });

  it('restores a checkpoint with the CRLF bytes the files had', async () => {
    await createSession();
    const original = { a: bytes('a.txt'), cmd: bytes('run.cmd') };
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': crlf(20, { 5: 'by t1' }), 'run.cmd': 'echo changed\r\n' }));
    await subscribeReady(client, turnUri('t1'));
    await client.request('invokeChangesetOperation', { channel: turnUri('t1'), operationId: 'restore-checkpoint' }, { timeoutMs: 20_000 });
    expect(bytes('a.txt')).toEqual(original.a);
    expect(bytes('run.cmd')).toEqual(original.cmd);
    expect(git(repo, ['status', '--porcelain'])).toBe('');
  });
});
