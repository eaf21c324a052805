/**
 * What no operation writes, whatever its plan says: a path through `.git`
 * (the next `git status` would run what it names), and, from a session that
 * came from a mirror, a symbolic link pointing outside the working
 * directory unless the user allowed such links.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../server/domain-error.js';
import { assertNoRefusedPaths, refusedWrite, type WriteGuard } from '../../server/operations/write-guard.js';
import type { RecordingSession } from '../../server/session/recording-session.js';

/** The one part of a session the guard reads: its working directories. */
function sessionOver(workingDirectories: string[]): RecordingSession {
  return { workingDirectories } as unknown as RecordingSession;
}

const link = (target: string) => ({ content: Buffer.from(target), mode: '120000' as const });
const file = (text: string) => ({ content: Buffer.from(text), mode: '100644' as const });
const imported: WriteGuard = { imported: true, allowOutsideSymlinks: false };

describe('refusedWrite', () => {
  const work = '/w/project';
  const session = sessionOver([work, '/w/other']);

  it('refuses any path through .git, in any of its spellings, in the working directory the write is for', () => {
    expect(refusedWrite(session, join(work, '.git', 'config'), 0, file('x'))).toBe(
      `".git" is a .git directory (the repository's own files): git never writes there, and neither does any operation`,
    );
    expect(refusedWrite(session, join(work, 'sub', '.GIT', 'hooks', 'pre-commit'), 0, undefined)).toMatch(/^"\.GIT" is a \.git directory/);
    expect(refusedWrite(session, join(work, 'git~1', 'x'), 0, file('x'))).toMatch(/^"git~1" is a name Windows reads as \.git/);
    expect(refusedWrite(session, join(work, '.gitignore'), 0, file('x'))).toBeUndefined();
    expect(refusedWrite(session, join(work, 'src', 'a.ts'), 0, file('x'))).toBeUndefined();
  });

  it('judges a path only against the working directory it belongs to', () => {
    expect(refusedWrite(session, '/w/other/.git/config', 1, file('x'))).toMatch(/^"\.git"/);
    // Not inside the working directory named, or no such working directory: not for this guard to say.
    expect(refusedWrite(session, '/w/other/.git/config', 0, file('x'))).toBeUndefined();
    expect(refusedWrite(session, join(work, '.git', 'config'), 2, file('x'))).toBeUndefined();
  });

  it('refuses, from an imported session, a symbolic link leading outside the working directory', () => {
    const absPath = join(work, 'src', 'link');
    expect(refusedWrite(session, absPath, 0, link('/etc/passwd'), imported)).toBe(
      'a symbolic link to "/etc/passwd", outside the working directory, from an imported session: not created unless links outside are allowed (--allow-outside-symlinks)',
    );
    expect(refusedWrite(session, absPath, 0, link('../../../outside'), imported)).toMatch(/^a symbolic link to "\.\.\/\.\.\/\.\.\/outside", outside/);
    // An absolute target is refused even when it names a place inside.
    expect(refusedWrite(session, absPath, 0, link(join(work, 'README.md')), imported)).toMatch(/^a symbolic link to/);
  });

  it('creates a link that stays inside, any link when allowed or not imported, and files whatever they hold', () => {
    const absPath = join(work, 'src', 'link');
    expect(refusedWrite(session, absPath, 0, link('../README.md'), imported)).toBeUndefined();
    expect(refusedWrite(session, absPath, 0, link('sibling'), imported)).toBeUndefined();
    expect(refusedWrite(session, absPath, 0, link('/etc/passwd'), { imported: true, allowOutsideSymlinks: true })).toBeUndefined();
    expect(refusedWrite(session, absPath, 0, link('/etc/passwd'), { imported: false, allowOutsideSymlinks: false })).toBeUndefined();
    expect(refusedWrite(session, absPath, 0, link('/etc/passwd'))).toBeUndefined();
    expect(refusedWrite(session, absPath, 0, file('/etc/passwd'), imported)).toBeUndefined();
    expect(refusedWrite(session, absPath, 0, undefined, imported)).toBeUndefined();
  });
});

describe('assertNoRefusedPaths', () => {
  it('refuses the whole plan, naming the file, when one write is through .git in any working directory', () => {
    const session = sessionOver(['/w/project', '/w/other']);
    const ok = { absPath: '/w/project/src/a.ts', display: 'src/a.ts' };
    expect(() => assertNoRefusedPaths(session, [ok])).not.toThrow();
    let error: unknown;
    try {
      assertNoRefusedPaths(session, [ok, { absPath: '/w/other/.git/hooks/post-checkout', display: 'other/.git/hooks/post-checkout' }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).message).toBe(
      `Nothing was written: other/.git/hooks/post-checkout: ".git" is a .git directory (the repository's own files); no operation writes there`,
    );
    expect(() => assertNoRefusedPaths(session, [{ absPath: '/elsewhere/.git/config', display: '/elsewhere/.git/config' }])).not.toThrow();
  });
});
