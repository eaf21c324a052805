/**
 * Where a path someone named really leads, every symlink on the way
 * followed: a path is inside a working directory only if it stays there.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realPathInside, realPathOf, UnresolvablePathError } from '../../server/containment.js';
import { TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
afterEach(() => temp.cleanup());

describe('realPathOf', () => {
  it('is the real path of a path that exists, through every symlink', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'real', 'inner'), { recursive: true });
    symlinkSync('real', join(work, 'alias'));
    writeFileSync(join(work, 'real', 'inner', 'a.txt'), 'a');
    expect(await realPathOf(join(work, 'alias', 'inner', 'a.txt'))).toBe(join(work, 'real', 'inner', 'a.txt'));
    expect(await realPathOf(`${work}/alias/../real/./inner`)).toBe(join(work, 'real', 'inner'));
  });

  it('joins the parts that do not exist yet, in order, to the real path of what does', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'real'));
    symlinkSync('real', join(work, 'alias'));
    expect(await realPathOf(join(work, 'alias', 'new', 'deeper', 'a.txt'))).toBe(join(work, 'real', 'new', 'deeper', 'a.txt'));
    expect(await realPathOf(join(work, 'alias', 'a.txt'))).toBe(join(work, 'real', 'a.txt'));
  });

  it('leads a dangling symlink where its target would be created', async () => {
    const work = temp.make();
    const outside = temp.make('outside-');
    mkdirSync(join(work, 'sub'));
    symlinkSync('../not-yet/file', join(work, 'sub', 'relative'));
    symlinkSync(join(outside, 'passwd'), join(work, 'absolute'));
    expect(await realPathOf(join(work, 'sub', 'relative'))).toBe(join(work, 'not-yet', 'file'));
    expect(await realPathOf(join(work, 'absolute'))).toBe(join(outside, 'passwd'));
    // Through a dangling link to a folder that does not exist yet.
    symlinkSync(join(outside, 'dir'), join(work, 'dir-link'));
    expect(await realPathOf(join(work, 'dir-link', 'x', 'y'))).toBe(join(outside, 'dir', 'x', 'y'));
  });

  it('reads a path through a file as the file’s path and the rest', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'file.txt'), 'x');
    symlinkSync('file.txt', join(work, 'alias'));
    expect(await realPathOf(join(work, 'alias', 'child'))).toBe(join(work, 'file.txt', 'child'));
  });

  it('gives up on symlinks that lead round in circles, however they are built', async () => {
    const work = temp.make();
    symlinkSync('loop', join(work, 'loop'));
    symlinkSync('b', join(work, 'a'));
    symlinkSync('a', join(work, 'b'));
    // Dangling to the kernel (through a missing folder), a circle once `..` is read lexically.
    symlinkSync('missing/../lexical', join(work, 'lexical'));
    for (const path of [join(work, 'loop'), join(work, 'a', 'x'), join(work, 'lexical')]) {
      await expect(realPathOf(path)).rejects.toThrow(new UnresolvablePathError(`${path}: too many levels of symbolic links`));
    }
  });

  it('follows a long chain of dangling links, up to the system’s own limit', async () => {
    const work = temp.make();
    for (let i = 0; i < 40; i++) symlinkSync(`l${i + 1}`, join(work, `l${i}`));
    expect(await realPathOf(join(work, 'l0'))).toBe(join(work, 'l40'));
  });

  it('passes on errors other than a missing path', async () => {
    const work = temp.make();
    await expect(realPathOf(join(work, 'x'.repeat(300)))).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
    await expect(realPathInside([work], join(work, 'x'.repeat(300)))).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
  });
});

describe('realPathInside', () => {
  it('is the real path when it lies in one of the working directories, else undefined', async () => {
    const work = temp.make();
    const other = temp.make('other-');
    const outside = temp.make('outside-');
    symlinkSync(outside, join(work, 'out'));
    symlinkSync(other, join(work, 'to-other'));
    symlinkSync('loop', join(work, 'loop'));
    expect(await realPathInside([work, other], join(work, 'new.txt'))).toBe(join(work, 'new.txt'));
    expect(await realPathInside([work, other], join(work, 'to-other', 'b.txt'))).toBe(join(other, 'b.txt'));
    expect(await realPathInside([work], join(work, 'to-other', 'b.txt'))).toBeUndefined();
    expect(await realPathInside([work, other], join(work, 'out', 'passwd'))).toBeUndefined();
    expect(await realPathInside([work], join(work, 'loop'))).toBeUndefined();
    expect(await realPathInside([work], `${work}-sibling/a.txt`)).toBeUndefined();
  });
});
