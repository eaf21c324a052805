/**
 * `changeset-server comment` against a running `serve`: comments written on
 * a file's lines (from the folder or a subfolder) and on a whole turn,
 * listed in words (turn numbers, file names, "lines 5–6", "outdated") and
 * as JSON, resolved, reopened and deleted by number, and refused in words.
 * The commands run in the test's process (test/helpers/cli-in-process.ts), `comment --help` through the binary;
 * run `npm run build` first: `serve` is the built binary.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReviewComment } from '../../protocol/index.js';
import { run as binary, startServe, type ServeProcess } from '../cli/serve-process.js';
import { run } from '../helpers/cli-in-process.js';
import { recordTurn } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { commentsCheck } from './comment-check.js';

const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');

describe('the comment command', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  let harness: TestClient;
  const comment = (args: string[], cwd = workspace) => run(['comment', ...args, '--state-dir', state], { cwd });

  beforeAll(async () => {
    workspace = makeRepo(temp.make(), { 'src/app.ts': lines(20), 'README.md': 'hi\n' });
    state = temp.make();
    serve = await startServe([workspace, '--state-dir', state]);
    harness = await TestClient.connect(serve.ready.url, { token: serve.ready.token!, check: commentsCheck });
    await harness.initialize();
    await recordTurn(
      harness,
      serve.ready.sessions[0]!,
      't1',
      () => writeFiles(workspace, { 'src/app.ts': lines(20, { 5: 'const a = 1;', 6: 'const b = 2;', 12: 'x()' }) }),
      'Tidy',
    );
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
    await serve?.stop();
    temp.cleanup();
  });

  it('adds, lists, resolves, reopens and deletes comments in words and in JSON', async () => {
    expect(await comment(['add', 'src/app.ts:5-6', 'Name these better', '--turn', '1'])).toMatchObject({
      code: 0,
      stdout: 'Comment #1 on src/app.ts lines 5–6 (turn 1).\n',
    });
    // From a subfolder, the path is the file's there; without --turn, the session's changes.
    expect(await comment(['add', 'app.ts:12', 'Why?'], join(workspace, 'src'))).toMatchObject({ code: 0, stdout: 'Comment #2 on src/app.ts line 12.\n' });
    expect(await comment(['add', '--turn', 'last', 'Add a test'])).toMatchObject({ code: 0, stdout: 'Comment #3 on turn 1.\n' });

    const listed = await comment(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      [
        '#1  src/app.ts lines 5–6 (turn 1) — you, open',
        '    Name these better',
        '    │ const a = 1;',
        '    │ const b = 2;',
        '',
        '#2  src/app.ts line 12 — you, open',
        '    Why?',
        '    │ x()',
        '',
        '#3  turn 1 — you, open',
        '    Add a test',
        '',
      ].join('\n'),
    );

    expect(await comment(['resolve', '#1', '--note', 'Renamed them'])).toMatchObject({ code: 0, stdout: 'Resolved #1: src/app.ts lines 5–6 (turn 1).\n' });
    expect((await comment(['list'])).stdout).not.toContain('#1 ');
    expect((await comment(['list', '--all'])).stdout).toContain('#1  src/app.ts lines 5–6 (turn 1) — you, resolved by the reviewer: Renamed them\n');
    expect(await comment(['reopen', '1'])).toMatchObject({ code: 0, stdout: 'Reopened #1: src/app.ts lines 5–6 (turn 1).\n' });
    expect(await comment(['delete', '2'])).toMatchObject({ code: 0, stdout: 'Deleted #2.\n' });

    const json = await comment(['list', '--json']);
    const parsed = JSON.parse(json.stdout) as { session: string; comments: ReviewComment[] };
    expect(parsed.session).toBe(serve.ready.sessions[0]);
    expect(parsed.comments.map((c) => [c.id, c.turn, c.state, c.now])).toEqual([
      ['1', 1, 'open', { path: 'src/app.ts', startLine: 5, endLine: 6 }],
      ['3', 1, 'open', undefined],
    ]);

    // A later turn inserts lines above #1: it moves; rewriting its lines makes it outdated.
    await recordTurn(harness, serve.ready.sessions[0]!, 't2', () =>
      writeFiles(workspace, { 'src/app.ts': `// a\n// b\n${lines(20, { 5: 'const a = 1;', 6: 'const b = 2;', 12: 'x()' })}` }),
    );
    expect((await comment(['list'])).stdout).toContain('#1  src/app.ts lines 7–8 (turn 1), written on lines 5–6 — you, open\n');
    await recordTurn(harness, serve.ready.sessions[0]!, 't3', () => writeFiles(workspace, { 'src/app.ts': lines(20) }));
    expect((await comment(['list'])).stdout).toContain('#1  src/app.ts lines 5–6 (turn 1), outdated — you, open\n');
  }, 60_000);

  it('refuses in words, and its help lists only its own flags', async () => {
    const outside = await comment(['add', 'src/app.ts:40', 'Past the end', '--turn', '1']);
    expect(outside).toMatchObject({ code: 1, stderr: 'changeset-server comment: src/app.ts has 20 lines after turn 1, so line 40 is outside it\n' });
    const notChanged = await comment(['add', 'README.md:1', 'x', '--turn', '1']);
    expect(notChanged).toMatchObject({ code: 1, stderr: 'changeset-server comment: README.md is not among the files turn 1 changed\n' });
    expect(await comment(['resolve', '99'])).toMatchObject({ code: 1, stderr: 'changeset-server comment: the session has no comment #99\n' });
    expect(await comment(['add', '--turn', '7', 'x'])).toMatchObject({ code: 1, stderr: expect.stringContaining('has no turn 7') });
    expect((await comment(['add', 'src/app.ts', 'x'])).code).toBe(2);
    expect((await comment(['delete', 'abc'])).stderr).toContain('"abc" is not a comment number such as 3 or #3');
    expect((await comment(['list', '--dry-run'])).stderr).toContain('unknown option --dry-run');
    const help = await binary(['comment', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--turn N', '--before', '--all', '--note TEXT', '--session']) expect(help.stdout).toContain(flag);
    expect(help.stdout).not.toContain('--dry-run');
  }, 60_000);
});
