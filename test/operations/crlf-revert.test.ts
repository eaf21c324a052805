/**
 * A checkout with CRLF line ends (`core.autocrlf=true`, the index holding
 * LF) into which a turn or the user wrote LF lines: git stores both as the
 * same LF blob, so reverting, discarding and restoring compare and merge
 * what git stores and write what `git checkout` writes, byte for byte.
 */
import { readFileSync, rmSync } from 'node:fs';
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
const SID = 'crlf';
const SESSION = `ahp-session:/${SID}`;
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });
const bytes = (rel: string) => readFileSync(join(repo, rel));
const FILES = ['a.txt', 'b.txt', 'c.md', 'd.js'];

serviceForEachTest(temp, (_s, c) => (client = c));

/** What `git checkout` writes for each file at HEAD, read from a fresh checkout of the same repository. */
function checkoutBytes(): Map<string, Buffer> {
  for (const f of FILES) rmSync(join(repo, f));
  git(repo, ['checkout', '--', '.']);
  return new Map(FILES.map((f) => [f, bytes(f)]));
}

beforeEach(async () => {
  repo = temp.make();
  git(repo, ['init', '-q', '-b', 'main']);
  writeFiles(repo, Object.fromEntries(FILES.map((f) => [f, 'a\nb\nc\n'])));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'initial']);
  // A clone made with core.autocrlf=true: LF in the repository, CRLF on disk.
  git(repo, ['config', 'core.autocrlf', 'true']);
  checkoutBytes();
  expect(bytes('a.txt').toString()).toBe('a\r\nb\r\nc\r\n');
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
});

function invoke(channel: string, operationId: string, target?: unknown) {
  return client.request<{ message: string }>('invokeChangesetOperation', { channel, operationId, ...(target ? { target } : {}) }, { timeoutMs: 20_000 });
}

describe('LF lines written into a CRLF checkout', () => {
  it('reverts a turn that appended an LF line to a CRLF file to what git checkout writes', async () => {
    const expected = checkoutBytes();
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': Buffer.concat([bytes('a.txt'), Buffer.from('d\n')]) }));
    expect(bytes('a.txt').toString()).toBe('a\r\nb\r\nc\r\nd\n');
    await subscribeReady(client, turnUri('t1'));
    expect((await invoke(turnUri('t1'), 'revert')).message).toBe('Reverted 1 file');
    expect(bytes('a.txt')).toEqual(expected.get('a.txt'));
    expect(git(repo, ['status', '--porcelain'])).toBe('');
  });

  it('reverts a turn that rewrote four CRLF files with LF, keeping a later LF edit merged and written with CRLF', async () => {
    const expected = checkoutBytes();
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, Object.fromEntries(FILES.map((f) => [f, 'a\nb changed\nc\n']))));
    // The user saves one of them again, with LF, adding a line far from the turn's edit.
    writeFiles(repo, { 'd.js': 'a\nb changed\nc\nuser line\n' });
    await subscribeReady(client, turnUri('t1'));
    expect((await invoke(turnUri('t1'), 'revert')).message).toBe('Reverted 4 files');
    for (const f of ['a.txt', 'b.txt', 'c.md']) expect(bytes(f)).toEqual(expected.get(f));
    // What git checkout writes for the merged content: every line with CRLF.
    expect(bytes('d.js').toString()).toBe('a\r\nb\r\nc\r\nuser line\r\n');
    expect(git(repo, ['status', '--porcelain'])).toBe('M d.js');
  });

  it('discards an uncommitted file the user saved with LF back to what git checkout writes', async () => {
    const expected = checkoutBytes();
    writeFiles(repo, { 'b.txt': 'a\nb\nc\nd\n' });
    const uncommitted = changesetUriTemplate(SID, 'uncommitted');
    const state = await subscribeReady(client, uncommitted);
    expect(state.files).toHaveLength(1);
    const target = { kind: 'resource', resource: pathToFileURL(join(repo, 'b.txt')).href };
    expect((await invoke(uncommitted, 'discard', target)).message).toBe('Discarded changes to 1 file');
    expect(bytes('b.txt')).toEqual(expected.get('b.txt'));
    expect(git(repo, ['status', '--porcelain'])).toBe('');
  });

  it('restores a checkpoint over a file a turn rewrote with LF to what git checkout writes', async () => {
    const expected = checkoutBytes();
    await recordTurn(client, SESSION, 't1', () => writeFiles(repo, { 'a.txt': 'a\nb\nc\nd\n' }));
    await subscribeReady(client, turnUri('t1'));
    await invoke(turnUri('t1'), 'restore-checkpoint');
    expect(bytes('a.txt')).toEqual(expected.get('a.txt'));
    expect(git(repo, ['status', '--porcelain'])).toBe('');
  });
});
