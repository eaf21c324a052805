import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { LineAuthor, ProvenanceResult } from '../../protocol/index.js';
import { forgetLineProvenance } from '../../server/provenance/line-provenance.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
let svc: TestService;
serviceForEachTest(temp, (s, c) => {
  svc = s;
  client = c;
});

const SESSION = 'ahp-session:/provenance';

const blame = (params: Record<string, unknown>) => client.request<ProvenanceResult>('provenance/lines', { session: SESSION, ...params });

/** Each line's author in words: `turn 1 step 2 (Edit)`, `user between-turns after 1`, `before-recording <summary>`. */
function perLine(result: ProvenanceResult): string[] {
  const out: string[] = [];
  for (const r of result.ranges) {
    const who = words(result.authors[r.author]!) + (r.restored ? ' (restored)' : '');
    for (let line = r.startLine; line <= r.endLine; line++) out.push(who);
  }
  return out;
}

function words(a: LineAuthor): string {
  switch (a.kind) {
    case 'turn':
      return `turn ${a.turn}${a.step !== undefined ? ` step ${a.step}` : ''}${a.tool ? ` (${a.tool})` : ''}`;
    case 'user':
      return `user ${a.when}${a.turn !== undefined ? ` ${a.turn}` : ''}`;
    case 'before-recording':
      return `before-recording ${a.commit ? a.commit.summary : (a.reason ?? '')}`;
    case 'mixed':
      return 'mixed';
  }
}

async function turn(id: string, message: string, steps: [tool: string, paths: string[], edit: () => void][], edit?: () => void): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId: id, message });
  edit?.();
  for (const [tool, paths, run] of steps) {
    await client.request('harness/beforeEdit', { channel: SESSION, turnId: id, paths, tool });
    run();
  }
  await client.request('harness/turnEnded', { channel: SESSION, turnId: id }, { timeoutMs: 60_000 });
}

describe('provenance/lines', () => {
  it('names the turn and step, the user between and during turns, and the commit before recording, line by line', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await turn('t1', 'grow a.txt', [
      ['Edit', ['a.txt'], () => writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\nfour\n' })],
      // The user edits a.txt while the agent's Write names b.txt only.
      ['Write', ['b.txt'], () => writeFiles(repo, { 'b.txt': 'bb\n', 'a.txt': 'zero\none\ntwo\nthree\nfour\n' })],
    ]);
    writeFiles(repo, { 'a.txt': 'zero\none\nTWO\nthree\nfour\n' });
    // Asked once here, the answer is kept and extended by the next turn's versions.
    expect(perLine(await blame({ path: 'a.txt', changeset: 'ahp-changeset:/provenance/turn/t1' }))).toHaveLength(5);
    await turn('t2', 'shell', [['Bash', ['b.txt'], () => writeFiles(repo, { 'a.txt': 'zero\none\nTWO\nthree\nfour\nfive\n' })]]);

    const answer = await blame({ path: 'a.txt' });
    expect(answer.path).toBe('a.txt');
    expect(answer.lineCount).toBe(6);
    expect(perLine(answer)).toEqual([
      'user during-turn 1',
      'before-recording initial',
      'user between-turns 1',
      'before-recording initial',
      'turn 1 step 1 (Edit)',
      'turn 2 step 1 (Bash)',
    ]);
    // The same as walking the whole record again.
    forgetLineProvenance(svc.service.sessions.require(SESSION));
    expect(await blame({ path: 'a.txt' })).toEqual(answer);
    const turnAuthor = answer.authors.find((a) => a.kind === 'turn' && a.step === 1 && a.turn === 1);
    expect(turnAuthor).toMatchObject({ kind: 'turn', turnId: 't1', prompt: 'grow a.txt', tool: 'Edit', changeset: 'ahp-changeset:/provenance/step/t1/1' });
    const before = answer.authors.find((a) => a.kind === 'before-recording');
    expect(before).toMatchObject({ commit: { summary: 'initial', author: expect.any(String) } });

    // A range of lines; lines past the end are clamped.
    const some = await blame({ path: join(repo, 'a.txt'), startLine: 3, endLine: 99 });
    expect(some.lineCount).toBe(6);
    expect(some.ranges[0]!.startLine).toBe(3);
    expect(some.ranges.at(-1)!.endLine).toBe(6);
    expect(perLine(some)).toEqual(perLine(answer).slice(2));

    // A turn's before side.
    const atStart = await blame({ path: 'a.txt', changeset: 'ahp-changeset:/provenance/turn/t2', side: 'before' });
    expect(perLine(atStart)).toEqual([
      'user during-turn 1',
      'before-recording initial',
      'user between-turns 1',
      'before-recording initial',
      'turn 1 step 1 (Edit)',
    ]);

    // An edit after the last turn is the user's.
    writeFileSync(join(repo, 'a.txt'), 'zero\none\nTWO\nthree\nfour\nfive\nsix\n');
    expect(perLine(await blame({ path: 'a.txt' })).at(-1)).toBe('user between-turns 2');
  });

  it('refuses bad params and paths outside the working directories', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    expect((await client.requestError('provenance/lines', { session: SESSION })).message).toMatch(/params.path must be a non-empty string/);
    expect((await client.requestError('provenance/lines', { session: SESSION, path: 'a.txt', startLine: 0 })).message).toMatch(/params.startLine/);
    expect((await client.requestError('provenance/lines', { session: SESSION, path: 'a.txt', startLine: 3, endLine: 2 })).message).toMatch(/params.endLine/);
    const outside = await client.requestError('provenance/lines', { session: SESSION, path: '/etc/passwd' });
    expect(outside.code).toBe(-32602);
    expect(outside.message).toMatch(/outside the session's working directories/);
    expect((await client.requestError('provenance/lines', { session: 'ahp-session:/nope', path: 'a.txt' })).code).toBe(-32001);
  });
});
