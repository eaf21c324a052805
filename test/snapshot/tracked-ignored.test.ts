/**
 * Git never ignores a path its index has: files added with `git add -f`
 * below an ignored directory or matching an ignore pattern stay in the
 * tree, untracked files beside them stay out, and a change of the index
 * alone (`git add -f`, `git rm --cached`) changes what is recorded. Trees
 * are compared with `git add -A && git write-tree` on a copy of the
 * repository's own index.
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { git, removeDir, tempDir } from './helpers.js';
import { SnapshotFixture, write } from './snapshot-fixture.js';

const fixture = new SnapshotFixture();
afterEach(() => fixture.cleanup());

/** `git add -A && git write-tree` starting from a copy of the repository's index. */
function gitTreeFromIndex(root: string, without: string[] = []): string {
  const tmp = tempDir('snap-idx-');
  try {
    const index = join(tmp, 'index');
    if (existsSync(join(root, '.git/index'))) copyFileSync(join(root, '.git/index'), index);
    const env = { GIT_INDEX_FILE: index };
    git(root, ['add', '-A'], env);
    if (without.length) git(root, ['rm', '-q', '--cached', ...without], env);
    return git(root, ['write-tree'], env);
  } finally {
    removeDir(tmp);
  }
}

function trackedIgnoredRepo(): { root: string; cacheDir: string } {
  const ws = fixture.workspace();
  const { root } = ws;
  write(root, '.gitignore', 'build/\n*.log\n');
  write(root, 'src/main.c', 'int main;\n');
  write(root, 'build/t.txt', 'tracked in an ignored directory\n');
  write(root, 'build/deep/d.txt', 'tracked deeper\n');
  write(root, 'build/untracked.txt', 'not tracked\n');
  write(root, 'a.log', 'tracked log\n');
  write(root, 'b.log', 'untracked log\n');
  git(root, ['add', '.gitignore', 'src']);
  git(root, ['add', '-f', 'build/t.txt', 'build/deep/d.txt', 'a.log']);
  git(root, ['commit', '-q', '-m', 'init']);
  return ws;
}

describe.each([{ watcher: 'off' }, { watcher: 'on' }])('tracked paths the ignore rules match, file watcher $watcher', ({ watcher }) => {
  beforeEach(() => {
    fixture.watching = watcher === 'on';
  });

  it('records tracked files in ignored directories and matching ignore patterns, as git add -A does', async () => {
    const { root, cacheDir } = trackedIgnoredRepo();
    const head = git(root, ['rev-parse', 'HEAD^{tree}']);
    const s = fixture.snapshotter(root, cacheDir);
    const first = await s.snapshot();
    expect(first.tree).toBe(head);
    expect(first.tree).toBe(gitTreeFromIndex(root));

    // Edits to tracked files are recorded; new files beside them stay ignored.
    write(root, 'build/t.txt', 'edited\n');
    write(root, 'build/deep/d.txt', 'edited deeper\n');
    write(root, 'build/deep/new.txt', 'new, untracked\n');
    write(root, 'a.log', 'edited log\n');
    write(root, 'c.log', 'another untracked log\n');
    const edited = await s.snapshot();
    expect(edited.tree).not.toBe(head);
    expect(edited.tree).toBe(gitTreeFromIndex(root));

    // A tracked file deleted from disk is a deletion.
    rmSync(join(root, 'build/deep/d.txt'));
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root));

    // A fresh snapshotter on the saved stat cache decides the same.
    await s.saveCache();
    expect((await fixture.snapshotter(root, cacheDir).snapshot()).tree).toBe(gitTreeFromIndex(root));
  });

  it('follows the index alone: git add -f and git rm --cached change what is recorded without touching the files', async () => {
    const { root, cacheDir } = trackedIgnoredRepo();
    const s = fixture.snapshotter(root, cacheDir);
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root));

    git(root, ['add', '-f', 'b.log', 'build/untracked.txt']);
    const added = await s.snapshot();
    expect(added.tree).toBe(gitTreeFromIndex(root));
    expect(git(root, ['ls-tree', '-r', '--name-only', added.tree]).split('\n')).toEqual(
      expect.arrayContaining(['b.log', 'build/untracked.txt', 'build/t.txt', 'a.log']),
    );

    git(root, ['rm', '-q', '--cached', 'a.log', 'build/t.txt', 'build/deep/d.txt']);
    const removed = await s.snapshot();
    expect(removed.tree).toBe(gitTreeFromIndex(root));
    expect(git(root, ['ls-tree', '-r', '--name-only', removed.tree]).split('\n')).not.toContain('a.log');

    // Nothing tracked below build/ any more but one file; then nothing at all.
    git(root, ['rm', '-q', '--cached', 'build/untracked.txt']);
    const none = await s.snapshot();
    expect(none.tree).toBe(gitTreeFromIndex(root));
    expect(git(root, ['ls-tree', '--name-only', none.tree]).split('\n')).not.toContain('build');
  });

  it('keeps the snapshot options own excludes absolute, tracked or not', async () => {
    const { root, cacheDir } = trackedIgnoredRepo();
    const s = fixture.snapshotter(root, cacheDir, undefined, { extraExcludes: ['a.log'] });
    expect((await s.snapshot()).tree).toBe(gitTreeFromIndex(root, ['a.log']));
  });
});
