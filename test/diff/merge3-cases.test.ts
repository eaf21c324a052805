/**
 * The three-way merge behind reverting a turn in a file edited since: where
 * it reports a conflict, the lines it names on each side are the ones
 * `git merge-file` puts between its conflict markers.
 */
import { describe, expect, it } from 'vitest';
import { merge3 } from '../../server/diff/merge3.js';
import { gitMergeFiles, prng, randomEdit, randomText } from './git-oracle.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

/** The conflicts in what `git merge-file -p ours base theirs` printed: each side's lines between the markers. */
function conflictsIn(output: string): { ours: string; theirs: string }[] {
  const out: { ours: string; theirs: string }[] = [];
  let side: 'ours' | 'theirs' | undefined;
  for (const line of output.split(/(?<=\n)/)) {
    if (line.startsWith('<<<<<<< ')) {
      out.push({ ours: '', theirs: '' });
      side = 'ours';
    } else if (line === '=======\n' && side === 'ours') side = 'theirs';
    else if (line.startsWith('>>>>>>> ') && side === 'theirs') side = undefined;
    else if (side) out[out.length - 1]![side] += line;
  }
  return out;
}

const lines = (text: string) => text.split(/(?<=\n)/).filter((l) => l !== '');
const slice = (text: string, range: { start: number; end: number }) => lines(text).slice(range.start, range.end).join('');
const withFinalNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);

/**
 * For each case, the lines merge3 names on each side of each conflict are
 * the ones `git merge-file` puts between its markers (all of git's runs
 * started at once). Returns each case's number of conflicts.
 */
function expectConflictsAsGitEach(cases: readonly (readonly [base: string, ours: string, theirs: string])[], label: (i: number) => string): number[] {
  const git = gitMergeFiles(cases);
  return cases.map(([base, ours, theirs], i) => {
    const merged = merge3(base, ours, theirs);
    const named = merged.conflicts.map((c) => ({ ours: slice(ours, c.oursRange), theirs: slice(theirs, c.theirsRange) }));
    expect({ label: label(i), conflicts: named }).toEqual({ label: label(i), conflicts: conflictsIn(git[i]!.output) });
    for (const c of merged.conflicts) {
      expect(c.oursRange.end, label(i)).toBeGreaterThanOrEqual(c.oursRange.start);
      expect(c.theirsRange.end, label(i)).toBeGreaterThanOrEqual(c.theirsRange.start);
    }
    return merged.conflicts.length;
  });
}

function expectConflictsAsGit(base: string, ours: string, theirs: string, label: string): number {
  return expectConflictsAsGitEach([[base, ours, theirs]], () => label)[0]!;
}

describe('merge3 conflicts', () => {
  it('name the disputed lines on each side', () => {
    const base = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';
    const ours = 'a\nB1\nc\nd\ne\nf\ng\nH\ni\nj\n';
    const theirs = 'a\nB2\nB3\nc\nd\ne\nf\ng\nh\ni\nJ\n';
    expect(merge3(base, ours, theirs)).toEqual({ clean: false, conflicts: [{ oursRange: { start: 1, end: 2 }, theirsRange: { start: 1, end: 3 } }] });
    expectConflictsAsGit(base, ours, theirs, 'one conflict, a change of ours after it and of theirs after that');
  });

  it('shrink to the lines that really differ, and stay apart when real text lies between', () => {
    const base = 'k\n1\n2\n3\n4\n5\n6\n7\n8\nz\n';
    const ours = 'k\nX\n2\n3\nalpha\nbeta\n6\n7\nY\nz\n';
    const theirs = 'k\nQ\n2\n3\nalpha\nbeta\n6\n7\nR\nz\n';
    expect(expectConflictsAsGit(base, ours, theirs, 'two conflicts')).toBe(2);
    // Between them only punctuation: one conflict.
    expect(expectConflictsAsGit('k\n1\n}\n}\n}\n}\n2\nz\n', 'k\nX\n}\n}\n}\n}\nY\nz\n', 'k\nQ\n}\n}\n}\n}\nR\nz\n', 'joined')).toBe(1);
    // Real text, but only three lines of it: one conflict.
    expect(expectConflictsAsGit('k\n1\na\nb\nc\n2\nz\n', 'k\nX\na\nb\nc\nY\nz\n', 'k\nQ\na\nb\nc\nR\nz\n', 'three lines')).toBe(1);
  });

  it('leave out the lines both sides changed alike', () => {
    const base = 'a\nb\nc\nd\ne\n';
    const ours = 'a\nSAME\nOURS\nd\ne\n';
    const theirs = 'a\nSAME\nTHEIRS\nd\ne\n';
    expect(merge3(base, ours, theirs).conflicts).toEqual([{ oursRange: { start: 2, end: 3 }, theirsRange: { start: 2, end: 3 } }]);
    expectConflictsAsGit(base, ours, theirs, 'common prefix');
  });

  it('are reported for an insertion on both sides at the end of the file', () => {
    expect(merge3('a\n', 'a\nours\n', 'a\ntheirs\nmore\n').conflicts).toEqual([{ oursRange: { start: 1, end: 2 }, theirsRange: { start: 1, end: 3 } }]);
    expect(merge3('a\nb\n', 'x\na\nb\nours\n', 'a\nb\ntheirs\n').conflicts).toEqual([{ oursRange: { start: 3, end: 4 }, theirsRange: { start: 2, end: 3 } }]);
    expect(merge3('a\nb\n', 'a\nb\nours\n', 'x\na\nb\ntheirs\n').conflicts).toEqual([{ oursRange: { start: 2, end: 3 }, theirsRange: { start: 3, end: 4 } }]);
  });

  for (const alphabetSize of [2, 4, 8]) {
    it(`agree with git merge-file's markers on random edits over ${alphabetSize} lines`, () => {
      const rand = prng(900 + alphabetSize);
      const alphabet = Array.from({ length: alphabetSize }, (_, i) => (i % 3 === 0 ? '}' : `line${i}`));
      const cases: [string, string, string][] = [];
      for (let n = 0; n < 40; n++) {
        const base = withFinalNewline(randomText(rand, alphabet, 30));
        const ours = withFinalNewline(randomEdit(rand, base, alphabet));
        const theirs = withFinalNewline(randomEdit(rand, base, alphabet));
        cases.push([base, ours, theirs]);
      }
      const conflicting = expectConflictsAsGitEach(cases, (n) => `random ${n}`).filter((count) => count > 0).length;
      expect(conflicting).toBeGreaterThan(5);
    });
  }
});

describe('merge3 clean results', () => {
  it('take the side that changed when only one did', () => {
    expect(merge3('a\nb\n', 'a\nb\n', 'a\nB\n')).toEqual({ clean: true, result: 'a\nB\n', conflicts: [] });
    expect(merge3('a\nb\n', 'a\nB\n', 'a\nb\n')).toEqual({ clean: true, result: 'a\nB\n', conflicts: [] });
  });

  it('keep changes of both sides far apart, in order, with the lines between', () => {
    const base = '1\n2\n3\n4\n5\n6\n7\n8\n9\n';
    expect(merge3(base, '1\n2\n3\n4\n5\n6\n7\n8\nnine\n', 'one\n2\n3\n4\n5\n6\n7\n8\n9\n').result).toBe('one\n2\n3\n4\n5\n6\n7\n8\nnine\n');
    expect(merge3(base, 'one\n2\n3\n4\n5\n6\n7\n8\n9\n', '1\n2\n3\n4\n5\n6\n7\n8\nnine\n').result).toBe('one\n2\n3\n4\n5\n6\n7\n8\nnine\n');
    expect(merge3(base, '1\n2\nthree\n4\n5\n6\n7\n8\n9\n', '1\n2\n3\n4\n5\n6\nseven\nextra\n8\n9\n').result).toBe('1\n2\nthree\n4\n5\n6\nseven\nextra\n8\n9\n');
    expect(merge3(base, '1\n2\n3\n4\n5\n6\nseven\nextra\n8\n9\n', '1\n2\nthree\n4\n5\n6\n7\n8\n9\n').result).toBe('1\n2\nthree\n4\n5\n6\nseven\nextra\n8\n9\n');
    expect(merge3(base, '1\n2\n4\n5\n6\n7\n8\n9\n', '1\n2\n3\n4\n5\n6\n7\n9\n').result).toBe('1\n2\n4\n5\n6\n7\n9\n');
  });

  it('take a change made on both sides, and a side’s changes around it', () => {
    const base = '1\n2\n3\n4\n5\n6\n7\n8\n9\n';
    expect(merge3(base, 'one\n2\n3\n4\nfive\n6\n7\n8\n9\n', '1\n2\n3\n4\nfive\n6\n7\n8\nnine\n').result).toBe('one\n2\n3\n4\nfive\n6\n7\n8\nnine\n');
  });

  it('name which input is not a string', () => {
    expect(() => merge3(1 as unknown as string, 'a', 'b')).toThrow(new TypeError('merge3: base must be a string'));
    expect(() => merge3('a', 'b', undefined as unknown as string)).toThrow(new TypeError('merge3: theirs must be a string'));
  });
});
