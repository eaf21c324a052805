import { describe, expect, it } from 'vitest';
import { merge3 } from '../../server/diff/merge3.js';
import { gitMergeFiles, prng, randomEdit, randomText } from './git-oracle.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/**
 * Merges every case with merge3 and with `git merge-file -p ours base theirs`
 * (all of git's runs started at once): the same verdict, the same number of
 * conflicts, and the same result when clean. Returns how many were clean.
 */
function expectSameAsGit(cases: readonly (readonly [base: string, ours: string, theirs: string])[], label: (i: number) => string): number {
  const git = gitMergeFiles(cases);
  let clean = 0;
  cases.forEach(([base, ours, theirs], i) => {
    const ours3 = merge3(base, ours, theirs);
    const theirsGit = git[i]!;
    expect({ label: label(i), clean: ours3.clean, conflicts: ours3.conflicts.length }).toEqual({
      label: label(i),
      clean: theirsGit.status === 0,
      conflicts: theirsGit.status,
    });
    if (ours3.clean) {
      expect({ label: label(i), result: ours3.result }).toEqual({ label: label(i), result: theirsGit.output });
      clean++;
    }
  });
  return clean;
}

describe('merge3', () => {
  it('combines changes to different lines', () => {
    const r = merge3('a\nb\nc\nd\ne\n', 'A\nb\nc\nd\ne\n', 'a\nb\nc\nd\nE\n');
    expect(r).toEqual({ clean: true, result: 'A\nb\nc\nd\nE\n', conflicts: [] });
  });

  it('accepts the same change made on both sides', () => {
    expect(merge3('a\nb\nc\n', 'a\nX\nc\n', 'a\nX\nc\n')).toEqual({ clean: true, result: 'a\nX\nc\n', conflicts: [] });
  });

  it('reports overlapping different changes as a conflict with both ranges', () => {
    const r = merge3('a\nb\nc\n', 'a\nours\nc\n', 'a\ntheirs\nmore\nc\n');
    expect(r.clean).toBe(false);
    expect(r.result).toBeUndefined();
    expect(r.conflicts).toEqual([{ oursRange: { start: 1, end: 2 }, theirsRange: { start: 1, end: 3 } }]);
  });

  it('reverts a turn in a file edited since, and refuses when the edits overlap', () => {
    const before = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n';
    const after = 'one\nTWO\nthree\nfour\nfive\nsix\nseven\n'; // the turn's change
    const current = 'one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\n'; // a later change
    expect(merge3(after, current, before)).toEqual({ clean: true, result: 'one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n', conflicts: [] });
    const overlapping = 'one\nTWO!\nthree\nfour\nfive\nsix\nseven\n';
    expect(merge3(after, overlapping, before).clean).toBe(false);
  });

  it('rejects non-string input', () => {
    expect(() => merge3('a', 1 as unknown as string, 'b')).toThrow(/ours must be a string/);
  });

  it('agrees with git merge-file on hand-written cases', () => {
    const cases: [string, string, string][] = [
      ['a\nb\nc\n', 'a\nB\nc\n', 'a\nb\nC\n'], // adjacent changes: git calls this a conflict
      ['a\nb\nc\nd\n', 'a\nB\nc\nd\n', 'a\nb\nc\nD\n'],
      ['a\nb\n', 'a\nb\nours\n', 'a\nb\ntheirs\n'],
      ['a\nb\n', 'a\nb\nsame\n', 'a\nb\nsame\n'],
      ['a\nb', 'a\nb\n', 'a\nb'],
      ['', 'x\n', ''],
      ['', 'x\n', 'y\n'],
      ['a\n', '', 'a\n'],
      ['1\n2\n3\n4\n5\n6\n', '1\nX\nY\n4\n5\n6\n', '1\nX\nZ\n4\n5\n6\n'],
      ['1\n2\n3\n4\n5\n6\n7\n8\n9\n', '1\nA\n3\n4\n5\n6\n7\nB\n9\n', '1\nA2\n3\n4\n5\n6\n7\nB2\n9\n'],
    ];
    expectSameAsGit(cases, (i) => `case ${i}`);
  });

  for (const alphabetSize of [2, 4, 8]) {
    it(`agrees with git merge-file on random edits over ${alphabetSize} lines`, () => {
      const rand = prng(500 + alphabetSize);
      const alphabet = Array.from({ length: alphabetSize }, (_, i) => (i % 3 === 0 ? '}' : `line${i}`));
      const cases: [string, string, string][] = [];
      for (let n = 0; n < 150; n++) {
        const base = randomText(rand, alphabet, 30);
        const ours = randomEdit(rand, base, alphabet);
        const theirs = rand() < 0.2 ? ours : randomEdit(rand, base, alphabet);
        cases.push([base, ours, theirs]);
      }
      const clean = expectSameAsGit(cases, (n) => `random ${n}`);
      // Both verdicts must be exercised.
      expect(clean).toBeGreaterThan(10);
      expect(clean).toBeLessThan(150);
    });
  }
});
