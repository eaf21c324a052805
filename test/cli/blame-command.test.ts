import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProvenanceResult } from '../../protocol/extensions/provenance.js';
import { authorSentence, rangesInWords, turnsOf, type BlameContext } from '../../server/client/blame-words.js';
import { run } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { protocolWords } from '../helpers/protocol-words.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run as binary, startServe, stopRegistered, type ServeProcess } from './serve-process.js';

/**
 * `changeset-server blame FILE`: who last wrote each line, as a person reads
 * it — the turn (and its step and tool), "you" for an edit no turn made,
 * the commit for what was there before recording — with each turn's prompt
 * once at the end; `--lines` for a part, `--json` for programs, and plain
 * errors for the usual mistakes. The commands run in the test's process
 * (test/helpers/cli-in-process.ts), the one loading modules through the binary.
 */
describe('changeset-server blame', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  let sessionId: string;

  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });

  beforeAll(async () => {
    workspace = makeRepo(temp.make('cs-blame-ws-'), { 'a.txt': 'one\ntwo\nthree\n', 'src/b.txt': 'b\n' });
    state = temp.make('cs-blame-state-');
    serve = await startServe([workspace, '--state-dir', state]);
    const session = serve.ready.sessions[0]!;
    sessionId = session.replace('ahp-session:/', '');
    const harness = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    try {
      await harness.initialize();
      // Turn 1 as an agent's hook records it: one Edit tool call rewrites line 1.
      const { turnId } = await harness.request<{ turnId: string }>(
        'harness/turnStarted',
        { channel: session, message: 'Shout the first line' },
        { timeoutMs: 30_000 },
      );
      await harness.request('harness/beforeEdit', { channel: session, turnId, paths: ['a.txt'], tool: 'Edit' }, { timeoutMs: 30_000 });
      writeFileSync(join(workspace, 'a.txt'), 'ONE\ntwo\nthree\n');
      await harness.request('harness/turnEnded', { channel: session, turnId }, { timeoutMs: 60_000 });
    } finally {
      await harness.close();
    }
    // By hand, between the turns.
    writeFileSync(join(workspace, 'a.txt'), 'ONE\ntwo\nthree by hand\n');
    // Turn 2 from the shell appends a line.
    expect((await cli('turn', 'start', '--message', 'Add a fourth line')).code).toBe(0);
    writeFileSync(join(workspace, 'a.txt'), 'ONE\ntwo\nthree by hand\nfour\n');
    expect((await cli('turn', 'end')).code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await stopRegistered(state);
    temp.cleanup();
  });

  const clean = (text: string) => expect(protocolWords(text, new Set([sessionId])), text).toEqual([]);

  it('prints each line with who wrote it, then each turn with its prompt once', async () => {
    const { code, stdout, stderr } = await cli('blame', 'a.txt');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trimEnd().split('\n');
    expect(lines.slice(0, 4)).toEqual([
      expect.stringMatching(/^turn 1 · step 1 Edit\s+1 │ ONE$/),
      expect.stringMatching(/^before recording · [0-9a-f]{7} \S.* \d{1,2} [A-Z][a-z]{2}( \d{4})?\s+2 │ two$/),
      expect.stringMatching(/^you, between turns 1 and 2\s+3 │ three by hand$/),
      expect.stringMatching(/^turn 2\s+4 │ four$/),
    ]);
    // The author column is one width, so the line numbers line up.
    expect(new Set(lines.slice(0, 4).map((l) => l.indexOf('│'))).size).toBe(1);
    expect(lines[4]).toBe('');
    expect(lines.slice(5)).toEqual([
      expect.stringMatching(/^turn 1: "Shout the first line" \(\d{1,2} [A-Z][a-z]{2}( \d{4})? \d\d:\d\d UTC\)$/),
      expect.stringMatching(/^turn 2: "Add a fourth line" \(/),
    ]);
    clean(stdout);
  }, 60_000);

  it('--lines keeps to the lines asked for, and a file in a subfolder is named from the current folder', async () => {
    const part = await cli('blame', 'a.txt', '--lines', '3-4');
    expect(part.code).toBe(0);
    expect(part.stdout.split('\n').filter((l) => l.includes('│'))).toEqual([
      expect.stringMatching(/^you, between turns 1 and 2\s+3 │ three by hand$/),
      expect.stringMatching(/^turn 2\s+4 │ four$/),
    ]);
    expect(part.stdout).toContain('turn 2: "Add a fourth line"');
    expect(part.stdout).not.toContain('turn 1:');
    const sub = await run(['blame', 'b.txt', '--state-dir', state], { cwd: join(workspace, 'src') });
    expect(sub.code).toBe(0);
    expect(sub.stdout).toMatch(/^before recording · [0-9a-f]{7} .*1 │ b\n$/);
  }, 60_000);

  it('--json gives turn numbers, the session by id and title, and no URIs or turn ids', async () => {
    const { code, stdout } = await cli('blame', 'a.txt', '--json');
    expect(code).toBe(0);
    clean(stdout);
    expect(stdout).not.toMatch(/ahp-|_meta|turnId/);
    const answer = JSON.parse(stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({
      session: { id: sessionId, title: expect.any(String) },
      path: 'a.txt',
      lineCount: 4,
      ranges: [
        { startLine: 1, endLine: 1, by: 'turn 1 · step 1 Edit', author: { kind: 'turn', turn: 1, prompt: 'Shout the first line', step: 1, tool: 'Edit' } },
        { startLine: 2, endLine: 2, author: { kind: 'before-recording', commit: { id: expect.stringMatching(/^[0-9a-f]{40}$/), summary: 'initial' } } },
        { startLine: 3, endLine: 3, by: 'you, between turns 1 and 2', author: { kind: 'user', when: 'between-turns', turn: 1 } },
        { startLine: 4, endLine: 4, by: 'turn 2', author: { kind: 'turn', turn: 2, prompt: 'Add a fourth line' } },
      ],
      turns: [
        { name: 'turn 1', turn: 1, prompt: 'Shout the first line' },
        { name: 'turn 2', turn: 2, prompt: 'Add a fourth line' },
      ],
    });
  }, 60_000);

  it('loads only the client side: no dependency, nothing of the server, about twenty modules of ours', async () => {
    const log = join(temp.make('cs-blame-log-'), 'modules.log');
    const result = await binary(['blame', 'a.txt', '--state-dir', state], {
      cwd: workspace,
      env: { CHANGESET_SERVER_TEST_MODULE_LOG: log },
      nodeArgs: ['--import', join(process.cwd(), 'test', 'cli', 'module-log.mjs')],
    });
    expect(result.code).toBe(0);
    const loaded = readFileSync(log, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith('file:'))
      .map((url) => relative(process.cwd(), fileURLToPath(url)));
    const what = loaded.join(', ');
    expect(
      loaded.filter((m) => m.includes('node_modules')),
      what,
    ).toEqual([]);
    expect(
      loaded.filter((m) =>
        /^dist\/server\/(app|service|store\/(?!state-dir\.js)|transport|connection|session|channels|snapshot|watch|diff|changes|disk|changesets|operations|harness|provenance|mcp)\b/.test(
          m,
        ),
      ),
      what,
    ).toEqual([]);
    expect(loaded.length, what).toBeLessThanOrEqual(22);
  }, 60_000);

  it('says plainly what is wrong: bad --lines, lines past the end, a file outside the folder or not there, no server', async () => {
    const bad = await cli('blame', 'a.txt', '--lines', '4-2');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'changeset-server blame: --lines takes A-B or A with 1 <= A <= B (such as 12-30), not "4-2" (see "changeset-server blame --help")\n',
    );
    const past = await cli('blame', 'a.txt', '--lines', '9');
    expect(past.code).toBe(1);
    expect(past.stderr).toBe('changeset-server blame: a.txt has only 4 lines, so there is no line 9\n');
    const outside = await cli('blame', join(temp.make('cs-blame-elsewhere-'), 'x.txt'));
    expect(outside.code).toBe(1);
    expect(outside.stderr).toMatch(/^changeset-server blame: .*x\.txt is not in a folder ".*" records \(/);
    const missing = await cli('blame', 'nope.txt');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^changeset-server blame: nope\.txt is not in the working tree as ".*" last recorded it\n$/);
    const missingJson = await cli('blame', 'nope.txt', '--json');
    expect(JSON.parse(missingJson.stdout)).toEqual({ error: { code: 'failed', message: expect.stringContaining('nope.txt is not in the working tree') } });
    const nowhere = temp.make('cs-blame-none-');
    const none = await run(['blame', 'a.txt', '--state-dir', temp.make('cs-blame-none-state-')], { cwd: nowhere });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('start one with "changeset-server serve" in the project folder');
    for (const said of [bad, past, outside, missing, missingJson, none]) clean(`${said.stdout}\n${said.stderr}`);
  }, 60_000);
});

/** The words of the authors a small session rarely shows: another session, two at once, put back, during a turn, no commit. */
describe('blame words', () => {
  const own = { channel: 'ahp-session:/01J9ZQ0000000000000000000A', title: 'Fix the login', turnCount: 4 };
  const other = { channel: 'ahp-session:/01J9ZQ0000000000000000000B', title: 'Docs pass', turnCount: 2 };
  const at = '2026-12-02T10:04:00.000Z';
  const turn = (session: string, n: number, extra = {}) => ({
    kind: 'turn' as const,
    session,
    turn: n,
    turnId: `T${n}`,
    at,
    changeset: `ahp-changeset:/x/turn/T${n}`,
    ...extra,
  });
  const result: ProvenanceResult = {
    path: 'src/app.ts',
    lineCount: 7,
    authors: [
      turn(own.channel, 2, { agent: 'Claude Code', prompt: 'Fix the login\nplease', step: 3, tool: 'Bash' }),
      turn(other.channel, 1, { sessionTitle: 'Docs pass', prompt: 'Write docs' }),
      { kind: 'mixed', candidates: [turn(own.channel, 4, { prompt: 'Tidy' }), turn(other.channel, 2, { sessionTitle: 'Docs pass' })] },
      { kind: 'user', when: 'during-turn', turn: 3, session: own.channel },
      { kind: 'user', when: 'between-turns', turn: 4, session: own.channel },
      { kind: 'before-recording', reason: 'not committed' },
    ],
    ranges: [
      { startLine: 1, endLine: 1, author: 0, restored: true },
      { startLine: 2, endLine: 2, author: 1 },
      { startLine: 3, endLine: 3, author: 2 },
      { startLine: 4, endLine: 4, author: 3 },
      { startLine: 5, endLine: 5, author: 4 },
      { startLine: 6, endLine: 7, author: 5 },
    ],
  };
  const person: BlameContext = { session: own, others: [other], user: 'you', year: 2026 };

  it('name the turn, the other session by title, both candidates, the turn a hand edit came during or after, and a line put back', () => {
    expect(rangesInWords(result, person).map((r) => r.by)).toEqual([
      'turn 2 · Claude Code · step 3 Bash · put back',
      'turn 1 of "Docs pass"',
      'mixed: turn 4 of this session, turn 2 of "Docs pass"',
      'you, during turn 3',
      'you, after turn 4',
      'before recording · not committed',
    ]);
    expect(turnsOf(result, person).map((t) => [t.name, t.prompt])).toEqual([
      ['turn 2', 'Fix the login\nplease'],
      ['turn 4', 'Tidy'],
      ['turn 1 of "Docs pass"', 'Write docs'],
      ['turn 2 of "Docs pass"', undefined],
    ]);
    const json = JSON.stringify(rangesInWords(result, person));
    expect(json).not.toMatch(/ahp-|turnId|"T\d"/);
    expect(json).toContain('"session":"01J9ZQ0000000000000000000B"');
  });

  it('tell an agent "the user" and say a line two sessions wrote cannot be told apart', () => {
    const agent: BlameContext = { ...person, user: 'the user' };
    expect(result.authors.map((a) => authorSentence(a, agent))).toEqual([
      'turn 2 ("Fix the login please"), by Claude Code, in step 3 (Bash), 2 Dec 10:04 UTC',
      'turn 1 of "Docs pass" ("Write docs"), 2 Dec 10:04 UTC',
      'one of turn 4 or turn 2 of "Docs pass": several sessions changed the file at once and the record cannot tell which',
      'the user, by hand during turn 3 (no turn made this edit)',
      'the user, by hand after turn 4 (no turn made this edit)',
      'already there before recording began (not committed)',
    ]);
    for (const a of result.authors) expect(protocolWords(authorSentence(a, agent))).toEqual([]);
  });
});
