// git's Myers (the fallback of histogram on repetitive text, and plain `git diff`) on inputs that take its
// every branch: the cost bound, the snake heuristic, discarded lines, both parities of the middle diagonals.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ByteLines } from '../../diff/byte-lines.js';
import { countLineChanges, diffLines } from '../../diff/line-diff.js';
import { myersRounds, useMyersWasm } from '../../diff/myers-wasm.js';
import { buildHunks, formatHunkHeader } from '../../server/diff/hunks.js';
import { gitDiffPairs, prng } from './git-oracle.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/** Our hunks as git prints them, and our counts, from the byte path the server uses. */
function ours(x: string, y: string, algorithm: 'histogram' | 'myers') {
  const a = new ByteLines(Buffer.from(x, 'latin1'), 'latin1');
  const b = new ByteLines(Buffer.from(y, 'latin1'), 'latin1');
  const changes = diffLines(a, b, { algorithm });
  const hunks = buildHunks(a, b, changes, 3).map((h) => [formatHunkHeader(h), ...h.lines]);
  return { counts: countLineChanges(changes), hunks };
}

/** Lines drawn from `distinct` values, some far more often than others when `skew` > 1. */
function lines(rand: () => number, n: number, distinct: number, skew: number): string[] {
  return Array.from({ length: n }, () => `${Math.floor(rand() ** skew * distinct)}${'.'.repeat(Math.floor(rand() * 3))}`);
}

/** A copy of `base` with runs replaced, inserted and deleted; runs of equal lines survive between the edits. */
function edited(rand: () => number, base: string[], distinct: number, rate: number): string[] {
  const out = [...base];
  const edits = Math.max(1, Math.floor(out.length * rate));
  for (let e = 0; e < edits; e++) {
    const pos = Math.floor(rand() * (out.length + 1));
    const len = 1 + Math.floor(rand() * 12);
    const r = rand();
    if (r < 0.35) out.splice(pos, 0, ...lines(rand, len, distinct, 1));
    else if (r < 0.7) out.splice(pos, len);
    else out.splice(pos, len, ...lines(rand, len, distinct, 1), `unique ${e}`);
  }
  return out;
}

/** A copy of `base` where runs of 22 to 40 equal lines alternate with rewritten stretches: long snakes across a costly box. */
function rewrittenBetweenRuns(rand: () => number, base: string[], distinct: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < base.length; ) {
    const keep = 22 + Math.floor(rand() * 19);
    out.push(...base.slice(i, i + keep));
    i += keep;
    const drop = Math.floor(rand() * 10);
    out.push(...lines(rand, Math.floor(rand() * 10), distinct, 1));
    i += drop;
  }
  return out;
}

const text = (ls: string[]): string => ls.map((l) => `${l}\n`).join('');

function myersHeavyPairs(): [string, string][] {
  const rand = prng(2026);
  const pairs: [string, string][] = [];
  for (let t = 0; t < 30; t++) {
    const n = 300 + Math.floor(rand() * 4000);
    const distinct = [4, 16, 60, 160, 400, 2000, 9][t % 7] as number;
    const skew = t % 3 === 0 ? 3 : 1;
    const a = lines(rand, n, distinct, skew);
    const kind = t % 5;
    // Independent files (cost bound), light and heavy edits (discards), sides of different lengths, long snakes.
    const b =
      kind === 0
        ? lines(rand, n + Math.floor(rand() * 40) - 20, distinct, skew)
        : kind === 1
          ? edited(rand, a, distinct, 0.01)
          : kind === 2
            ? edited(rand, a, distinct, 0.08)
            : kind === 3
              ? [...lines(rand, Math.floor(rand() * 50), distinct, skew), ...edited(rand, a, distinct, 0.03)]
              : rewrittenBetweenRuns(rand, a, distinct);
    pairs.push([text(a), text(b)]);
  }
  // Past 65,533 lines in all the cost bound doubles to 512, above the snake heuristic's 256 edits: only then can it split.
  for (const distinct of [400, 5000]) {
    const a = lines(rand, 34000, distinct, 1);
    pairs.push([text(a), text(rewrittenBetweenRuns(rand, a, distinct))]);
  }
  return pairs;
}

describe('Myers agreement with git', () => {
  const pairs = myersHeavyPairs();
  // The search rounds run as WebAssembly where it is available, else as JavaScript (a page that forbids WebAssembly): both must agree with git.
  const runs = [
    { algorithm: 'myers', wasm: true },
    { algorithm: 'histogram', wasm: true },
    { algorithm: 'myers', wasm: false },
  ] as const;
  for (const { algorithm, wasm } of runs) {
    it(`matches git --diff-algorithm=${algorithm} hunk for hunk on repetitive files of up to 34,000 lines, ${wasm ? 'searching in WebAssembly' : 'searching in JavaScript'}`, () => {
      useMyersWasm(wasm);
      if (wasm) expect(myersRounds()).not.toBeNull();
      const git = gitDiffPairs(pairs, { algorithm });
      // One assertion over all pairs: a failure lists the pairs that differ.
      const differing: { i: number; ours: unknown; git: unknown }[] = [];
      pairs.forEach(([x, y], i) => {
        const got = ours(x, y, algorithm);
        const theirs = git[i]!;
        const want = { counts: { added: theirs.added, removed: theirs.removed }, hunks: theirs.hunks };
        if (!isDeepStrictEqual(got, want)) differing.push({ i, ours: got.counts, git: want.counts });
      });
      useMyersWasm(true);
      expect(differing).toEqual([]);
    });
  }
});
