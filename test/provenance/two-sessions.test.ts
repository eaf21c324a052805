/**
 * Two agents in one folder: two sessions of one server recording the same
 * directory at once (two Claude Code windows), their turns driven through
 * the harness methods over a real WebSocket with `beforeEdit` naming the
 * files each tool call writes (or none, for a shell command).
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { LineAuthor, ProvenanceResult, StatusResult, TurnAuthor } from '../../protocol/index.js';
import type { AlsoChangedBy } from '../../protocol/extensions/timeline.js';
import { formatStatus } from '../../server/cli/status-command.js';
import { ChangesetService } from '../../server/service.js';
import { TestClient } from '../helpers/client.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';

useMemoryTempDir();

const A = 'ahp-session:/window-a';
const B = 'ahp-session:/window-b';

const temp = new TempDirs();
let service: ChangesetService | undefined;
let client: TestClient | undefined;
let stateDir: string;

afterEach(async () => {
  await client?.close();
  await service?.stop();
  client = service = undefined;
  rmSync(stateDir, { recursive: true, force: true });
  temp.cleanup();
});

/** A server over `stateDir` with both windows' sessions open over `repo`, and a client of it. */
async function start(repo: string): Promise<TestClient> {
  service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const { url } = await service.start();
  client = await TestClient.connect(url);
  await client.initialize();
  for (const channel of [A, B]) {
    await client.request('createSession', { channel, workingDirectory: pathToFileURL(repo).href, provider: 'claude-code' });
  }
  return client;
}

function folder(): string {
  stateDir = mkdtempSync(join(tmpdir(), 'changeset-two-sessions-'));
  return makeRepo(temp.make('cs-two-sessions-'), {
    'a.txt': 'a one\na two\n',
    'b.txt': 'b one\nb two\n',
    'shared.txt': 'shared one\nshared two\n',
  });
}

/** One turn's calls, run in the order the test interleaves them. A shell step names a file it leaves alone: the hooks cannot say what a shell command writes. */
function turnOf(c: TestClient, channel: string, turnId: string) {
  return {
    start: (message: string) => c.request('harness/turnStarted', { channel, turnId, message }),
    tool: (tool: string, paths: string[]) => c.request('harness/beforeEdit', { channel, turnId, paths, tool }),
    end: () => c.request('harness/turnEnded', { channel, turnId }, { timeoutMs: 60_000 }),
  };
}

function blame(c: TestClient, session: string, path: string): Promise<ProvenanceResult> {
  return c.request<ProvenanceResult>('provenance/lines', { session, path });
}

/** Each line's author in words: "window-b turn 1 step 1 (Edit)", "mixed: window-a turn 1 | window-b turn 1", "before recording". */
function perLine(result: ProvenanceResult): string[] {
  const out: string[] = [];
  for (const r of result.ranges) for (let line = r.startLine; line <= r.endLine; line++) out.push(words(result.authors[r.author]!));
  return out;
}

function words(a: LineAuthor): string {
  const turn = (t: TurnAuthor) => `${t.session.replace('ahp-session:/', '')} turn ${t.turn}${t.step !== undefined ? ` step ${t.step} (${t.tool})` : ''}`;
  switch (a.kind) {
    case 'turn':
      return turn(a);
    case 'mixed':
      // Which step of the other turn may have written it depends on what each record saw when: the turns are what counts.
      return `mixed: ${a.candidates
        .map((t) => `${t.session.replace('ahp-session:/', '')} turn ${t.turn}`)
        .sort()
        .join(' | ')}`;
    case 'user':
      return `you (${a.when})`;
    case 'before-recording':
      return 'before recording';
  }
}

async function status(c: TestClient): Promise<StatusResult> {
  return c.request<StatusResult>('harness/status', {});
}

/** Each session's turns and what they say of the other session: "window-a 1: window-b turn 1: shared.txt". */
function mentions(s: StatusResult): string[] {
  const out: string[] = [];
  for (const session of s.sessions) {
    for (const t of session.turns) {
      for (const a of (t.alsoChangedBy ?? []) as AlsoChangedBy[]) {
        out.push(`${session.channel.replace('ahp-session:/', '')} ${t.index}: ${a.session.replace('ahp-session:/', '')} turn ${a.turn}: ${a.paths.join(', ')}`);
      }
    }
  }
  return out.sort();
}

async function mentionsOnce(c: TestClient, count: number): Promise<string[]> {
  let last: string[] = [];
  const deadline = Date.now() + 20_000;
  while ((last = mentions(await status(c))).length < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} mentions, have ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return last;
}

describe('two sessions recording one folder', () => {
  it('gives each file’s lines to the session whose tool call named it when they edit different files at the same time', async () => {
    const repo = folder();
    const c = await start(repo);
    const a = turnOf(c, A, 'a1');
    const b = turnOf(c, B, 'b1');
    await a.start('add to a.txt');
    await b.start('add to b.txt');
    await a.tool('Edit', ['a.txt']);
    appendFileSync(join(repo, 'a.txt'), 'a three\n');
    await b.tool('Edit', ['b.txt']);
    appendFileSync(join(repo, 'b.txt'), 'b three\n');
    await a.end();
    await b.end();

    // Each session's record shows both files changed in its turn; the hooks say who wrote which.
    for (const session of [A, B]) {
      expect(perLine(await blame(c, session, 'a.txt'))).toEqual(['before recording', 'before recording', 'window-a turn 1 step 1 (Edit)']);
      expect(perLine(await blame(c, session, 'b.txt'))).toEqual(['before recording', 'before recording', 'window-b turn 1 step 1 (Edit)']);
    }
    // Each turn's changes hold a file the other session wrote, and say so.
    expect(await mentionsOnce(c, 2)).toEqual(['window-a 1: window-b turn 1: b.txt', 'window-b 1: window-a turn 1: a.txt']);
  });

  it('marks lines both sessions may have written as mixed, and both turns say so, also after a restart', async () => {
    const repo = folder();
    let c = await start(repo);
    const a = turnOf(c, A, 'a1');
    const b = turnOf(c, B, 'b1');
    await a.start('tidy up');
    await b.start('fix the build');
    await a.tool('Bash', ['a.txt']);
    appendFileSync(join(repo, 'shared.txt'), 'from a shell in window a\n');
    await b.tool('Bash', ['b.txt']);
    appendFileSync(join(repo, 'shared.txt'), 'from a shell in window b\n');
    await a.end();
    // While b's turn runs, its shell command is not known to have written the file: a's turn did.
    expect(perLine(await blame(c, A, 'shared.txt'))).toEqual([
      'before recording',
      'before recording',
      'window-a turn 1 step 1 (Bash)',
      'window-a turn 1 step 1 (Bash)',
    ]);
    await b.end();

    const both = 'mixed: window-a turn 1 | window-b turn 1';
    for (const session of [A, B]) {
      expect(perLine(await blame(c, session, 'shared.txt'))).toEqual(['before recording', 'before recording', both, both]);
    }
    const said = ['window-a 1: window-b turn 1: shared.txt', 'window-b 1: window-a turn 1: shared.txt'];
    expect(await mentionsOnce(c, 2)).toEqual(said);
    // `changeset-server status` prints it under each turn, in the other session's title and turn number.
    const text = formatStatus(await status(c));
    expect(text).toContain('#1 complete  1 file +2 -0 "tidy up"\n      also changed by “Claude Code — fix the build” (turn 1): shared.txt\n');
    expect(text).toContain('#1 complete  1 file +2 -0 "fix the build"\n      also changed by “Claude Code — tidy up” (turn 1): shared.txt\n');

    // After a restart both records are read again, and say the same.
    await c.close();
    await service!.stop();
    service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
    const { url } = await service.start();
    await service.openHistory([repo]);
    client = c = await TestClient.connect(url);
    await c.initialize();
    expect(await mentionsOnce(c, 2)).toEqual(said);
    expect(perLine(await blame(c, A, 'shared.txt'))).toEqual(['before recording', 'before recording', both, both]);
  });

  it('says nothing of turns that did not run at the same time', async () => {
    const repo = folder();
    const c = await start(repo);
    const a1 = turnOf(c, A, 'a1');
    const b1 = turnOf(c, B, 'b1');
    await a1.start('first in a');
    await a1.tool('Bash', ['a.txt']);
    appendFileSync(join(repo, 'shared.txt'), 'window a, turn 1\n');
    await a1.end();
    await b1.start('first in b');
    await b1.tool('Bash', ['b.txt']);
    appendFileSync(join(repo, 'shared.txt'), 'window b, turn 1\n');
    await b1.end();
    // Then two turns that do overlap: once theirs are said, the first two have been looked at too.
    const a2 = turnOf(c, A, 'a2');
    const b2 = turnOf(c, B, 'b2');
    await a2.start('second in a');
    await b2.start('second in b');
    await a2.tool('Bash', ['a.txt']);
    appendFileSync(join(repo, 'shared.txt'), 'window a, turn 2\n');
    await b2.tool('Bash', ['b.txt']);
    await a2.end();
    await b2.end();

    expect(await mentionsOnce(c, 2)).toEqual(['window-a 2: window-b turn 2: shared.txt', 'window-b 2: window-a turn 2: shared.txt']);
    // Window a's record saw b's first turn between its own turns: the line goes to that turn, not to the user.
    expect(perLine(await blame(c, A, 'shared.txt'))).toEqual([
      'before recording',
      'before recording',
      'window-a turn 1 step 1 (Bash)',
      // Its record cannot tell whether before b's first step or during it: the turn.
      'window-b turn 1',
      'mixed: window-a turn 2 | window-b turn 2',
    ]);
  });
});
