/**
 * The oracle: a scripted session over a real server — agent turns with
 * steps, a hand edit between turns, a hand edit during a turn in a file
 * the step did not name, a shell-command edit, a revert and an undo — then
 * the same versions of the file replayed in a git repository with real git
 * (one commit per version, its author the attribution in words; the
 * versions an operation wrote are merges whose second parent is the
 * version whose lines it put back) and `git blame --porcelain` compared
 * with `provenance/lines` line by line. Lines before recording are the
 * workspace repository's own commits, which the replay starts from.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { LineAuthor, ProvenanceResult } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest } from '../helpers/service.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_svc, c) => {
  client = c;
});

const SID = 'oracle';
const SESSION = `ahp-session:/${SID}`;

/** One version of the file as the script made it, and who made it (in the engine's words). */
interface ScriptedVersion {
  content: string;
  author: string;
  /** A version an operation wrote: the label of the version whose lines it puts back when none before it is identical. */
  restoresFrom?: string;
  label?: string;
}

/** The engine's author of a line, in the oracle's words. */
function words(a: LineAuthor): string {
  switch (a.kind) {
    case 'turn':
      return `turn ${a.turn}${a.step !== undefined ? ` step ${a.step}` : ''}${a.tool ? ` (${a.tool})` : ''}`;
    case 'user':
      return `user ${a.when}${a.turn !== undefined ? ` ${a.turn}` : ''}`;
    case 'before-recording':
      return a.commit ? `commit ${a.commit.oid}` : `before-recording (${a.reason})`;
    case 'mixed':
      return 'mixed';
  }
}

function engineLines(result: ProvenanceResult): { who: string; restored: boolean }[] {
  const out: { who: string; restored: boolean }[] = [];
  for (const r of result.ranges)
    for (let l = r.startLine; l <= r.endLine; l++) out.push({ who: words(result.authors[r.author]!), restored: r.restored === true });
  return out;
}

/** Runs git with the author of the commit it makes. */
function gitAs(cwd: string, author: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: author,
      GIT_AUTHOR_EMAIL: 'oracle@example.com',
      GIT_COMMITTER_NAME: 'oracle',
      GIT_COMMITTER_EMAIL: 'oracle@example.com',
    },
  }).trim();
}

/** `git blame --porcelain` of a commit's file: the commit of each line. */
function blameCommits(cwd: string, commit: string, path: string, firstParent = false): string[] {
  const out = git(cwd, ['blame', '--porcelain', ...(firstParent ? ['--first-parent'] : []), commit, '--', path]);
  const lines: string[] = [];
  for (const line of out.split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
    if (header) lines[Number(header[2]) - 1] = header[1]!;
  }
  return lines;
}

/**
 * Replays the versions in a clone of the workspace repository, one commit
 * each, and blames the last: each line's expected author, and whether an
 * operation put it back.
 */
function oracle(workspace: string, path: string, versions: readonly ScriptedVersion[]): { who: string; restored: boolean }[] {
  const dir = temp.make('cs-oracle-');
  git(dir, ['clone', '-q', workspace, '.']);
  const original = new Set(git(dir, ['rev-list', 'HEAD']).split('\n'));
  const commits: string[] = [];
  const authorOf = new Map<string, string>();
  const operations = new Set<string>();
  const labels = new Map<string, number>();
  let previous = readFileSync(join(dir, path), 'utf8');
  for (const [i, v] of versions.entries()) {
    if (v.label) labels.set(v.label, i);
    if (v.content === previous) {
      commits.push(commits.at(-1) ?? git(dir, ['rev-parse', 'HEAD']));
      continue;
    }
    writeFileSync(join(dir, path), v.content);
    git(dir, ['add', path]);
    if (v.restoresFrom === undefined) {
      gitAs(dir, v.author, ['commit', '-q', '-m', `version ${i}`]);
    } else {
      // The version whose lines the operation puts back: the last identical one, else the one it names.
      let from = -1;
      for (let k = i - 1; k >= 0 && from < 0; k--) if (versions[k]!.content === v.content && commits[k] !== commits[i - 1]) from = k;
      if (from < 0) from = labels.get(v.restoresFrom)!;
      const tree = git(dir, ['write-tree']);
      const merge = gitAs(dir, v.author, ['commit-tree', tree, '-p', 'HEAD', '-p', commits[from]!, '-m', `version ${i}`]);
      git(dir, ['update-ref', 'HEAD', merge]);
      operations.add(merge);
    }
    const head = git(dir, ['rev-parse', 'HEAD']);
    authorOf.set(head, v.author);
    commits.push(head);
    previous = v.content;
  }
  const head = git(dir, ['rev-parse', 'HEAD']);
  const full = blameCommits(dir, head, path);
  const firstParent = blameCommits(dir, head, path, true);
  return full.map((commit, i) => ({
    who: original.has(commit) ? `commit ${commit}` : authorOf.get(commit)!,
    // Put back by an operation: first parents alone blame the operation, the whole history someone before it.
    restored: operations.has(firstParent[i]!) && firstParent[i] !== commit,
  }));
}

const LINES = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `  ${tag} line ${i + 1};\n`).join('');

describe('provenance against git blame', () => {
  it('answers what git blame answers over the same versions, line by line, with restored lines', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': `function first() {\n${LINES(6, 'first')}}\n`, 'b.txt': 'b\n' });
    writeFiles(repo, {
      'a.txt': `function first() {\n${LINES(3, 'first')}  changed in second;\n${LINES(3, 'first')}}\n\nfunction second() {\n${LINES(4, 'second')}}\n`,
    });
    git(repo, ['commit', '-q', '-am', 'second commit']);
    const a = join(repo, 'a.txt');
    const versions: ScriptedVersion[] = [];
    const file = () => readFileSync(a, 'utf8');
    /** The script's record: a.txt as it is now, written by `author`. */
    const seen = (author: string, extra: Partial<ScriptedVersion> = {}) => versions.push({ content: file(), author, ...extra });
    const edit = (f: (text: string) => string) => writeFileSync(a, f(file()));
    const step = async (turnId: string, tool: string, paths: string[]) => client.request('harness/beforeEdit', { channel: SESSION, turnId, paths, tool });
    const start = (turnId: string, message: string) => client.request('harness/turnStarted', { channel: SESSION, turnId, message });
    const end = (turnId: string) => client.request('harness/turnEnded', { channel: SESSION, turnId }, { timeoutMs: 60_000 });

    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    // Turn 1: an Edit of a.txt, then a Write of b.txt.
    await start('t1', 'add a greeting');
    await step('t1', 'Edit', ['a.txt']);
    edit((t) => t.replace('  first line 2;\n', '  greet();\n  first line 2 changed;\n'));
    seen('turn 1 step 1 (Edit)');
    await step('t1', 'Write', ['b.txt']);
    writeFiles(repo, { 'b.txt': 'b1\n' });
    await end('t1');
    // The user edits a.txt between the turns.
    edit((t) => t.replace('function second() {\n', 'function second(x) {\n  // by hand\n'));
    seen('user between-turns 1');
    // Turn 2: an Edit of a.txt; then, while a Write of b.txt runs, the user edits a.txt.
    await start('t2', 'add third');
    versions.at(-1)!.label = 't2 start';
    await step('t2', 'Edit', ['a.txt']);
    edit((t) => `${t}\nfunction third() {\n${LINES(3, 'third')}}\n`);
    seen('turn 2 step 1 (Edit)');
    await step('t2', 'Write', ['b.txt']);
    writeFiles(repo, { 'b.txt': 'b2\n' });
    edit((t) => t.replace('  changed in second;\n', '  changed in second, and by hand while the agent wrote b.txt;\n'));
    seen('user during-turn 2');
    await end('t2');
    // Turn 3: a shell command (its step names another file) rewrites a line of a.txt.
    await start('t3', 'run the formatter');
    await step('t3', 'Bash', ['Makefile']);
    edit((t) => t.replace('  second line 2;\n', '  second line 2 formatted;\n'));
    seen('turn 3 step 1 (Bash)');
    await end('t3');

    // What turn 3 left, against git blame of the same versions.
    const atTurn3 = await client.request<ProvenanceResult>('provenance/lines', { session: SESSION, path: 'a.txt', changeset: `ahp-changeset:/${SID}/turn/t3` });
    expect(engineLines(atTurn3)).toEqual(oracle(repo, 'a.txt', versions));

    // Revert turn 2 in a.txt: its lines go, the line the user's edit replaced comes back.
    await client.request(
      'invokeChangesetOperation',
      { channel: `ahp-changeset:/${SID}/turn/t2`, operationId: 'revert', target: { kind: 'resource', resource: pathToFileURL(a).href } },
      { timeoutMs: 60_000 },
    );
    expect(file()).not.toContain('third');
    seen('user between-turns 3', { restoresFrom: 't2 start' });
    const reverted = await client.request<ProvenanceResult>('provenance/lines', { session: SESSION, path: 'a.txt' });
    expect(engineLines(reverted)).toEqual(oracle(repo, 'a.txt', versions));
    expect(engineLines(reverted).some((l) => l.restored)).toBe(true);
    // Undo puts turn 2's lines back: they are turn 2's again, not the undo's.
    await client.request('invokeChangesetOperation', { channel: `ahp-changeset:/${SID}/session`, operationId: 'undo' }, { timeoutMs: 60_000 });
    expect(file()).toContain('third');
    seen('user between-turns 3', { restoresFrom: 't2 start' });
    // Turn 4 edits a.txt again.
    await start('t4', 'rename first');
    await step('t4', 'Edit', ['a.txt']);
    edit((t) => t.replace('function first() {\n', 'function primary() {\n'));
    seen('turn 4 step 1 (Edit)');
    await end('t4');

    const expected = oracle(repo, 'a.txt', versions);
    const answer = await client.request<ProvenanceResult>('provenance/lines', { session: SESSION, path: 'a.txt' });
    expect(answer.lineCount).toBe(file().split('\n').length - 1);
    expect(engineLines(answer)).toEqual(expected);
    // The script covers what it says: every kind of author, and lines put back.
    const kinds = new Set(expected.map((l) => l.who.replace(/ \d.*$/, '').replace(/ [0-9a-f]{40}$/, '')));
    expect([...kinds].sort()).toEqual(['commit', 'turn', 'user between-turns', 'user during-turn'].sort());
    expect(expected.some((l) => l.who === 'turn 3 step 1 (Bash)')).toBe(true);
    expect(expected.filter((l) => l.restored).map((l) => l.who)).toEqual(expect.arrayContaining(['turn 2 step 1 (Edit)', 'user during-turn 2']));
    // Asked again, the kept answer is the same.
    expect(await client.request<ProvenanceResult>('provenance/lines', { session: SESSION, path: 'a.txt' })).toEqual(answer);
  });
});
