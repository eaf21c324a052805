/**
 * A file the snapshot walk listed is read only if the file actually opened
 * lies in the walked root: a folder on its path swapped for a symlink since
 * the listing cannot make the walk read a file outside.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, readdirSync, readSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { insidePrefixes, LeftRootError, liesInside, openInside } from '../../server/snapshot/open-inside.js';
import { TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
afterEach(() => temp.cleanup());

const openDescriptors = () => readdirSync('/proc/self/fd').length;

function readAll(fd: number): string {
  const buf = Buffer.alloc(100);
  const n = readSync(fd, buf);
  closeSync(fd);
  return buf.subarray(0, n).toString();
}

describe('openInside', () => {
  it('opens a file inside the root, also through a symlinked folder that stays inside', () => {
    const work = temp.make();
    mkdirSync(join(work, 'real'));
    writeFileSync(join(work, 'real', 'a.txt'), 'inside');
    symlinkSync('real', join(work, 'alias'));
    const [prefix] = insidePrefixes([work]);
    expect(readAll(openInside(join(work, 'real', 'a.txt'), prefix!))).toBe('inside');
    expect(readAll(openInside(Buffer.from(join(work, 'alias', 'a.txt')), prefix!))).toBe('inside');
  });

  it('refuses, reading nothing and keeping no descriptor, a file a swapped-in folder link leads outside', () => {
    const work = temp.make();
    const outside = temp.make('outside-');
    writeFileSync(join(outside, 'secret'), 'secret');
    symlinkSync(outside, join(work, 'sub'));
    const before = openDescriptors();
    expect(() => openInside(join(work, 'sub', 'secret'), insidePrefixes([work])[0]!)).toThrow(
      new LeftRootError('a folder on its path now leads outside the working directory'),
    );
    expect(openDescriptors()).toBe(before);
  });

  it('never follows a symlink in the last place, and never hangs on a FIFO', () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a');
    symlinkSync('a.txt', join(work, 'link'));
    execFileSync('mkfifo', [join(work, 'fifo')]);
    const [prefix] = insidePrefixes([work]);
    expect(() => openInside(join(work, 'link'), prefix!)).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    closeSync(openInside(join(work, 'fifo'), prefix!));
  });
});

describe('liesInside', () => {
  it('is true only strictly under one of the folders, never for a sibling sharing a prefix or the folder itself', () => {
    const parent = temp.make();
    mkdirSync(join(parent, 'work'));
    mkdirSync(join(parent, 'work2'));
    mkdirSync(join(parent, 'other'));
    writeFileSync(join(parent, 'work2', 'a.txt'), 'a');
    writeFileSync(join(parent, 'other', 'b.txt'), 'b');
    const fd = openInside(join(parent, 'work2', 'a.txt'), Buffer.from(`${parent}/`));
    try {
      expect(liesInside(fd, insidePrefixes([join(parent, 'work')]))).toBe(false);
      expect(liesInside(fd, insidePrefixes([join(parent, 'other'), join(parent, 'work2')]))).toBe(true);
      expect(liesInside(fd, insidePrefixes([`${join(parent, 'work2')}/`]))).toBe(true);
      // The file's own path is not a folder it lies under.
      expect(liesInside(fd, [Buffer.from(join(parent, 'work2', 'a.txt'))])).toBe(false);
      expect(liesInside(fd, [])).toBe(false);
    } finally {
      closeSync(fd);
    }
  });

  it('takes folders with or without their trailing slash', () => {
    expect(insidePrefixes(['/w/project', '/w/other/']).map(String)).toEqual(['/w/project/', '/w/other/']);
  });
});
