/**
 * Attributes that change what git stores besides line endings: `ident`,
 * `working-tree-encoding`, `filter=lfs` with and without git-lfs's driver,
 * and a configured filter driver (not run). A clean checkout whose mtimes
 * moved must still snapshot as HEAD's tree, new files as `git add -A`
 * stores them, and the way back must write what `git checkout` writes.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutConversion } from '../../server/snapshot/index.js';
import { git, gitEnv, gitTree, removeDir, tempDir } from './helpers.js';
import { SnapshotFixture, write } from './snapshot-fixture.js';

const fixture = new SnapshotFixture();
afterEach(() => fixture.cleanup());

/** The environment git runs with in these tests: a temp HOME, no system config. */
const env = { HOME: gitEnv.HOME!, XDG_CONFIG_HOME: gitEnv.XDG_CONFIG_HOME!, GIT_CONFIG_NOSYSTEM: '1' };

function gitTreeFromIndex(root: string): string {
  const tmp = tempDir('snap-idx-');
  try {
    const index = join(tmp, 'index');
    if (existsSync(join(root, '.git/index'))) copyFileSync(join(root, '.git/index'), index);
    git(root, ['add', '-A'], { GIT_INDEX_FILE: index });
    return git(root, ['write-tree'], { GIT_INDEX_FILE: index });
  } finally {
    removeDir(tmp);
  }
}

/** Commits, then checks every file out again as a clone would, and moves their mtimes so nothing is taken from the index. */
function commitAndCheckOut(root: string, files: string[]): void {
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', 'initial']);
  for (const f of files) rmSync(join(root, f));
  git(root, ['checkout', '--', '.']);
  const later = new Date(Date.now() + 5_000);
  for (const f of files) utimesSync(join(root, f), later, later);
}

/** What `git checkout` wrote for each file must be what the way back writes for HEAD's blob. */
function expectCheckoutMatches(root: string, files: string[]): void {
  for (const f of files) {
    const blob = execFileSync('git', ['cat-file', 'blob', `HEAD:${f}`], { cwd: root, env: gitEnv });
    expect(Buffer.from(checkoutConversion(root, f, env).smudge(blob))).toEqual(readFileSync(join(root, f)));
  }
}

describe('attributes git applies besides line endings', () => {
  it('ident: $Id$ in git, $Id: <blob id> $ in a checkout', async () => {
    const { root, cacheDir } = fixture.workspace();
    write(root, '.gitattributes', '*.c ident\n');
    write(root, 'a.c', '/* $Id$ */\nint a;\n');
    write(root, 'b.c', '$Id: something old $\n$Id:broken\nline$\n');
    commitAndCheckOut(root, ['a.c', 'b.c']);
    expect(readFileSync(join(root, 'a.c'), 'latin1')).toMatch(/\$Id: [0-9a-f]{40} \$/);
    const head = git(root, ['rev-parse', 'HEAD^{tree}']);
    const s = fixture.snapshotter(root, cacheDir, undefined, { env });
    expect((await s.snapshot()).tree).toBe(head);
    write(root, 'c.c', 'new $Id: expanded elsewhere $\n');
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root));
    expectCheckoutMatches(root, ['a.c', 'b.c']);
  });

  it('working-tree-encoding: UTF-16 on disk, UTF-8 in git', async () => {
    const { root, cacheDir } = fixture.workspace();
    write(root, '.gitattributes', '*.u16 working-tree-encoding=UTF-16\n*.le working-tree-encoding=UTF-16LE\n*.be working-tree-encoding=utf-16be eol=crlf\n');
    const text = 'héllo wörld ✓\nsecond line\n';
    write(root, 'a.u16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    write(root, 'b.le', Buffer.from(text, 'utf16le'));
    write(root, 'c.be', Buffer.from(text.replaceAll('\n', '\r\n'), 'utf16le').swap16());
    commitAndCheckOut(root, ['a.u16', 'b.le', 'c.be']);
    expect(git(root, ['cat-file', '-p', 'HEAD:b.le'])).toBe(text.trimEnd());
    const head = git(root, ['rev-parse', 'HEAD^{tree}']);
    const s = fixture.snapshotter(root, cacheDir, undefined, { env });
    expect((await s.snapshot()).tree).toBe(head);
    write(root, 'd.le', Buffer.from('another\n', 'utf16le'));
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root));
    expectCheckoutMatches(root, ['a.u16', 'b.le', 'c.be']);
  });

  it('filter=lfs without a git-lfs driver stores the bytes, with one the pointer, as git does', async () => {
    const { root, cacheDir } = fixture.workspace();
    write(root, '.gitattributes', '*.bin filter=lfs diff=lfs merge=lfs -text\n');
    write(root, 'big.bin', 'not really large\n');
    const noDriver = await fixture.snapshotter(root, cacheDir, undefined, { env }).snapshot();
    expect(noDriver.tree).toBe(gitTree(root));
    git(root, ['config', 'filter.lfs.clean', 'git-lfs clean -- %f']);
    const withDriver = await fixture.snapshotter(root, join(cacheDir, 'again'), undefined, { env }).snapshot();
    expect(withDriver.tree).not.toBe(noDriver.tree);
    expect(withDriver.tree).toBe(gitTree(root));
  });

  it('a configured filter driver is not run: the index vouches for a clean checkout, and a file read says so', async () => {
    const { root, cacheDir } = fixture.workspace();
    git(root, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    git(root, ['config', 'filter.upper.smudge', 'cat']);
    write(root, '.gitattributes', '*.up filter=upper\n');
    write(root, 'x.up', 'lower case\n');
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'initial']);
    expect(git(root, ['cat-file', '-p', 'HEAD:x.up'])).toBe('LOWER CASE');
    const head = git(root, ['rev-parse', 'HEAD^{tree}']);
    const s = fixture.snapshotter(root, cacheDir, undefined, { env });
    expect((await s.snapshot()).tree).toBe(head);
    // The mtime moves; once git has refreshed its index (as git status does), the index's id still counts.
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(join(root, 'x.up'), earlier, earlier);
    git(root, ['status', '--porcelain']);
    expect((await s.snapshot()).tree).toBe(head);
    // An edit is recorded as the bytes on disk, and the snapshot says the filter was not run.
    write(root, 'x.up', 'edited\n');
    const edited = await s.snapshot();
    expect(edited.warnings).toEqual([{ path: 'x.up', message: expect.stringContaining('"upper" filter (filter.upper.clean) is not run') }]);
  });
});
