/**
 * Attributes and core settings change what `git add` stores (line endings,
 * modes, symlinks, case-insensitive patterns): trees must still be
 * byte-identical to `git add -A && git write-tree`.
 */
import { chmodSync, copyFileSync, existsSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { git, gitTree, removeDir, tempDir } from './helpers.js';
import type { MemoryObjectStore } from './memory-store.js';
import { SnapshotFixture, write } from './snapshot-fixture.js';

/** Every test runs twice: walking the tree at each snapshot, and fed by a real file watcher. */
const fixture = new SnapshotFixture();
afterEach(() => fixture.cleanup());
const workspace = () => fixture.workspace();
const snapshotter = (root: string, cacheDir: string, store?: MemoryObjectStore) => fixture.snapshotter(root, cacheDir, store);

/** `git add -A && git write-tree` starting from a copy of the repository's index, as `git add` in the repository itself would. */
function gitTreeFromIndex(root: string): string {
  const tmp = tempDir('snap-idx-');
  try {
    const index = join(tmp, 'index');
    if (existsSync(join(root, '.git/index'))) copyFileSync(join(root, '.git/index'), index);
    const env = { GIT_INDEX_FILE: index };
    git(root, ['add', '-A'], env);
    return git(root, ['write-tree'], env);
  } finally {
    removeDir(tmp);
  }
}

const CRLF = 'one\r\ntwo\r\n';
const LF = 'one\ntwo\n';

describe.each([{ watcher: 'off' }, { watcher: 'on' }])('attributes and core settings like git, file watcher $watcher', ({ watcher }) => {
  beforeEach(() => {
    fixture.watching = watcher === 'on';
  });

  it('matches git for text=auto, text, eol, -text, binary, crlf, macros and nested .gitattributes', async () => {
    const { root, cacheDir } = workspace();
    write(
      root,
      '.gitattributes',
      [
        '[attr]unix text eol=lf',
        '* text=auto',
        '*.txt eol=crlf',
        '*.bin binary',
        '*.raw -text',
        '*.old crlf',
        '*.u unix',
        '*.keep text',
        '*.keep !text',
        '',
      ].join('\n'),
    );
    write(root, 'auto.md', CRLF);
    write(root, 'lf.md', LF);
    write(root, 'mixed.md', 'a\r\nb\nc\r\n');
    write(root, 'lone-cr.md', 'a\rb\r\n');
    write(root, 'nul.md', Buffer.from('a\r\n\0b\r\n'));
    write(root, 'ctrl.md', Buffer.from('\x01\x02\x03\r\n'));
    write(root, 'empty.md', '');
    write(root, 'a.txt', 'a\r\nlone\rcr\r\n');
    write(root, 'b.bin', CRLF);
    write(root, 'c.raw', CRLF);
    write(root, 'd.old', CRLF);
    write(root, 'e.u', 'x\r\ny\r\n');
    write(root, 'f.keep', CRLF);
    write(root, 'sub/.gitattributes', '*.md -text\n[attr]ignored text\n*.sub ignored\n');
    write(root, 'sub/g.md', CRLF);
    write(root, 'sub/h.sub', CRLF);
    write(root, 'sub/deeper/i.txt', CRLF);
    write(root, '.git/info/attributes', 'info.md -text\n');
    write(root, 'info.md', CRLF);
    symlinkSync('target\r\n', join(root, 'link.md'));

    const snap = await snapshotter(root, cacheDir).snapshot();
    expect(snap.tree).toBe(gitTree(root));
    expect(snap.warnings).toEqual([]);
  });

  it('matches git for core.autocrlf=true, core.autocrlf=input and core.eol=crlf', async () => {
    for (const config of [
      ['core.autocrlf', 'true'],
      ['core.autocrlf', 'input'],
      ['core.eol', 'crlf'],
    ] as const) {
      const { root, cacheDir } = workspace();
      git(root, ['config', ...config]);
      write(root, 'a.c', CRLF);
      write(root, 'b.c', 'a\rb\r\n');
      write(root, 'c.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10, 0, 13, 10]));
      write(root, 'd/e.txt', 'x\r\n');
      write(root, 'd/.gitattributes', 'f.txt text\n');
      write(root, 'd/f.txt', 'lone\rcr\r\n');
      const snap = await snapshotter(root, cacheDir).snapshot();
      expect(snap.tree, config.join('=')).toBe(gitTree(root));
    }
  });

  it('re-reads files when .gitattributes or the line-ending config changes, and keeps matching git', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'a.txt', CRLF);
    write(root, 'b/c.txt', CRLF);
    const s = snapshotter(root, cacheDir);
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    write(root, '.gitattributes', '*.txt text\n');
    const converted = await s.snapshot();
    expect(converted.tree).toBe(gitTree(root));
    expect(converted.hashed).toBeGreaterThanOrEqual(2);
    write(root, 'b/.gitattributes', 'c.txt -text\n');
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    rmSync(join(root, '.gitattributes'));
    rmSync(join(root, 'b/.gitattributes'));
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    git(root, ['config', 'core.autocrlf', 'true']);
    expect((await s.snapshot()).tree).toBe(gitTree(root));
    // A new snapshotter loads the saved stat cache: the converted ids come back as they were stored.
    await s.saveCache();
    const reloaded = await snapshotter(root, cacheDir).snapshot();
    expect(reloaded.tree).toBe(gitTree(root));
    expect(reloaded.hashed).toBe(0);
  });

  it('leaves a text=auto file with CRLF in the index as it is, as git add does ("safer autocrlf")', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'old.txt', CRLF);
    write(root, 'old-binary.dat', Buffer.from('a\r\n\0'));
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'crlf committed as is']);
    git(root, ['gc', '-q']);
    write(root, '.gitattributes', '* text=auto\n');
    write(root, 'old.txt', 'one\r\ntwo\r\nthree\r\n');
    write(root, 'old-binary.dat', 'a\r\nb\r\n');
    write(root, 'new.txt', CRLF);
    const snap = await snapshotter(root, cacheDir).snapshot();
    expect(snap.tree).toBe(gitTreeFromIndex(root));
    expect(git(root, ['ls-tree', snap.tree, 'old.txt'])).toContain(git(root, ['hash-object', '--no-filters', 'old.txt']));
  });

  it('keeps the modes the index records with core.fileMode=false', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'plain.sh', 'echo plain\n');
    write(root, 'exec.sh', 'echo exec\n');
    chmodSync(join(root, 'exec.sh'), 0o755);
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'modes']);
    git(root, ['config', 'core.fileMode', 'false']);
    const s = snapshotter(root, cacheDir);
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root));
    chmodSync(join(root, 'plain.sh'), 0o755);
    chmodSync(join(root, 'exec.sh'), 0o644);
    write(root, 'new.sh', 'echo new\n');
    chmodSync(join(root, 'new.sh'), 0o755);
    const snap = await s.snapshot();
    expect(snap.tree).toBe(gitTreeFromIndex(root));
    expect(git(root, ['ls-tree', snap.tree])).toMatch(/^100755 blob \w+\texec\.sh\n100644 blob \w+\tnew\.sh\n100644 blob \w+\tplain\.sh$/);
    // Turned back on, the bits on disk count again.
    git(root, ['config', 'core.fileMode', 'true']);
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root));
  });

  it('records a symlink checked out as a plain file as a symlink with core.symlinks=false', async () => {
    const { root, cacheDir } = workspace();
    write(root, 'target.txt', 'target\n');
    symlinkSync('target.txt', join(root, 'link'));
    git(root, ['add', '-A']);
    git(root, ['commit', '-q', '-m', 'link']);
    git(root, ['config', 'core.symlinks', 'false']);
    // What a checkout without symlink support leaves: the link text in a plain file.
    unlinkSync(join(root, 'link'));
    write(root, 'link', 'target.txt');
    const s = snapshotter(root, cacheDir);
    const snap = await s.snapshot();
    expect(snap.tree).toBe(gitTreeFromIndex(root));
    expect(snap.tree).toBe(git(root, ['rev-parse', 'HEAD^{tree}']));
    write(root, 'link', 'elsewhere.txt');
    const edited = await s.snapshot();
    expect(edited.tree).toBe(gitTreeFromIndex(root));
    expect(git(root, ['ls-tree', edited.tree, 'link'])).toMatch(/^120000 blob /);
  });

  it('matches ignore and attribute patterns regardless of case with core.ignoreCase=true', async () => {
    const { root, cacheDir } = workspace();
    git(root, ['config', 'core.ignoreCase', 'true']);
    write(root, '.gitignore', '*.LOG\nBuild/\n/Out[A-Z].txt\n!KEEP.log\n');
    write(root, 'a.log', 'log');
    write(root, 'b.Log', 'log');
    write(root, 'keep.LOG', 'kept');
    write(root, 'build/x.txt', 'built');
    write(root, 'outa.txt', 'out');
    write(root, 'src/OUTB.txt', 'not anchored here');
    write(root, 'src/.gitignore', 'SECRET\n');
    write(root, 'src/secret', 'hidden');
    write(root, '.gitattributes', '*.TXT text\n');
    write(root, 'crlf.txt', CRLF);
    const snap = await snapshotter(root, cacheDir).snapshot();
    expect(snap.tree).toBe(gitTree(root));
    expect(git(root, ['ls-tree', '-r', '--name-only', snap.tree]).split('\n')).toEqual([
      '.gitattributes',
      '.gitignore',
      'crlf.txt',
      'keep.LOG',
      'src/.gitignore',
      'src/OUTB.txt',
    ]);
  });
});
