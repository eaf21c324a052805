/**
 * The folders an operation writes in: never outside the working
 * directories, whatever symlink lies on the way or is swapped in while the
 * operation runs; folders it makes are removed again when it fails.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContainedDirs, DirectoryChangedError, OutsideWorkspaceError, realPath, removeEmptiedDirs } from '../../server/disk/contained-dirs.js';
import { decodePathBytes } from '../../server/path-bytes.js';
import { TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const opened: ContainedDirs[] = [];
afterEach(async () => {
  for (const dirs of opened.splice(0)) await dirs.close();
  temp.cleanup();
});

function dirsFor(...roots: string[]): ContainedDirs {
  const dirs = new ContainedDirs(roots);
  opened.push(dirs);
  return dirs;
}

const openDescriptors = () => readdirSync('/proc/self/fd').length;

describe('ContainedDirs', () => {
  it('writes land in the folder named, through its pinned entry', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src'));
    const dir = await dirsFor(work).parentOf(join(work, 'src', 'a.txt'), false);
    expect(dir.path).toBe(join(work, 'src'));
    writeFileSync(dir.entry(Buffer.from('a.txt')), 'x');
    expect(readFileSync(join(work, 'src', 'a.txt'), 'utf8')).toBe('x');
    await dir.verify();
  });

  it('refuses a folder outside the working directories, and one reached through a symlink leading outside', async () => {
    const work = temp.make();
    const outside = temp.make('outside-');
    symlinkSync(outside, join(work, 'out'));
    const dirs = dirsFor(work);
    await expect(dirs.parentOf(join(outside, 'a.txt'), true)).rejects.toThrow(
      new OutsideWorkspaceError(`${outside} is outside the session's working directories`),
    );
    await expect(dirs.parentOf(join(work, 'out', 'a.txt'), true)).rejects.toThrow(
      new OutsideWorkspaceError(`${join(work, 'out')} leads outside the session's working directories`),
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a symlink that leads nowhere, or to itself', async () => {
    const work = temp.make();
    symlinkSync('missing', join(work, 'dangling'));
    symlinkSync('loop', join(work, 'loop'));
    const dirs = dirsFor(work);
    await expect(dirs.parentOf(join(work, 'dangling', 'a.txt'), true)).rejects.toThrow(OutsideWorkspaceError);
    await expect(dirs.parentOf(join(work, 'loop', 'a.txt'), true)).rejects.toThrow(OutsideWorkspaceError);
    expect(existsSync(join(work, 'missing'))).toBe(false);
  });

  it('follows a symlink that stays inside, and writes where it leads', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'real'));
    symlinkSync('real', join(work, 'alias'));
    const second = temp.make('second-');
    mkdirSync(join(second, 'lib'));
    symlinkSync(join(second, 'lib'), join(work, 'lib'));
    const dirs = dirsFor(work, second);
    const alias = await dirs.parentOf(join(work, 'alias', 'a.txt'), false);
    writeFileSync(alias.entry(Buffer.from('a.txt')), 'through the link');
    expect(readFileSync(join(work, 'real', 'a.txt'), 'utf8')).toBe('through the link');
    await alias.verify();
    const lib = await dirs.parentOf(join(work, 'lib', 'b.txt'), false);
    writeFileSync(lib.entry(Buffer.from('b.txt')), 'in the second working directory');
    expect(readFileSync(join(second, 'lib', 'b.txt'), 'utf8')).toBe('in the second working directory');
  });

  it('notices a folder moved or replaced after it was pinned', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src'));
    const dir = await dirsFor(work).parentOf(join(work, 'src', 'a.txt'), false);
    renameSync(join(work, 'src'), join(work, 'moved'));
    await expect(dir.verify()).rejects.toThrow(new DirectoryChangedError(`${join(work, 'src')} was moved or replaced while the operation ran`));
    mkdirSync(join(work, 'src'));
    await expect(dir.verify()).rejects.toThrow(DirectoryChangedError);
    // Writes still land in the folder pinned, not in the one now at its path.
    writeFileSync(dir.entry(Buffer.from('a.txt')), 'x');
    expect(readdirSync(join(work, 'moved'))).toEqual(['a.txt']);
    expect(readdirSync(join(work, 'src'))).toEqual([]);
  });

  it('notices a symlinked folder pointed elsewhere after it was pinned', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'one'));
    mkdirSync(join(work, 'two'));
    symlinkSync('one', join(work, 'alias'));
    const dir = await dirsFor(work).parentOf(join(work, 'alias', 'a.txt'), false);
    await dir.verify();
    rmSync(join(work, 'alias'));
    symlinkSync('two', join(work, 'alias'));
    await expect(dir.verify()).rejects.toThrow(DirectoryChangedError);
    rmSync(join(work, 'alias'));
    mkdirSync(join(work, 'alias'));
    await expect(dir.verify()).rejects.toThrow(DirectoryChangedError);
  });

  it('makes missing folders only when asked, and removes those it made, innermost first', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'kept'));
    const dirs = dirsFor(work);
    await expect(dirs.parentOf(join(work, 'new', 'a.txt'), false)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(existsSync(join(work, 'new'))).toBe(false);
    const dir = await dirs.parentOf(join(work, 'new', 'deeper', 'a.txt'), true);
    await dirs.parentOf(join(work, 'new', 'deeper', 'b.txt'), true);
    await dirs.parentOf(join(work, 'kept', 'inner', 'b.txt'), true);
    expect(dirs.created).toEqual([join(work, 'new'), join(work, 'new', 'deeper'), join(work, 'kept', 'inner')]);
    expect(dir.path).toBe(join(work, 'new', 'deeper'));
    await dirs.removeCreated();
    expect(readdirSync(work)).toEqual(['kept']);
    expect(readdirSync(join(work, 'kept'))).toEqual([]);
  });

  it('leaves a folder it made that now holds a file someone else put there', async () => {
    const work = temp.make();
    const dirs = dirsFor(work);
    await dirs.parentOf(join(work, 'new', 'deeper', 'a.txt'), true);
    writeFileSync(join(work, 'new', 'theirs.txt'), 'theirs');
    await dirs.removeCreated();
    expect(readdirSync(join(work, 'new'))).toEqual(['theirs.txt']);
  });

  it('removes the folders it made through their pinned parent, wherever the parent was moved', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src'));
    const dirs = dirsFor(work);
    await dirs.parentOf(join(work, 'src', 'new', 'a.txt'), true);
    renameSync(join(work, 'src'), join(work, 'moved'));
    mkdirSync(join(work, 'src'));
    mkdirSync(join(work, 'src', 'new'));
    await dirs.removeCreated();
    expect(readdirSync(join(work, 'moved'))).toEqual([]);
    expect(readdirSync(join(work, 'src'))).toEqual(['new']);
  });

  it('keeps a bounded number of folders open, and closes them all at the end', async () => {
    const work = temp.make();
    const before = openDescriptors();
    const dirs = new ContainedDirs([work]);
    for (let i = 0; i < 300; i++) {
      const dir = await dirs.parentOf(join(work, `d${i}`, 'a.txt'), true);
      writeFileSync(dir.entry(Buffer.from('a.txt')), `${i}`);
    }
    const during = openDescriptors() - before;
    expect(during).toBeGreaterThan(64);
    expect(during).toBeLessThanOrEqual(130);
    // A folder closed along the way opens again when needed.
    const first = await dirs.parentOf(join(work, 'd0', 'b.txt'), false);
    writeFileSync(first.entry(Buffer.from('b.txt')), 'again');
    expect(readFileSync(join(work, 'd0', 'b.txt'), 'utf8')).toBe('again');
    await dirs.sync();
    await dirs.close();
    expect(openDescriptors()).toBe(before);
  });

  it('never closes a folder kept for a rollback, however many others are opened', async () => {
    const work = temp.make();
    const dirs = dirsFor(work);
    mkdirSync(join(work, 'kept'));
    const kept = await dirs.parentOf(join(work, 'kept', 'a.txt'), false, true);
    for (let i = 0; i < 300; i++) await dirs.parentOf(join(work, `d${i}`, 'a.txt'), true);
    renameSync(join(work, 'kept'), join(work, 'moved'));
    // Still the folder pinned: its descriptor was never closed.
    writeFileSync(kept.entry(Buffer.from('a.txt')), 'x');
    expect(readdirSync(join(work, 'moved'))).toEqual(['a.txt']);
  });
});

describe('realPath', () => {
  it('resolves symlinks, keeps the name, and is undefined for a path that does not exist', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'real'));
    symlinkSync('real', join(work, 'alias'));
    expect(await realPath(join(work, 'alias'))).toBe(join(work, 'real'));
    expect(await realPath(Buffer.from(join(work, 'alias')))).toBe(join(work, 'real'));
    expect(await realPath(join(work, 'missing'))).toBeUndefined();
  });

  it('keeps the bytes of a name that is not UTF-8, given as bytes or as the string that stands for them', async () => {
    const work = temp.make();
    // "caf\xe9" in Latin-1: 0xE9 alone is no UTF-8, so a name read or passed as UTF-8 text would be another name.
    const real = Buffer.concat([Buffer.from(`${work}/caf`), Buffer.from([0xe9])]);
    mkdirSync(real);
    const alias = Buffer.concat([Buffer.from(`${work}/alias-`), Buffer.from([0xff])]);
    symlinkSync(real, alias);
    expect(await realPath(alias)).toBe(decodePathBytes(real));
    expect(await realPath(decodePathBytes(alias))).toBe(decodePathBytes(real));
  });
});

describe('removeEmptiedDirs', () => {
  it('removes the folders left empty, deepest first, and keeps one still holding anything', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'a', 'b', 'c'), { recursive: true });
    mkdirSync(join(work, 'full'));
    writeFileSync(join(work, 'full', 'f.txt'), 'f');
    const dirs = dirsFor(work);
    await removeEmptiedDirs(dirs, [join(work, 'a'), join(work, 'a', 'b', 'c'), join(work, 'full'), join(work, 'a', 'b'), join(work, 'never', 'there')]);
    expect(readdirSync(work)).toEqual(['full']);
  });
});
