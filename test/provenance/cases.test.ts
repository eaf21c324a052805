/**
 * `provenance/lines` on the files that are not plain text lines: line ends
 * in CRLF, no final newline, an empty file, a binary file, a deleted one, a
 * renamed one; and the lines asked for, clamped to the file.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { LineAuthor, ProvenanceResult } from '../../protocol/index.js';
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

const SESSION = 'ahp-session:/cases';
const blame = (path: string, extra: Record<string, unknown> = {}) => client.request<ProvenanceResult>('provenance/lines', { session: SESSION, path, ...extra });

function perLine(result: ProvenanceResult): string[] {
  const out: string[] = [];
  for (const r of result.ranges) for (let l = r.startLine; l <= r.endLine; l++) out.push(words(result.authors[r.author]!));
  return out;
}

function words(a: LineAuthor): string {
  if (a.kind === 'turn') return `turn ${a.turn}`;
  if (a.kind === 'user') return `user ${a.when}`;
  if (a.kind === 'before-recording') return a.commit ? 'before-recording' : `before-recording (${a.reason})`;
  return 'mixed';
}

async function oneTurn(id: string, edit: () => void): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId: id, message: id });
  edit();
  await client.request('harness/turnEnded', { channel: SESSION, turnId: id }, { timeoutMs: 60_000 });
}

describe('provenance/lines on special files', () => {
  it('handles CRLF, a last line without newline, empty, binary, deleted and renamed files, and clamps the lines asked for', async () => {
    const repo = makeRepo(temp.make(), {
      'crlf.txt': 'one\r\ntwo\r\n',
      'open.txt': 'one\ntwo',
      'empty.txt': '',
      'gone.txt': 'gone\n',
      'old-name.txt': 'kept\nlines\n',
      'pic.bin': new Uint8Array([0, 1, 2, 3, 0, 5]),
    });
    writeFiles(repo, { 'untracked.txt': 'not committed\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await oneTurn('t1', () => {
      writeFileSync(join(repo, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
      // The agent adds a line after a last line without newline: that line gains one, and is the agent's too (as git blame says).
      writeFileSync(join(repo, 'open.txt'), 'one\ntwo\nthree');
      writeFileSync(join(repo, 'pic.bin'), new Uint8Array([0, 9, 9, 9]));
      rmSync(join(repo, 'gone.txt'));
      renameSync(join(repo, 'old-name.txt'), join(repo, 'new-name.txt'));
    });

    expect(perLine(await blame('crlf.txt'))).toEqual(['before-recording', 'before-recording', 'turn 1']);
    expect(perLine(await blame('open.txt'))).toEqual(['before-recording', 'turn 1', 'turn 1']);
    expect(await blame('empty.txt')).toEqual({ path: 'empty.txt', lineCount: 0, ranges: [], authors: [] });
    expect(await blame('pic.bin')).toEqual({ path: 'pic.bin', lineCount: 0, ranges: [], authors: [], binary: true });
    expect(await blame('gone.txt')).toEqual({ path: 'gone.txt', lineCount: 0, ranges: [], authors: [], missing: true });
    // A file the record never saw is missing too.
    expect((await blame('never.txt')).missing).toBe(true);
    // Renames are not followed: the renamed file's lines are the turn's that renamed it.
    expect(perLine(await blame('new-name.txt'))).toEqual(['turn 1', 'turn 1']);
    // A file present but never committed when recording began.
    expect(perLine(await blame('untracked.txt'))).toEqual(['before-recording (not committed)']);

    // Before the turn, the file as it was.
    const before = await blame('gone.txt', { changeset: 'ahp-changeset:/cases/turn/t1', side: 'before' });
    expect(perLine(before)).toEqual(['before-recording']);

    // Lines asked for are clamped to the file; past its end, none.
    const crlf = await blame('crlf.txt', { startLine: 2, endLine: 10 });
    expect(crlf.lineCount).toBe(3);
    expect(crlf.ranges).toEqual([
      { startLine: 2, endLine: 2, author: 0 },
      { startLine: 3, endLine: 3, author: 1 },
    ]);
    expect(crlf.authors.map((a) => a.kind)).toEqual(['before-recording', 'turn']);
    const past = await blame('crlf.txt', { startLine: 5 });
    expect(past).toMatchObject({ lineCount: 3, ranges: [], authors: [] });

    // A changeset of another session, or a turn the session does not have, is refused in words.
    expect((await client.requestError('provenance/lines', { session: SESSION, path: 'a.txt', changeset: 'ahp-changeset:/other/turn/t1' })).message).toMatch(
      /not a changeset of session/,
    );
    expect(
      (await client.requestError('provenance/lines', { session: SESSION, path: 'crlf.txt', changeset: 'ahp-changeset:/cases/turn/nope' })).message,
    ).toMatch(/no turn "nope"/);
  });
});
