import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RENAME_THRESHOLD, similarity } from '../../server/diff/similarity.js';
import { prng, runGit, scratchDir } from './git-oracle.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

function codeText(rand: () => number, lines: number): string {
  let s = '';
  for (let i = 0; i < lines; i++) s += `  statement_${Math.floor(rand() * 1e6)}(${i});\n`;
  return s;
}

/** Edits a fraction of the lines of a text. */
function editLines(rand: () => number, text: string, fraction: number): string {
  return text
    .split('\n')
    .map((l) => (l && rand() < fraction ? `  rewritten_${Math.floor(rand() * 1e6)}();` : l))
    .join('\n');
}

describe('similarity', () => {
  it('is 1 for identical content and 0 against empty content', () => {
    expect(similarity('a\nb\n', 'a\nb\n')).toBe(1);
    expect(similarity('', 'a\n')).toBe(0);
  });

  it('ignores CR before LF in text, as git does', () => {
    expect(similarity('a line\nanother line\n', 'a line\r\nanother line\r\n')).toBeGreaterThan(0.9);
  });

  it('scores clearly different files below the rename threshold', () => {
    const rand = prng(4);
    expect(similarity(codeText(rand, 100), codeText(rand, 100))).toBeLessThan(0.1);
    expect(similarity('x\n'.repeat(10), 'y\n'.repeat(200))).toBeLessThan(RENAME_THRESHOLD);
  });

  it('agrees with the rename scores git diff -M reports', () => {
    const rand = prng(8);
    const { dir, dispose } = scratchDir();
    try {
      const repo = join(dir, 'repo');
      mkdirSync(repo);
      const git = (...args: string[]) => {
        const r = runGit(args, repo, dir);
        if (r.status !== 0) throw new Error(r.stderr);
        return r.stdout;
      };
      git('init', '-q');
      git('config', 'user.email', 'test@example.com');
      git('config', 'user.name', 'test');
      const originals: string[] = [];
      const edited: string[] = [];
      const fractions = [0, 0.05, 0.2, 0.35, 0.45, 0.5, 0.55, 0.65, 0.8];
      fractions.forEach((f, i) => {
        const text = codeText(rand, 40 + i * 7) + (i % 2 ? 'tail without newline' : '');
        originals.push(text);
        edited.push(f === 0 ? `${text}\nextra\n` : editLines(rand, text, f));
        writeFileSync(join(repo, `old${i}.txt`), text);
      });
      git('add', '-A');
      git('commit', '-q', '-m', 'base');
      fractions.forEach((_, i) => {
        rmSync(join(repo, `old${i}.txt`));
        writeFileSync(join(repo, `new${i}.txt`), edited[i] as string);
      });
      git('add', '-A');
      // Pairs are found by git with a low threshold so every score is visible.
      const out = git('diff', '--cached', '-M1%', '--name-status');
      const scores = new Map<number, number>();
      for (const line of out.trim().split('\n')) {
        const m = /^R(\d+)\told(\d+)\.txt\tnew(\d+)\.txt$/.exec(line);
        if (m && m[2] === m[3]) scores.set(Number(m[2]), Number(m[1]));
      }
      let checked = 0;
      fractions.forEach((_, i) => {
        const ours = similarity(originals[i] as string, edited[i] as string);
        const theirs = scores.get(i);
        if (theirs === undefined) return;
        checked++;
        expect({ i, percent: Math.floor(ours * 100) }).toEqual({ i, percent: theirs });
        expect(ours >= RENAME_THRESHOLD).toBe(theirs >= 50);
      });
      expect(checked).toBeGreaterThanOrEqual(6);
    } finally {
      dispose();
    }
  });
});
