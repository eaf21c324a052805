// Histogram's anchor scan runs as WebAssembly under Node and as JavaScript in the viewer: both give the same diff,
// including where the work allowance runs out and the file goes to Myers.
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ByteLines, internByteLines } from '../../diff/byte-lines.js';
import { createDiffContext } from '../../diff/diff-context.js';
import { histogramDiff } from '../../diff/histogram.js';
import { histogramScan, useHistogramWasm } from '../../diff/histogram-wasm.js';
import { diffLines, type LineChange } from '../../diff/line-diff.js';
import { prng } from './git-oracle.js';

const text = (ls: string[]): Buffer => Buffer.from(ls.map((l) => `${l}\n`).join(''), 'latin1');

/** Lines from `distinct` values; a small alphabet makes every line frequent (chains, counts past 64, Myers regions). */
function lines(rand: () => number, n: number, distinct: number): string[] {
  return Array.from({ length: n }, () => `${Math.floor(rand() * distinct)}`);
}

function pairs(): [Buffer, Buffer][] {
  const rand = prng(22);
  const out: [Buffer, Buffer][] = [];
  for (let t = 0; t < 40; t++) {
    const n = 50 + Math.floor(rand() * 1000);
    const distinct = [3, 20, 100, 1000, 100000][t % 5] as number;
    const a = lines(rand, n, distinct);
    const b = [...a];
    for (let e = 0; e < 1 + Math.floor(rand() * 40); e++) {
      const at = Math.floor(rand() * (b.length + 1));
      const len = 1 + Math.floor(rand() * 20);
      const r = rand();
      // Insertions, deletions, replacements, and a block moved elsewhere.
      if (r < 0.3) b.splice(at, 0, ...lines(rand, len, distinct));
      else if (r < 0.55) b.splice(at, len);
      else if (r < 0.8) b.splice(at, len, ...lines(rand, len, distinct));
      else b.splice(Math.floor(rand() * b.length), 0, ...b.splice(at, len));
    }
    out.push([text(a), text(b)]);
  }
  // One line in two or three changed: anchors so dense that the allowance runs out past a few hundred lines.
  // Sizes either side of where it does, where the scan's every step counts.
  for (let n = 240; n <= 560; n += 20) {
    for (const every of [2, 3]) {
      const a = Array.from({ length: n }, (_, i) => `line ${i}`);
      out.push([text(a), text(a.map((l, i) => (i % every === 1 ? `${l} changed` : l)))]);
    }
  }
  return out;
}

/** The changes, and histogram's own outcome: whether it finished within its allowance, the work it counted, its marks. */
function diff(x: Buffer, y: Buffer): { changes: LineChange[]; histogram: { done: boolean; work: number }; marks: string } {
  const a = new ByteLines(x, 'latin1');
  const b = new ByteLines(y, 'latin1');
  const { a: ids1, b: ids2, idCount } = internByteLines(a, b);
  const ctx = createDiffContext(ids1, ids2, idCount);
  const histogram = histogramDiff(ctx);
  return { changes: diffLines(a, b), histogram, marks: `${ctx.changedA.join('')}|${ctx.changedB.join('')}` };
}

describe('histogram scan', () => {
  afterEach(() => useHistogramWasm(true));

  it('gives the same changes and counts the same work in WebAssembly as in JavaScript, within and past the work allowance', () => {
    expect(histogramScan()).not.toBeNull();
    const cases = pairs();
    const wasm = cases.map(([x, y]) => diff(x, y));
    useHistogramWasm(false);
    expect(histogramScan()).toBeNull();
    const differing = cases.map(([x, y], i) => (isDeepStrictEqual(diff(x, y), wasm[i]) ? -1 : i)).filter((i) => i >= 0);
    expect(differing).toEqual([]);
    // Both sides of the allowance were taken.
    expect(wasm.some((d) => d.histogram.done)).toBe(true);
    expect(wasm.some((d) => !d.histogram.done)).toBe(true);
  });
});
