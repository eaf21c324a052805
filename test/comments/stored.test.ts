/**
 * What `import` accepts as a session's comments (`storedCommentsProblem`):
 * exactly the blob a store writes. Each crafted shape is refused with what
 * is wrong; a list the server wrote passes.
 */
import { describe, expect, it } from 'vitest';
import { MAX_STORED_BYTES, serializeComments, storedCommentsProblem, type StoredComments } from '../../server/comments/stored.js';

const SID = 'sess-1';
const OID = 'a'.repeat(40);

function written(): StoredComments {
  return {
    v: 1,
    next: 3,
    comments: [
      {
        id: '1',
        anchor: { kind: 'lines', changeset: `ahp-changeset:/${SID}/turn/t1`, path: 'src/app.ts', side: 'after', startLine: 2, endLine: 3 },
        turn: 1,
        body: 'Name these\n\tbetter',
        author: 'you',
        createdAt: 1_700_000_000_000,
        state: 'open',
        code: ['const a = 1;', 'const b = 2;'],
        target: { root: 0, path: 'src/app.ts', oid: OID },
      },
      {
        id: '2',
        anchor: { kind: 'turn', turnId: 't1' },
        turn: 1,
        body: 'Add a test',
        author: 'Ada',
        createdAt: 1_700_000_000_001,
        state: 'resolved',
        resolution: { by: 'agent', at: 1_700_000_000_002, note: 'Added one' },
      },
    ],
  };
}

/** The problem with the written list after `change`. */
function problem(change: (s: StoredComments & Record<string, unknown>) => void): string | undefined {
  const s = written() as StoredComments & Record<string, unknown>;
  change(s);
  return storedCommentsProblem(serializeComments(s), SID);
}

const first = (s: StoredComments) => s.comments[0] as unknown as Record<string, unknown>;

describe('the stored comments an import accepts', () => {
  it('takes what a store writes', () => {
    expect(storedCommentsProblem(serializeComments(written()), SID)).toBeUndefined();
  });

  it.each([
    ['not JSON', () => undefined, 'is not JSON', Buffer.from('{"v":1,')],
    ['too large', () => undefined, `is larger than ${MAX_STORED_BYTES} bytes`, Buffer.alloc(MAX_STORED_BYTES + 1, 0x20)],
  ])('refuses a blob that is %s', (_name, _change, expected, bytes) => {
    expect(storedCommentsProblem(bytes, SID)).toBe(expected);
  });

  it.each<[string, (s: StoredComments & Record<string, unknown>) => void, string]>([
    ['another format', (s) => ((s as Record<string, unknown>)['v'] = 2), 'is not in a format this version writes'],
    ['a field of its own', (s) => (s['extra'] = 1), 'the list has a field no store writes ("extra")'],
    ['two comments of one number', (s) => (s.comments[1]!.id = '1'), 'has two comments numbered 1'],
    ['a number not given yet', (s) => (s.comments[1]!.id = '3'), 'has comment 2 with an id a store never gives'],
    ['escape sequences in a text', (s) => (first(s)['body'] = 'x\u001b[2J'), 'has comment 1: its text must not contain control characters'],
    ['a line break in an author', (s) => (first(s)['author'] = 'Ada\nLovelace'), 'has comment 1: its author must not contain control characters'],
    ['an empty text', (s) => (first(s)['body'] = ' \n'), 'has comment 1: its text must be a non-empty text'],
    ['a text over the limit', (s) => (first(s)['body'] = 'x'.repeat(65_537)), 'has comment 1: its text is longer than 65536 bytes'],
    [
      "another session's changeset",
      (s) => ((first(s)['anchor'] as Record<string, unknown>)['changeset'] = 'ahp-changeset:/other/turn/t1'),
      'has comment 1: its anchor.changeset is a changeset of another session',
    ],
    [
      'a path going up',
      (s) => ((first(s)['target'] as Record<string, unknown>)['path'] = '../../etc/passwd'),
      'has comment 1: it names a file outside its working directory',
    ],
    [
      'an absolute path',
      (s) => ((first(s)['target'] as Record<string, unknown>)['path'] = '/etc/passwd'),
      'has comment 1: it names a file outside its working directory',
    ],
    ['a bad object id', (s) => ((first(s)['target'] as Record<string, unknown>)['oid'] = 'HEAD'), 'has comment 1: it names no file version'],
    ['code of another length', (s) => (first(s)['code'] = ['one']), 'has comment 1: its code must be the 2 lines it points at'],
    [
      'resolved without a resolution',
      (s) => delete (s.comments[1] as unknown as Record<string, unknown>)['resolution'],
      'has comment 2: it is resolved without saying by whom',
    ],
    [
      'resolved by someone else',
      (s) => ((s.comments[1]!.resolution as Record<string, unknown>)['by'] = 'root'),
      'has comment 2: its resolution is by neither the reviewer nor the agent',
    ],
    [
      'an anchor field of its own',
      (s) => ((first(s)['anchor'] as Record<string, unknown>)['x'] = 1),
      'has comment 1: its anchor has a field no store writes ("x")',
    ],
    ['too many comments', (s) => (s.comments = Array.from({ length: 10_001 }, () => s.comments[1]!)), 'must hold a list of at most 10000 comments'],
  ])('refuses %s', (_name, change, expected) => {
    expect(problem(change)).toBe(expected);
  });
});
