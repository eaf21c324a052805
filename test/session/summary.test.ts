import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { displayPath } from '../../server/session/display-path.js';
import { summarizeTurn } from '../../server/session/turn-summary.js';
import { ulid } from '../../server/ulid.js';

describe('displayPath', () => {
  const ctx = { workingDirectory: '/repo/app', repositoryRoot: '/repo', home: '/home/u' };

  it('is relative inside the working directory', () => {
    expect(displayPath('/repo/app/src/a.ts', ctx)).toBe('src/a.ts');
  });

  it('uses ../ for repository files above the working directory', () => {
    expect(displayPath('/repo/README.md', ctx)).toBe('../README.md');
  });

  it('uses ~ under the home directory and absolute paths elsewhere', () => {
    expect(displayPath('/home/u/.bashrc', ctx)).toBe('~/.bashrc');
    expect(displayPath('/etc/hosts', ctx)).toBe('/etc/hosts');
  });

  it('does not mistake a sibling with a common prefix for the working directory', () => {
    expect(displayPath('/repo/app2/x', { workingDirectory: '/repo/app', home: '/h' })).toBe('/repo/app2/x');
  });

  it('defaults home to the user home', () => {
    expect(displayPath(join(homedir(), 'notes.txt'), { workingDirectory: '/nowhere' })).toBe('~/notes.txt');
  });
});

describe('summarizeTurn', () => {
  it('sorts by UTF-16 code units, caps the list and totals every file', () => {
    const files = ['b.ts', 'B.ts', 'a/é.ts', 'a/z.ts', '\u{1F600}.txt', 'ｚ.txt'].map((display, i) => ({
      path: display,
      display,
      added: i + 1,
      deleted: 1,
    }));
    const s = summarizeTurn(files, { turn: 't1', cwd: '/w', maxFiles: 3, snapshot: { before: 'a', after: 'b' } });
    expect(s.files.map((f) => f.display)).toEqual(['B.ts', 'a/z.ts', 'a/é.ts']);
    expect(s.total).toBe(6);
    expect(s.added).toBe(21);
    expect(s.deleted).toBe(6);
    expect(s.snapshot).toEqual({ before: 'a', after: 'b' });
    // U+1F600 is a surrogate pair (0xD83D…) and sorts before U+FF5A in UTF-16 order.
    const all = summarizeTurn(files, { turn: 't1', cwd: '/w' }).files.map((f) => f.display);
    expect(all.indexOf('\u{1F600}.txt')).toBeLessThan(all.indexOf('ｚ.txt'));
  });
});

describe('ulid', () => {
  it('is 26 Crockford characters and sorts in creation order', () => {
    const ids = Array.from({ length: 1000 }, () => ulid(1_700_000_000_000));
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
