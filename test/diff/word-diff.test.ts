import { describe, expect, it } from 'vitest';
import { wordDiff } from '../../diff/word-diff.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pick = (s: string, ranges: { start: number; end: number }[]) => ranges.map((r) => s.slice(r.start, r.end));

describe('wordDiff', () => {
  it('highlights the changed word only', () => {
    const a = 'const total = price * count;';
    const b = 'const total = price * quantity;';
    const d = wordDiff(a, b);
    expect(pick(a, d.before)).toEqual(['count']);
    expect(pick(b, d.after)).toEqual(['quantity']);
  });

  it('reports pure insertions with an empty side', () => {
    const a = 'call(a, b)';
    const b = 'call(a, extra, b)';
    const d = wordDiff(a, b);
    expect(d.before).toEqual([]);
    expect(pick(b, d.after)).toEqual(['extra, ']);
  });

  it('joins changes separated only by whitespace', () => {
    const d = wordDiff('one two three', 'uno dos three');
    expect(pick('uno dos three', d.after)).toEqual(['uno dos']);
  });

  it('handles equal, empty and non-ASCII lines', () => {
    expect(wordDiff('same', 'same')).toEqual({ before: [], after: [] });
    expect(wordDiff('', 'new')).toEqual({ before: [], after: [{ start: 0, end: 3 }] });
    const d = wordDiff('größe = 1', 'größe = 2');
    expect(pick('größe = 2', d.after)).toEqual(['2']);
  });

  it('marks whole lines when they are too long to diff', () => {
    expect(wordDiff('a'.repeat(20), 'b'.repeat(20), { maxLength: 10 })).toEqual({
      before: [{ start: 0, end: 20 }],
      after: [{ start: 0, end: 20 }],
    });
  });

  it('imports nothing from Node, so the viewer can bundle it', () => {
    const dir = fileURLToPath(new URL('../../diff/', import.meta.url));
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('word-diff.ts');
    for (const f of files) {
      const src = readFileSync(join(dir, f), 'utf8');
      expect({ f, node: /from 'node:|require\(/.test(src) }).toEqual({ f, node: false });
    }
  });
});
