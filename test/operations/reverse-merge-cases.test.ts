/**
 * Undoing one change in today's file: what is written, what is left alone,
 * and the reason a user reads when it cannot be done.
 */
import { describe, expect, it } from 'vitest';
import { reverseMerge, type RangeSelection, type Version } from '../../server/operations/reverse-merge.js';
import { hashObject } from '../../server/snapshot/index.js';

const v = (text: string | Buffer, mode: '100644' | '100755' | '120000' = '100644'): Version => ({ content: Buffer.from(text), mode });
const disk = (text: string | Buffer, mode: '100644' | '100755' | '120000' = '100644') => ({
  content: Buffer.from(text),
  mode,
  oid: hashObject('blob', Buffer.from(text)),
});
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i}`}\n`).join('');
const text = (o: ReturnType<typeof reverseMerge>) => (o.kind === 'write' ? (o.next ? Buffer.from(o.next.content).toString() : 'deleted') : o.kind);
const range = (side: 'before' | 'after', first: number, last = first): RangeSelection => ({
  side,
  range: { start: { line: first, character: 0 }, end: { line: last, character: 0 } },
});

describe('reverseMerge without a range', () => {
  it('gives the reason a user reads for each case it cannot undo', () => {
    expect(reverseMerge(v('a\n'), v('b\n'), undefined)).toEqual({ kind: 'conflict', reason: 'deleted since the change' });
    expect(reverseMerge(v('a\n'), undefined, disk('made since\n'))).toEqual({ kind: 'conflict', reason: 'created by the change and edited since' });
    expect(reverseMerge(undefined, v('new\n'), disk('new, edited\n'))).toEqual({ kind: 'conflict', reason: 'edited since the change, which created it' });
    expect(reverseMerge(v('a\n'), v('b\n'), disk('c\n'))).toEqual({ kind: 'conflict', reason: 'edited since on the same lines' });
    expect(reverseMerge(v(lines(9)), v(lines(9, { 1: 'x' })), disk(lines(9, { 1: 'x', 8: 'y' }), '100755'))).toEqual({
      kind: 'conflict',
      reason: 'mode changed since',
    });
  });

  it('recreates a file the change deleted while it is still gone, and leaves alone what never existed', () => {
    expect(reverseMerge(v('a\n'), undefined, undefined)).toEqual({ kind: 'write', next: v('a\n') });
    expect(reverseMerge(undefined, undefined, undefined)).toEqual({ kind: 'unchanged' });
  });

  it('does not merge binary files, whichever version holds the NUL', () => {
    const bin = Buffer.from('a\n\0b\n');
    for (const [before, after, current] of [
      [v(bin), v('x\nb\n'), disk('x\nb\nc\n')],
      [v('a\nb\n'), v(bin), disk('a\n\0b\nc\n')],
      [v('a\nb\n'), v('x\nb\n'), disk(Buffer.from('x\n\0b\nc\n'))],
    ] as const) {
      expect(reverseMerge(before, after, current)).toEqual({ kind: 'conflict', reason: 'binary file changed since' });
    }
    // A NUL past the first 8,000 bytes: still text.
    const long = `${'x'.repeat(8000)}\n`;
    const out = reverseMerge(v(`${long}a\n\0\n`), v(`${long}b\n\0\n`), disk(`${long}b\n\0\nmore\n`));
    expect(out.kind).toBe('write');
  });

  it('compares modes as well as content', () => {
    // Today's file has the change's content but a mode of its own: a later edit, kept apart from the content.
    expect(reverseMerge(v('a\n'), v('b\n'), disk('b\n', '100755'))).toMatchObject({ kind: 'conflict' });
    // The change only set the executable bit: undone while the file is as it left it.
    expect(reverseMerge(v('a\n'), v('a\n', '100755'), disk('a\n', '100755'))).toEqual({ kind: 'write', next: v('a\n') });
    expect(reverseMerge(v('a\n'), v('a\n', '100755'), disk('a\n'))).toEqual({ kind: 'unchanged' });
  });

  it('puts back the mode the change set when merging later edits', () => {
    const out = reverseMerge(v(lines(9), '100755'), v(lines(9, { 1: 'x' })), disk(lines(9, { 1: 'x', 8: 'later' })));
    expect(out).toMatchObject({ kind: 'write', next: { mode: '100755' } });
    expect(text(out)).toBe(lines(9, { 8: 'later' }));
  });
});

describe('reverseMerge with a range', () => {
  const before = lines(30);
  const after = lines(30, { 2: 'first change', 25: 'second change' });

  it('selects hunks by the lines of either side', () => {
    expect(text(reverseMerge(v(before), v(after), disk(after), range('before', 2)))).toBe(lines(30, { 25: 'second change' }));
    expect(text(reverseMerge(v(before), v(after), disk(after), range('after', 0, 29)))).toBe(before);
    // Lines of a hunk's context count as the hunk.
    expect(text(reverseMerge(v(before), v(after), disk(after), range('after', 5)))).toBe(lines(30, { 25: 'second change' }));
    expect(text(reverseMerge(v(before), v(after), disk(after), range('after', 22)))).toBe(lines(30, { 2: 'first change' }));
  });

  it('leaves the file alone when the range touches no hunk', () => {
    expect(reverseMerge(v(before), v(after), disk(after), range('after', 12, 15))).toEqual({ kind: 'unchanged' });
  });

  it('refuses a range past the last line of the side it names, with both numbers', () => {
    expect(() => reverseMerge(v(before), v(after), disk(after), range('before', 29, 30))).toThrow(
      new RangeError("range lines 29-30 are outside the file's 30 lines (before)"),
    );
    expect(() => reverseMerge(v(before), v(after), disk(after), range('after', 30))).toThrow(RangeError);
    expect(() => reverseMerge(v(before), v(after), disk(after), range('after', 29))).not.toThrow();
    // An empty side still has a line 0 to point at.
    expect(reverseMerge(undefined, v('a\n'), disk('a\n'), range('before', 0))).toEqual({ kind: 'write', next: undefined });
  });

  it('has no lines to select in a binary file', () => {
    expect(reverseMerge(v('a\0'), v('b\n'), disk('b\n'), range('after', 0))).toEqual({ kind: 'conflict', reason: 'binary files have no lines to select' });
    expect(reverseMerge(v('a\n'), v('b\0'), disk('b\0'), range('after', 0))).toEqual({ kind: 'conflict', reason: 'binary files have no lines to select' });
  });

  it('takes back only the selected lines of a file the change created, keeping the file', () => {
    const created = 'one\ntwo\nthree\nfour\n';
    expect(text(reverseMerge(undefined, v(created), disk(created), range('after', 1)))).toBe('one\nthree\nfour\n');
    expect(text(reverseMerge(undefined, v(created), disk(created), range('after', 1, 2)))).toBe('one\nfour\n');
    expect(text(reverseMerge(undefined, v(created), disk(created), range('after', 0, 3)))).toBe('deleted');
    expect(text(reverseMerge(undefined, v(created, '100755'), disk(created, '100755'), range('after', 0)))).toBe('two\nthree\nfour\n');
    expect(reverseMerge(undefined, v(created, '100755'), disk(created, '100755'), range('after', 0))).toMatchObject({ next: { mode: '100755' } });
  });

  it('puts back every line of a file the change deleted, by a range over its old lines', () => {
    expect(reverseMerge(v('a\nb\n', '100755'), undefined, undefined, range('before', 1))).toEqual({ kind: 'write', next: v('a\nb\n', '100755') });
  });

  it('merges the selected undo into a file edited since, keeping the other hunk and the later edit', () => {
    const current = lines(30, { 2: 'first change', 25: 'second change', 14: 'later edit' });
    expect(text(reverseMerge(v(before), v(after), disk(current), range('after', 25)))).toBe(lines(30, { 2: 'first change', 14: 'later edit' }));
  });

  it('keeps a hunk with changes on both sides together', () => {
    const a2 = lines(30, { 2: 'first change', 4: 'near change' });
    expect(text(reverseMerge(v(before), v(a2), disk(a2), range('after', 4)))).toBe(before);
    const a3 = lines(30, { 2: 'first change', 20: 'far change' });
    expect(text(reverseMerge(v(before), v(a3), disk(a3), range('after', 20)))).toBe(lines(30, { 2: 'first change' }));
  });
});

describe('reverseMerge, cases written from the mutation run', () => {
  const bytes = (o: ReturnType<typeof reverseMerge>) => (o.kind === 'write' && o.next ? Buffer.from(o.next.content) : undefined);

  it('keeps bytes that are not UTF-8 exactly, merged or selected by a range', () => {
    // 0xE9 is "é" in Latin-1 and no valid UTF-8 on its own: written back as text it would become two bytes.
    const e9 = (s: string) => Buffer.from(s, 'latin1');
    const before = e9(lines(9, { 0: 'caf\xe9' }));
    const after = e9(lines(9, { 0: 'caf\xe9', 2: 'changed' }));
    const current = e9(lines(9, { 0: 'caf\xe9', 2: 'changed', 7: 'later \xe9' }));
    expect(bytes(reverseMerge(v(before), v(after), disk(current)))).toEqual(e9(lines(9, { 0: 'caf\xe9', 7: 'later \xe9' })));
    const after2 = e9(lines(30, { 0: 'caf\xe9', 2: 'first', 25: 'second' }));
    const before2 = e9(lines(30, { 0: 'caf\xe9' }));
    expect(bytes(reverseMerge(v(before2), v(after2), disk(after2), range('after', 25)))).toEqual(e9(lines(30, { 0: 'caf\xe9', 2: 'first' })));
  });

  it('counts a range over the old side by the old line numbers, which differ from the new ones after an insertion', () => {
    const before = lines(40);
    // Ten lines inserted after line 2 and old line 30 changed: it is new line 40.
    const after = `${lines(3)}${'inserted\n'.repeat(10)}${lines(40, { 30: 'changed' }).split('\n').slice(3).join('\n')}`;
    expect(after.split('\n')[40]).toBe('changed');
    const withInsert = `${lines(3)}${'inserted\n'.repeat(10)}${lines(40).split('\n').slice(3).join('\n')}`;
    expect(text(reverseMerge(v(before), v(after), disk(after), range('before', 30)))).toBe(withInsert);
    expect(text(reverseMerge(v(before), v(after), disk(after), range('after', 40)))).toBe(withInsert);
    // The second hunk is old lines 27-33, new lines 37-43: line 33 is in it on the old side only.
    expect(text(reverseMerge(v(before), v(after), disk(after), range('before', 33)))).toBe(withInsert);
    expect(reverseMerge(v(before), v(after), disk(after), range('after', 33))).toEqual({ kind: 'unchanged' });
  });

  it('ends a hunk at its last line of context', () => {
    const before = lines(30);
    const after = lines(30, { 2: 'first change', 25: 'second change' });
    // The first hunk covers lines 0-5 (the change at 2 and three lines of context after it).
    expect(text(reverseMerge(v(before), v(after), disk(after), range('after', 5)))).toBe(lines(30, { 25: 'second change' }));
    expect(reverseMerge(v(before), v(after), disk(after), range('after', 6))).toEqual({ kind: 'unchanged' });
    expect(reverseMerge(v(before), v(after), disk(after), range('after', 6, 21))).toEqual({ kind: 'unchanged' });
  });

  it('undoes the whole of a block of inserted lines in a file that existed, whichever of its lines the range names', () => {
    expect(text(reverseMerge(v('a\nb\n'), v('a\nx\ny\nb\n'), disk('a\nx\ny\nb\n'), range('after', 1)))).toBe('a\nb\n');
  });

  it('selects nothing of a file the change created by a range whose end comes before its start', () => {
    const created = 'one\ntwo\nthree\nfour\n';
    expect(reverseMerge(undefined, v(created), disk(created), range('after', 2, 1))).toEqual({ kind: 'unchanged' });
    // Edited since: still nothing to do, rather than a merge that writes today's file over itself.
    expect(reverseMerge(undefined, v(created), disk(`${created}five\n`), range('after', 2, 1))).toEqual({ kind: 'unchanged' });
  });
});
