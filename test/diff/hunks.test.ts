import { isDeepStrictEqual } from 'node:util';
import { applyPatch, formatPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { buildHunks, countHunkLines, formatHunkHeader, type DiffHunk } from '../../server/diff/hunks.js';
import { ByteLines } from '../../diff/byte-lines.js';
import { countLineChanges, diffLines, diffTextLines } from '../../diff/line-diff.js';
import { gitDiffPairs, prng, randomEdit, randomText } from './git-oracle.js';
import { codeLikeCorpus } from './corpus.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/** Diffs through both the string path and the byte path, which must agree. */
function ourDiff(x: string, y: string, algorithm: 'histogram' | 'myers' = 'histogram', context = 3) {
  const d = diffTextLines(x, y, { algorithm });
  const hunks = buildHunks(d.oldLines, d.newLines, d.changes, context);
  const a = new ByteLines(Buffer.from(x, 'latin1'), 'latin1');
  const b = new ByteLines(Buffer.from(y, 'latin1'), 'latin1');
  const byteChanges = diffLines(a, b, { algorithm });
  // Checked without `expect`: thousands of calls per test, where one `expect` costs more than the diff.
  if (!isDeepStrictEqual(byteChanges, d.changes)) expect(byteChanges).toEqual(d.changes);
  const byteHunks = buildHunks(a, b, byteChanges, context);
  if (!isDeepStrictEqual(byteHunks, hunks)) expect(byteHunks).toEqual(hunks);
  return { hunks, counts: countLineChanges(d.changes) };
}

function asGitText(hunks: DiffHunk[]): string[][] {
  return hunks.map((h) => [formatHunkHeader(h), ...h.lines]);
}

describe('buildHunks', () => {
  it('prints a small change with three lines of context', () => {
    const x = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const y = 'a\nb\nc\nd\nE\nf\ng\nh\n';
    expect(ourDiff(x, y).hunks).toEqual([{ oldStart: 2, oldLines: 7, newStart: 2, newLines: 7, lines: [' b', ' c', ' d', '-e', '+E', ' f', ' g', ' h'] }]);
  });

  it('marks a last line without newline as git does', () => {
    const { hunks } = ourDiff('a\nb\n', 'a\nb');
    expect(hunks[0]?.lines).toEqual([' a', '-b', '+b', '\\ No newline at end of file']);
    const added = ourDiff('', 'x');
    expect(added.hunks).toEqual([{ oldStart: 1, oldLines: 0, newStart: 1, newLines: 1, lines: ['+x', '\\ No newline at end of file'] }]);
    expect(formatHunkHeader(added.hunks[0] as DiffHunk)).toBe('@@ -0,0 +1 @@');
  });

  it('merges hunks whose contexts touch and splits them when they do not', () => {
    const base = Array.from({ length: 20 }, (_, i) => `l${i}\n`);
    const touch = [...base];
    touch[3] = 'X\n';
    touch[10] = 'Y\n'; // six equal lines between: one hunk
    expect(ourDiff(base.join(''), touch.join('')).hunks).toHaveLength(1);
    const apart = [...base];
    apart[3] = 'X\n';
    apart[11] = 'Y\n'; // seven equal lines between: two hunks
    expect(ourDiff(base.join(''), apart.join('')).hunks).toHaveLength(2);
  });

  it('rejects a negative context', () => {
    expect(() => buildHunks([], [], [], -1)).toThrow(RangeError);
  });

  it('is accepted by jsdiff to format and apply the patch', () => {
    const rand = prng(99);
    const alphabet = ['a', 'b', 'c', 'd'];
    for (let t = 0; t < 200; t++) {
      const x = randomText(rand, alphabet, 30);
      const y = randomEdit(rand, x, alphabet);
      const { hunks } = ourDiff(x, y);
      const patch = formatPatch({ oldFileName: 'a', newFileName: 'b', oldHeader: undefined, newHeader: undefined, hunks });
      expect(applyPatch(x, patch)).toBe(y);
    }
  });
});

describe('agreement with git diff --histogram', () => {
  it('matches git hunk for hunk on code-like files', () => {
    const pairs = codeLikeCorpus(42, 60);
    const git = gitDiffPairs(pairs);
    const differing: { i: number; ours: unknown; git: unknown }[] = [];
    pairs.forEach(([x, y], i) => {
      const ours = ourDiff(x, y);
      const theirs = git[i]!;
      const got = { counts: ours.counts, hunks: asGitText(ours.hunks) };
      const want = { counts: { added: theirs.added, removed: theirs.removed }, hunks: theirs.hunks };
      if (!isDeepStrictEqual(got, want)) differing.push({ i, ours: got, git: want });
    });
    expect(differing).toEqual([]);
  });

  for (const alphabetSize of [2, 3, 6]) {
    it(`matches git counts and hunks on random texts over ${alphabetSize} lines`, () => {
      const rand = prng(alphabetSize * 31);
      const alphabet = Array.from({ length: alphabetSize }, (_, i) => ' '.repeat(i % 3) + String.fromCharCode(97 + i));
      const pairs: [string, string][] = [];
      for (let t = 0; t < 300; t++) {
        const x = randomText(rand, alphabet, 60);
        pairs.push([x, rand() < 0.7 ? randomEdit(rand, x, alphabet) : randomText(rand, alphabet, 60)]);
      }
      const git = gitDiffPairs(pairs);
      // One assertion over all pairs (the differing ones, with their numbers): hundreds of `expect`s cost more than the diffs.
      const differing: { i: number; ours: unknown; git: unknown }[] = [];
      pairs.forEach(([x, y], i) => {
        const ours = ourDiff(x, y);
        const theirs = git[i]!;
        const got = { counts: ours.counts, hunkLines: countHunkLines(ours.hunks), hunks: asGitText(ours.hunks) };
        const counts = { added: theirs.added, removed: theirs.removed };
        const want = { counts, hunkLines: counts, hunks: theirs.hunks };
        if (!isDeepStrictEqual(got, want)) differing.push({ i, ours: got, git: want });
      });
      expect(differing).toEqual([]);
    });
  }

  it('matches git --diff-algorithm=myers and other context sizes', () => {
    const rand = prng(5);
    const alphabet = ['a', 'b', 'c', '', '  d', '}'];
    const pairs: [string, string][] = [];
    for (let t = 0; t < 200; t++) {
      const x = randomText(rand, alphabet, 80);
      pairs.push([x, randomEdit(rand, x, alphabet)]);
    }
    for (const [algorithm, context] of [
      ['myers', 3],
      ['histogram', 0],
      ['histogram', 1],
      ['myers', 5],
    ] as const) {
      const git = gitDiffPairs(pairs, { algorithm, context });
      const differing: { i: number; ours: string[][]; git: string[][] }[] = [];
      pairs.forEach(([x, y], i) => {
        const ours = asGitText(ourDiff(x, y, algorithm, context).hunks);
        if (!isDeepStrictEqual(ours, git[i]!.hunks)) differing.push({ i, ours, git: git[i]!.hunks });
      });
      expect({ algorithm, context, differing }).toEqual({ algorithm, context, differing: [] });
    }
  });

  it('matches git on large random files where the cost heuristics kick in', () => {
    const rand = prng(3);
    const pairs: [string, string][] = [];
    for (const [n, k] of [
      [3000, 4],
      [5000, 3],
      [8000, 50],
    ] as const) {
      const make = () => Array.from({ length: n }, () => `${Math.floor(rand() * k)}\n`).join('');
      pairs.push([make(), make()]);
    }
    for (const algorithm of ['histogram', 'myers'] as const) {
      const git = gitDiffPairs(pairs, { algorithm });
      pairs.forEach(([x, y], i) => {
        const ours = ourDiff(x, y, algorithm);
        expect(ours.counts).toEqual({ added: git[i]!.added, removed: git[i]!.removed });
        expect(asGitText(ours.hunks)).toEqual(git[i]!.hunks);
      });
    }
  });
});
