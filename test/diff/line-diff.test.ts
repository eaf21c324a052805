import { describe, expect, it } from 'vitest';
import { diffLines, diffTextLines, applyLineChanges, countLineChanges, type LineChange } from '../../diff/line-diff.js';
import { splitLines } from '../../diff/lines.js';
import { ByteLines } from '../../diff/byte-lines.js';
import { prng, randomEdit, randomText } from './git-oracle.js';

/** Checks an edit script fully: regions ordered, equal lines really equal, applying it to A gives B. */
function expectValidScript(a: string[], b: string[], changes: LineChange[]): void {
  let i = 0;
  let j = 0;
  for (const c of changes) {
    expect(c.oldStart).toBeGreaterThanOrEqual(i);
    expect(c.oldStart - i).toBe(c.newStart - j);
    for (; i < c.oldStart; i++, j++) expect(a[i]).toBe(b[j]);
    expect(c.oldEnd - c.oldStart + (c.newEnd - c.newStart)).toBeGreaterThan(0);
    i = c.oldEnd;
    j = c.newEnd;
  }
  expect(a.length - i).toBe(b.length - j);
  for (; i < a.length; i++, j++) expect(a[i]).toBe(b[j]);
  expect(applyLineChanges(a, b, changes).join('')).toBe(b.join(''));
}

describe('splitLines', () => {
  it('keeps terminators so lines join back to the exact text', () => {
    for (const text of ['', 'a', 'a\n', 'a\nb', 'a\r\nb\r\n', '\n\n', 'x\ny\n\nz']) {
      expect(splitLines(text).join('')).toBe(text);
    }
    expect(splitLines('a\nb')).toEqual(['a\n', 'b']);
  });

  it('treats a last line without newline as different from the same line with one', () => {
    const d = diffTextLines('a\nb\n', 'a\nb');
    expect(d.changes).toEqual([{ oldStart: 1, oldEnd: 2, newStart: 1, newEnd: 2 }]);
  });
});

describe('diffLines', () => {
  it('finds nothing to change between equal inputs', () => {
    expect(diffLines(['a\n', 'b\n'], ['a\n', 'b\n'])).toEqual([]);
    expect(diffLines([], [])).toEqual([]);
  });

  it('handles one side empty', () => {
    expect(diffLines([], ['a\n'])).toEqual([{ oldStart: 0, oldEnd: 0, newStart: 0, newEnd: 1 }]);
    expect(diffLines(['a\n', 'b'], [])).toEqual([{ oldStart: 0, oldEnd: 2, newStart: 0, newEnd: 0 }]);
  });

  for (const algorithm of ['histogram', 'myers'] as const) {
    for (const alphabetSize of [2, 3, 5, 20]) {
      it(`produces a valid edit script on random inputs (${algorithm}, ${alphabetSize}-line alphabet)`, () => {
        const rand = prng(1000 + alphabetSize);
        const alphabet = Array.from({ length: alphabetSize }, (_, i) => String.fromCharCode(97 + i));
        for (let t = 0; t < 400; t++) {
          const x = randomText(rand, alphabet, 40);
          const y = rand() < 0.5 ? randomEdit(rand, x, alphabet) : randomText(rand, alphabet, 40);
          const d = diffTextLines(x, y, { algorithm });
          expectValidScript(d.oldLines, d.newLines, d.changes);
        }
      });
    }
  }

  it('stays valid on large inputs that trigger the cost bounds', () => {
    const rand = prng(7);
    const alphabet = Array.from({ length: 4 }, (_, i) => `line ${i}`);
    const a = Array.from({ length: 6000 }, () => `${alphabet[Math.floor(rand() * 4)]}\n`);
    const b = Array.from({ length: 6000 }, () => `${alphabet[Math.floor(rand() * 4)]}\n`);
    for (const algorithm of ['histogram', 'myers'] as const) {
      const changes = diffLines(a, b, { algorithm });
      expectValidScript(a, b, changes);
    }
  });

  it('stays valid when dense anchors exhaust the histogram work allowance', () => {
    const a = Array.from({ length: 10000 }, (_, i) => `line ${i}\n`);
    const b = a.map((l, i) => (i % 2 ? `changed ${i}\n` : l));
    const changes = diffLines(a, b);
    expectValidScript(a, b, changes);
    expect(countLineChanges(changes)).toEqual({ added: 5000, removed: 5000 });
  });

  it('counts added and removed lines', () => {
    const d = diffTextLines('a\nb\nc\n', 'a\nx\ny\nc\n');
    expect(countLineChanges(d.changes)).toEqual({ added: 2, removed: 1 });
  });
});

describe('ByteLines', () => {
  it('splits bytes into lines with the same boundaries as splitLines', () => {
    for (const text of ['', 'a', 'a\n', 'a\nb', 'a\r\nb\r\n', '\n\n', 'é\nü\n€']) {
      const lines = new ByteLines(new TextEncoder().encode(text));
      expect(lines.texts(0, lines.length)).toEqual(splitLines(text));
      expect(lines.length).toBe(splitLines(text).length);
    }
  });

  it('finds the same lines wherever the content starts in its buffer and however long its lines are', () => {
    // Lines are found four bytes at a time from the first word-aligned byte: every start offset and line length.
    const rand = prng(5);
    for (let t = 0; t < 200; t++) {
      const parts = Array.from({ length: Math.floor(rand() * 30) }, () => 'x\r'.repeat(Math.floor(rand() * 5)).slice(0, Math.floor(rand() * 9)));
      const text = parts.join('\n') + (rand() < 0.5 ? '\n' : '');
      const encoded = new TextEncoder().encode(text);
      const offset = t % 4;
      const buffer = new Uint8Array(encoded.length + 8);
      buffer.set(encoded, offset);
      const lines = new ByteLines(buffer.subarray(offset, offset + encoded.length));
      expect(lines.texts(0, lines.length)).toEqual(splitLines(text));
    }
  });

  it('decodes non-UTF-8 content one char per byte so it round-trips', () => {
    const bytes = Uint8Array.from([0x80, 0x9f, 0xff, 0x0a, 0x41]);
    const lines = new ByteLines(bytes, 'latin1');
    const texts = lines.texts(0, 2);
    expect(Uint8Array.from(texts.join(''), (c) => c.charCodeAt(0))).toEqual(bytes);
  });

  it('diffs byte lines exactly like string lines', () => {
    const rand = prng(17);
    const alphabet = ['a', 'b', 'abcd', 'abcdefgh', '', ' x'];
    for (let t = 0; t < 300; t++) {
      const x = randomText(rand, alphabet, 50);
      const y = randomEdit(rand, x, alphabet);
      const enc = new TextEncoder();
      const bytes = diffLines(new ByteLines(enc.encode(x)), new ByteLines(enc.encode(y)));
      expect(bytes).toEqual(diffTextLines(x, y).changes);
    }
  });

  it('diffs byte lines exactly like string lines when the new side inserts, removes and repeats lines', () => {
    // The new side's lines are first compared with the old side's along a diagonal that moves with insertions and removals.
    const rand = prng(23);
    const enc = new TextEncoder();
    for (let t = 0; t < 100; t++) {
      const old = Array.from({ length: 20 + Math.floor(rand() * 200) }, (_, i) => (rand() < 0.3 ? '}\n' : `line ${i}\n`));
      const next = [...old];
      for (let e = 0; e < 1 + Math.floor(rand() * 8); e++) {
        const pos = Math.floor(rand() * next.length);
        const r = rand();
        if (r < 0.3) next.splice(pos, 0, ...Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, k) => (k % 2 ? '}\n' : `new ${e} ${k}\n`)));
        else if (r < 0.6) next.splice(pos, 1 + Math.floor(rand() * 5));
        else if (r < 0.8) next.splice(pos, 0, ...old.slice(0, Math.floor(rand() * 6)));
        else next[pos] = old[Math.floor(rand() * old.length)] as string;
      }
      const x = old.join('');
      const y = next.join('');
      expect(diffLines(new ByteLines(enc.encode(x)), new ByteLines(enc.encode(y)))).toEqual(diffTextLines(x, y).changes);
    }
  });

  it('refuses to mix string and byte lines', () => {
    expect(() => diffLines(['a\n'], new ByteLines(new Uint8Array()))).toThrow(TypeError);
  });
});
