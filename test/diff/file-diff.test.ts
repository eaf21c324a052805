import { describe, expect, it } from 'vitest';
import { diffFile, type TextFileDiff } from '../../server/diff/file-diff.js';
import { formatHunkHeader } from '../../server/diff/hunks.js';
import { gitDiffPairs, prng } from './git-oracle.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function text(d: ReturnType<typeof diffFile>): TextFileDiff {
  if (d.kind !== 'text') throw new Error(`expected a text diff, got ${d.kind}`);
  return d;
}

describe('diffFile', () => {
  it('reports a modified file with hunks and counts', () => {
    const d = text(diffFile(enc('a\nb\nc\n'), enc('a\nB\nc\n')));
    expect(d).toMatchObject({ kind: 'text', before: true, after: true, coarse: false, added: 1, removed: 1, encoding: 'utf-8' });
    expect(d.hunks).toEqual([{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: [' a', '-b', '+B', ' c'] }]);
  });

  it('reports created and deleted files', () => {
    const created = text(diffFile(undefined, enc('x\ny')));
    expect(created).toMatchObject({ before: false, after: true, added: 2, removed: 0 });
    expect(created.hunks[0]?.lines).toEqual(['+x', '+y', '\\ No newline at end of file']);
    expect(formatHunkHeader(created.hunks[0]!)).toBe('@@ -0,0 +1,2 @@');
    const deleted = text(diffFile(enc('x\n'), undefined));
    expect(deleted).toMatchObject({ before: true, after: false, added: 0, removed: 1 });
    expect(text(diffFile(undefined, new Uint8Array()))).toMatchObject({ before: false, after: true, hunks: [], added: 0 });
  });

  it('detects binary files as git does: a NUL byte in the first 8000 bytes', () => {
    const late = new Uint8Array(9000).fill(0x61);
    late[8000] = 0;
    expect(diffFile(undefined, late).kind).toBe('text');
    const early = late.slice();
    early[7999] = 0;
    expect(diffFile(enc('a'), early)).toEqual({ kind: 'binary', before: true, after: true, beforeSize: 1, afterSize: 9000 });
  });

  it('refuses files above the size limit', () => {
    expect(diffFile(enc('small'), new Uint8Array(11).fill(0x61), { maxBytes: 10 })).toEqual({
      kind: 'oversized',
      before: true,
      after: true,
      beforeSize: 5,
      afterSize: 11,
      limit: 10,
    });
  });

  it('keeps bytes that are not UTF-8 exact by decoding one char per byte', () => {
    const before = Uint8Array.from([0x61, 0x0a, 0xff, 0xfe, 0x0a]);
    const after = Uint8Array.from([0x61, 0x0a, 0x80, 0x0a]);
    const d = text(diffFile(before, after));
    expect(d.encoding).toBe('latin1');
    const removed = d.hunks[0]!.lines.find((l) => l.startsWith('-'))!.slice(1);
    expect(Uint8Array.from(removed, (c) => c.charCodeAt(0))).toEqual(Uint8Array.from([0xff, 0xfe]));
  });

  it('agrees with git diff --numstat and -U3 on files with CRLF, UTF-8 and missing final newlines', () => {
    const pairs: [string, string][] = [
      ['a\r\nb\r\nc\r\n', 'a\r\nb\nc\r\n'],
      ['ünïcödé\nzwei\n', 'ünïcödé\nzwei'],
      ['', 'new\n'],
      ['x', 'y'],
      ['same\n', 'same\n'],
      ['1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n', '1\n2\n3\n4\n5\n6\n7\n8\n9\n10'],
    ];
    const latin1 = pairs.map(([x, y]) => [Buffer.from(x).toString('latin1'), Buffer.from(y).toString('latin1')] as [string, string]);
    const git = gitDiffPairs(latin1);
    pairs.forEach(([x, y], i) => {
      const d = text(diffFile(enc(x), enc(y)));
      expect({ i, added: d.added, removed: d.removed }).toEqual({ i, added: git[i]!.added, removed: git[i]!.removed });
      const ours = d.hunks.map((h) => [formatHunkHeader(h), ...h.lines.map((l) => Buffer.from(l).toString('latin1'))]);
      expect(ours).toEqual(git[i]!.hunks);
    });
  });

  it('never goes coarse on a heavily rewritten file of about 1 MiB', () => {
    const rand = prng(11);
    const line = () => `${Math.floor(rand() * 4)}${'.'.repeat(Math.floor(rand() * 40))}\n`;
    let x = '';
    while (x.length < 1000_000) x += line();
    let y = '';
    while (y.length < 1000_000) y += line();
    const d = text(diffFile(enc(x), enc(y)));
    expect(d.coarse).toBe(false);
    expect(d.added + d.removed).toBeGreaterThan(0);
  });

  it('goes coarse above 1 MiB only when the changed region exceeds the bound', () => {
    const big = enc('line\n'.repeat(250_000));
    const other = enc('other\n'.repeat(250_000));
    const d = text(diffFile(big, other, { maxMiddleLines: 1000 }));
    expect(d).toMatchObject({ coarse: true, added: 250_000, removed: 250_000 });
    expect(d.hunks).toHaveLength(1);
    const small = big.slice();
    small[5] = 0x4c; // 'L' at the start of line 2
    expect(text(diffFile(big, small, { maxMiddleLines: 1000 }))).toMatchObject({ coarse: false, added: 1, removed: 1 });
  });

  it('rejects bad arguments with precise errors', () => {
    expect(() => diffFile(undefined, undefined)).toThrow(/at least one side/);
    expect(() => diffFile('text' as unknown as Uint8Array, undefined)).toThrow(/before must be a Uint8Array/);
    expect(() => diffFile(enc('a'), enc('b'), { context: -1 })).toThrow(/context must be a non-negative integer/);
    expect(() => diffFile(enc('a'), enc('b'), { algorithm: 'patience' as 'myers' })).toThrow(/algorithm/);
  });
});
