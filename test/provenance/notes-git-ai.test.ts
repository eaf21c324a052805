/**
 * `serve --notes`: each new commit gets an authorship log under
 * `refs/notes/ai` in the Git AI Standard v3.0.0 format, read back with
 * `git notes --ref=ai show` and parsed by a reader written here from the
 * standard's text (not the server's own); the note follows the user's
 * `git commit --amend` and a plain rebase onto a new base.
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProvenanceResult } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/wait.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

useMemoryTempDir();

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
beforeEach(async () => {
  svc = await startTestService({ notes: true });
  client = await svc.client();
});
afterEach(async () => {
  try {
    await svc.stop();
  } finally {
    temp.cleanup();
  }
});

const SESSION_ID = 'notes';
const SESSION = `ahp-session:/${SESSION_ID}`;

/** A log as the standard defines it: files → hash → line numbers, and the metadata object. */
interface Log {
  files: Map<string, Map<string, number[]>>;
  metadata: Record<string, unknown> & { prompts: Record<string, Record<string, unknown>> };
}

/**
 * Reads an authorship log following the standard's text (section 1.2): an
 * attestation section, a divider line of exactly `---`, a JSON metadata
 * section; file paths at the start of a line (quoted when they hold
 * whitespace), entries indented by exactly two spaces holding a 16-hex hash,
 * one space and comma-separated 1-based lines or inclusive ranges in
 * ascending order; every hash a key of `prompts`; `schema_version` is
 * `authorship/3.0.0`; `base_commit_sha` and `prompts` present; each prompt
 * record has `agent_id` {tool, id, model}, `messages` of type user,
 * assistant or tool_use, and the four integer counters.
 */
function parseStandardLog(text: string): Log {
  const lines = text.split('\n');
  const divider = lines.indexOf('---');
  if (divider < 0) throw new Error('no divider');
  const metadata = JSON.parse(lines.slice(divider + 1).join('\n')) as Log['metadata'];
  if (metadata['schema_version'] !== 'authorship/3.0.0') throw new Error('schema_version');
  if (typeof metadata['base_commit_sha'] !== 'string') throw new Error('base_commit_sha');
  for (const [hash, p] of Object.entries(metadata.prompts)) {
    if (!/^[0-9a-f]{16}$/.test(hash)) throw new Error(`hash ${hash}`);
    const agent = p['agent_id'] as Record<string, unknown>;
    for (const k of ['tool', 'id', 'model']) if (typeof agent[k] !== 'string') throw new Error(`agent_id.${k}`);
    for (const m of p['messages'] as { type: string }[]) if (!['user', 'assistant', 'tool_use'].includes(m.type)) throw new Error(m.type);
    for (const k of ['total_additions', 'total_deletions', 'accepted_lines', 'overriden_lines']) if (!Number.isInteger(p[k])) throw new Error(k);
  }
  const files = new Map<string, Map<string, number[]>>();
  let current: Map<string, number[]> | undefined;
  for (const line of lines.slice(0, divider)) {
    const entry = /^ {2}([0-9a-f]{16}) ([0-9,-]+)$/.exec(line);
    if (entry) {
      if (!current) throw new Error('entry before a file');
      if (!(entry[1]! in metadata.prompts)) throw new Error(`hash ${entry[1]} without a prompt record`);
      const numbers: number[] = [];
      for (const part of entry[2]!.split(',')) {
        const [a, b] = part.split('-').map(Number);
        for (let n = a!; n <= (b ?? a!); n++) numbers.push(n);
      }
      if (numbers.some((n, i) => n < 1 || (i > 0 && n <= numbers[i - 1]!))) throw new Error(`ranges ${entry[2]}`);
      current.set(entry[1]!, numbers);
    } else if (/^\S/.test(line)) {
      current = new Map();
      files.set(line.replace(/^"(.*)"$/, '$1'), current);
    } else if (line !== '') throw new Error(`line ${JSON.stringify(line)}`);
  }
  return { files, metadata };
}

async function turn(id: string, message: string, paths: string[], edit: () => void): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId: id, message }, { timeoutMs: 60_000 });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: id, paths, tool: 'Edit' }, { timeoutMs: 60_000 });
  edit();
  await client.request('harness/turnEnded', { channel: SESSION, turnId: id }, { timeoutMs: 60_000 });
}

/** The note of `commit` under refs/notes/ai, as `git notes --ref=ai show` prints it; undefined when it has none. */
function note(repo: string, commit: string): string | undefined {
  const listed = git(repo, ['notes', '--ref=ai', 'list']).split('\n');
  if (!listed.some((line) => line.endsWith(` ${commit}`))) return undefined;
  return `${git(repo, ['notes', '--ref=ai', 'show', commit])}\n`;
}

async function noteOf(repo: string, commit: string): Promise<Log> {
  await until(() => note(repo, commit) !== undefined, `the note of ${commit.slice(0, 7)}`);
  return parseStandardLog(note(repo, commit)!);
}

/** Lines per file of a log, whatever the hash. */
function attested(log: Log): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [path, byHash] of log.files) out[path] = [...byHash.values()].flat().sort((a, b) => a - b);
  return out;
}

const HASH = createHash('sha256').update(`claude:${SESSION_ID}`).digest('hex').slice(0, 16);

describe('serve --notes', () => {
  it("attaches a Git AI authorship log to the user's commit, with the turn's lines, and follows an amend", async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\ntwo\nthree\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href, provider: 'claude-code' }, { timeoutMs: 60_000 });
    await turn('t1', 'Count to five', ['a.txt', 'b c.txt'], () => writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\nfour\nfive\n', 'b c.txt': 'b1\nb2\n' }));
    writeFiles(repo, { 'a.txt': 'zero\none\ntwo\nthree\nfour\nfive\n' });
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'Count']);
    const head = git(repo, ['rev-parse', 'HEAD']);

    const log = await noteOf(repo, head);
    expect(log.metadata['base_commit_sha']).toBe(head);
    // Line 1 is the user's; four and five are the turn's, as the engine says of the turn's end.
    expect(attested(log)).toEqual({ 'a.txt': [5, 6], 'b c.txt': [1, 2] });
    const blame = await client.request<ProvenanceResult>('provenance/lines', {
      session: SESSION,
      path: 'a.txt',
      changeset: `ahp-changeset:/${SESSION_ID}/turn/t1`,
    });
    const turnLines = blame.ranges.filter((r) => blame.authors[r.author]!.kind === 'turn').flatMap((r) => [r.startLine, r.endLine]);
    expect(turnLines).toEqual([4, 5]); // the same two lines, before the user's line above them
    expect(Object.keys(log.metadata.prompts)).toEqual([HASH]);
    const prompt = log.metadata.prompts[HASH]!;
    expect(prompt['agent_id']).toEqual({ tool: 'claude', id: SESSION_ID, model: 'unknown' });
    expect(prompt['human_author']).toBe('Test <test@example.com>');
    expect(prompt['accepted_lines']).toBe(4);
    expect(prompt['messages']).toEqual([
      expect.objectContaining({ type: 'user', text: 'Count to five' }),
      expect.objectContaining({ type: 'tool_use', name: 'Edit', input: { paths: ['a.txt', 'b c.txt'] } }),
    ]);
    // The raw text quotes the path with a space.
    expect(note(repo, head)).toContain('\n"b c.txt"\n');

    // The user amends by hand: the amended commit carries the note; the replaced commit's note (ours) goes.
    writeFiles(repo, { 'b c.txt': 'b1\nb2\nmine\n' });
    git(repo, ['commit', '-q', '-a', '--amend', '--no-edit']);
    const amended = git(repo, ['rev-parse', 'HEAD']);
    const after = await noteOf(repo, amended);
    expect(after.metadata['base_commit_sha']).toBe(amended);
    expect(attested(after)).toEqual({ 'a.txt': [5, 6], 'b c.txt': [1, 2] });
    await until(() => !git(repo, ['notes', '--ref=ai', 'list']).includes(head), 'the replaced note removed');
    expect(git(repo, ['notes', '--ref=ai', 'list']).split('\n')).toHaveLength(1);
    expect(git(repo, ['fsck', '--no-dangling'])).toBe('');
  });

  it('carries the notes of two commits rebased onto a new base, and leaves a note another tool wrote', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\n', 'b.txt': 'b\n' });
    const initial = git(repo, ['rev-parse', 'HEAD']);
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href, provider: 'claude-code' }, { timeoutMs: 60_000 });
    await turn('t1', 'First', ['a.txt'], () => writeFiles(repo, { 'a.txt': 'one\ntwo\n' }));
    git(repo, ['commit', '-q', '-am', 'First']);
    const first = git(repo, ['rev-parse', 'HEAD']);
    await noteOf(repo, first);
    await turn('t2', 'Second', ['b.txt'], () => writeFiles(repo, { 'b.txt': 'b\nbb\n' }));
    git(repo, ['commit', '-q', '-am', 'Second']);
    const second = git(repo, ['rev-parse', 'HEAD']);
    await noteOf(repo, second);

    // A new base made beside them (another file), without touching the working tree; then a plain rebase.
    const blob = git(repo, ['hash-object', '-w', '--stdin'], 'c\n');
    const tree = git(repo, ['mktree'], `${git(repo, ['ls-tree', initial])}\n100644 blob ${blob}\tc.txt\n`);
    const base = git(repo, ['commit-tree', tree, '-p', initial, '-m', 'New base']);
    git(repo, ['update-ref', 'refs/heads/base', base]);
    git(repo, ['rebase', '-q', 'base']);
    const [second2, first2] = git(repo, ['rev-list', '-n', '2', 'HEAD']).split('\n') as [string, string];
    expect(git(repo, ['rev-parse', `${first2}^`])).toBe(base);

    const firstLog = await noteOf(repo, first2);
    const secondLog = await noteOf(repo, second2);
    expect(attested(firstLog)).toEqual({ 'a.txt': [2] });
    expect(attested(secondLog)).toEqual({ 'b.txt': [2] });
    expect(secondLog.metadata['base_commit_sha']).toBe(second2);
    expect(Object.keys(secondLog.metadata.prompts)).toEqual([HASH]);

    // A note another tool attached is never replaced.
    await turn('t3', 'Third', ['a.txt'], () => writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' }));
    git(repo, ['add', '-A']);
    const third = git(repo, ['commit-tree', git(repo, ['write-tree']), '-p', second2, '-m', 'Third']);
    git(repo, ['notes', '--ref=ai', 'add', '-m', 'written by another tool', third]);
    git(repo, ['update-ref', '-m', 'commit: Third', 'HEAD', third]);
    await until(() => svc.service.sessions.list()[0]!.meta.turns['t3']?.commits !== undefined, 'turn 3 linked');
    expect(note(repo, third)).toBe('written by another tool\n');
  });
});
