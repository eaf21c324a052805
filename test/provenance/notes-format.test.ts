/**
 * The pieces of `serve --notes`: the flag and its environment variable, the
 * authorship log's text (ranges, quoted paths, what the reader refuses),
 * and notes written without git into a repository whose notes tree git
 * has already fanned out — read back by git itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../server/cli/serve-args.js';
import { UsageError } from '../../server/client/errors.js';
import {
  AUTHORSHIP_SCHEMA,
  AuthorshipLogError,
  formatRanges,
  parseAuthorshipLog,
  parseRanges,
  serializeAuthorshipLog,
} from '../../server/provenance/notes-format.js';
import { writeNotes } from '../../server/provenance/notes-write.js';
import { findGitRepository } from '../../server/snapshot/index.js';
import { openWorkspaceStore } from '../../server/store/index.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
afterEach(() => temp.cleanup());

describe('--notes', () => {
  it('is off by default, on with the flag or CHANGESET_SERVER_NOTES=1, and a bad value is a usage mistake', () => {
    expect(parseServeArgs([]).notes).toBe(false);
    expect(parseServeArgs(['--notes']).notes).toBe(true);
    expect(parseServeArgs([], { CHANGESET_SERVER_NOTES: '1' }).notes).toBe(true);
    expect(parseServeArgs([], { CHANGESET_SERVER_NOTES: '0' }).notes).toBe(false);
    expect(() => parseServeArgs([], { CHANGESET_SERVER_NOTES: 'yes' })).toThrow(UsageError);
    expect(() => parseServeArgs(['--notes=1'])).toThrow('--notes takes no value');
  });
});

describe('authorship log text', () => {
  it('writes ascending ranges and reads them back', () => {
    expect(formatRanges([1, 2, 3, 4, 9, 10, 12])).toBe('1-4,9-10,12');
    expect(parseRanges('1-4,9-10,12')).toEqual([1, 2, 3, 4, 9, 10, 12]);
    for (const bad of ['0', '3-1', '1, 2', '2,1', '', 'a']) expect(() => parseRanges(bad)).toThrow(AuthorshipLogError);
  });

  it('quotes a path with a space, drops files without lines, and round-trips', () => {
    const log = {
      files: [
        { path: 'src/my file.ts', lines: new Map([['0123456789abcdef', [1, 2, 5]]]) },
        { path: 'empty.ts', lines: new Map<string, number[]>() },
      ],
      metadata: {
        schema_version: AUTHORSHIP_SCHEMA,
        base_commit_sha: 'a'.repeat(40),
        prompts: {
          '0123456789abcdef': {
            agent_id: { tool: 'claude', id: 's1', model: 'unknown' },
            messages: [{ type: 'user' as const, text: 'hi' }],
            total_additions: 3,
            total_deletions: 0,
            accepted_lines: 3,
            overriden_lines: 0,
          },
        },
      },
    };
    const text = serializeAuthorshipLog(log);
    expect(text.split('\n---\n')[0]).toBe('"src/my file.ts"\n  0123456789abcdef 1-2,5');
    const back = parseAuthorshipLog(text);
    expect(back.files).toEqual([log.files[0]]);
    expect(back.metadata).toEqual(log.metadata);
  });

  it('refuses what the standard does not allow', () => {
    const meta = JSON.stringify({ schema_version: AUTHORSHIP_SCHEMA, base_commit_sha: 'x', prompts: {} });
    expect(() => parseAuthorshipLog(`a.ts\n  0123456789abcdef 1\n---\n${meta}`)).toThrow('has no prompt record');
    expect(() => parseAuthorshipLog(`a.ts\n   0123456789abcdef 1\n---\n${meta}`)).toThrow(AuthorshipLogError);
    expect(() => parseAuthorshipLog(`a.ts\n---\n${meta.replace('3.0.0', '2.0.0')}`)).toThrow('schema_version');
    expect(() => parseAuthorshipLog('a.ts\n  0123456789abcdef 1\n')).toThrow('---');
  });
});

describe('notes written without git', () => {
  it("go into a fanned-out notes tree git reads, next to git's own notes, and skip a commit that has one", async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    // Enough commits with notes git wrote that its notes tree is fanned out into two-character directories.
    const commitsScript = Array.from(
      { length: 300 },
      (_, i) => `commit refs/heads/many\nmark :${i + 1}\ncommitter T <t@e> ${1_700_000_000 + i} +0000\ndata ${`c${i}`.length}\nc${i}\n`,
    ).join('');
    const notesScript = `commit refs/notes/ai\ncommitter T <t@e> 1700001000 +0000\ndata 5\nnotes\n${Array.from({ length: 300 }, (_, i) => `N inline :${i + 1}\ndata 7\ntheirs\n`).join('')}`;
    git(repo, ['fast-import', '--quiet'], commitsScript + notesScript);
    const commits = git(repo, ['rev-list', 'many']).split('\n');
    expect(commits).toHaveLength(300);
    expect(git(repo, ['notes', '--ref=ai', 'list']).split('\n')).toHaveLength(300);
    const rootTree = git(repo, ['ls-tree', 'refs/notes/ai']);
    expect(rootTree).toMatch(/^040000 tree [0-9a-f]{40}\t[0-9a-f]{2}$/m);

    const stateDir = mkdtempSync(join(tmpdir(), 'notes-state-'));
    const store = await openWorkspaceStore({ stateDir, workspaceDir: repo, compactAfterIdleMs: Number.POSITIVE_INFINITY, log: () => undefined });
    try {
      const target = git(repo, ['rev-parse', 'main']); // no note
      const taken = commits[0]!;
      const result = await writeNotes(
        findGitRepository(repo)!,
        store,
        new Map([
          [target, 'ours\n'],
          [taken, 'ours too\n'],
        ]),
      );
      expect(result.written).toEqual([target]);
      expect(result.skipped).toEqual([taken]);
      expect(git(repo, ['notes', '--ref=ai', 'show', target])).toBe('ours');
      expect(git(repo, ['notes', '--ref=ai', 'show', taken])).toBe('theirs');
      expect(git(repo, ['notes', '--ref=ai', 'list']).split('\n')).toHaveLength(301);
      expect(git(repo, ['fsck', '--no-dangling'])).toBe('');
      // Removing our own note leaves git's.
      const removed = await writeNotes(findGitRepository(repo)!, store, new Map(), [target]);
      expect(removed.removed).toEqual([target]);
      expect(git(repo, ['notes', '--ref=ai', 'list']).split('\n')).toHaveLength(300);
    } finally {
      await store.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
