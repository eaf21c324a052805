import { describe, expect, it } from 'vitest';
import { reverseMerge, type Version } from '../../server/operations/reverse-merge.js';
import { hashObject } from '../../server/snapshot/index.js';

const v = (text: string, mode: '100644' | '100755' = '100644'): Version => ({ content: Buffer.from(text), mode });
const disk = (text: string, mode: '100644' | '100755' = '100644') => ({ content: Buffer.from(text), mode, oid: hashObject('blob', Buffer.from(text)) });
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i}`}\n`).join('');
const text = (o: ReturnType<typeof reverseMerge>) => (o.kind === 'write' && o.next ? Buffer.from(o.next.content).toString() : o.kind);

describe('reverseMerge', () => {
  it('puts back the old content when the file still holds what the change wrote', () => {
    expect(text(reverseMerge(v('a\n'), v('b\n'), disk('b\n')))).toBe('a\n');
  });

  it('keeps later edits to other lines', () => {
    const before = lines(20);
    const after = lines(20, { 2: 'changed by the turn' });
    const current = lines(20, { 2: 'changed by the turn', 15: 'changed later' });
    expect(text(reverseMerge(v(before), v(after), disk(current)))).toBe(lines(20, { 15: 'changed later' }));
  });

  it('is a conflict when later edits touch the same lines', () => {
    expect(reverseMerge(v('a\n'), v('b\n'), disk('c\n'))).toMatchObject({ kind: 'conflict' });
  });

  it('deletes a created file only while it still holds what the change wrote', () => {
    expect(reverseMerge(undefined, v('new\n'), disk('new\n'))).toEqual({ kind: 'write', next: undefined });
    expect(reverseMerge(undefined, v('new\n'), disk('new and edited\n'))).toMatchObject({ kind: 'conflict' });
  });

  it('recreates a deleted file with its mode, and leaves an already reverted file alone', () => {
    const out = reverseMerge(v('#!/bin/sh\n', '100755'), undefined, undefined);
    expect(out).toMatchObject({ kind: 'write', next: { mode: '100755' } });
    expect(reverseMerge(v('a\n'), v('b\n'), disk('a\n'))).toEqual({ kind: 'unchanged' });
  });

  it('reverts only the hunks a range intersects', () => {
    const before = lines(30);
    const after = lines(30, { 2: 'first change', 25: 'second change' });
    const out = reverseMerge(v(before), v(after), disk(after), {
      side: 'after',
      range: { start: { line: 25, character: 0 }, end: { line: 25, character: 5 } },
    });
    expect(text(out)).toBe(lines(30, { 2: 'first change' }));
  });

  it('reverts pure insertions and pure deletions by range', () => {
    const before = lines(30);
    const after = lines(30).replace('line 5\n', 'line 5\ninserted a\ninserted b\n').replace('line 25\n', '');
    const sel = (line: number) => ({ side: 'after' as const, range: { start: { line, character: 0 }, end: { line, character: 0 } } });
    expect(text(reverseMerge(v(before), v(after), disk(after), sel(6)))).toBe(lines(30).replace('line 25\n', ''));
    // Line 25 of the new side follows the deleted line (old line 25).
    expect(text(reverseMerge(v(before), v(after), disk(after), sel(26)))).toBe(lines(30).replace('line 5\n', 'line 5\ninserted a\ninserted b\n'));
  });

  it('refuses a range outside the file', () => {
    expect(() =>
      reverseMerge(v('a\n'), v('b\n'), disk('b\n'), { side: 'after', range: { start: { line: 5, character: 0 }, end: { line: 6, character: 0 } } }),
    ).toThrow(/outside the file/);
  });

  it('keeps bytes that are not UTF-8 exactly', () => {
    const before = Buffer.from([0xff, 0x0a, 0x61, 0x0a]);
    const out = reverseMerge({ content: before, mode: '100644' }, v('x\na\n'), disk('x\na\n'));
    expect(out.kind === 'write' && Buffer.from(out.next!.content)).toEqual(before);
  });
});
