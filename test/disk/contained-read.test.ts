/**
 * Reading a workspace file by a path someone named (a harness, an agent, a
 * client) never reads anything outside the working directories, whatever
 * symlink lies on the way; a symlinked folder leading back inside is
 * followed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readContained } from '../../server/disk/contained-read.js';
import { TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
afterEach(() => temp.cleanup());

const MAX = 1024;

async function read(roots: string[], path: string, max = MAX) {
  const got = await readContained(roots, path, max);
  return got.kind === 'file'
    ? { kind: got.kind, text: got.content.toString(), size: got.stat.size }
    : got.kind === 'symlink'
      ? { kind: got.kind, target: got.target.toString() }
      : got.kind === 'oversized'
        ? { kind: got.kind, size: got.stat.size }
        : got;
}

describe('readContained', () => {
  it('reads a file, and a symlink as its target', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src', 'deep'), { recursive: true });
    writeFileSync(join(work, 'src', 'deep', 'a.txt'), 'hello');
    writeFileSync(join(work, 'top.txt'), 'top');
    symlinkSync('/etc/passwd', join(work, 'src', 'link'));
    expect(await read([work], join(work, 'src', 'deep', 'a.txt'))).toEqual({ kind: 'file', text: 'hello', size: 5 });
    expect(await read([work], join(work, 'top.txt'))).toEqual({ kind: 'file', text: 'top', size: 3 });
    expect(await read([work], `${work}/src/../top.txt`)).toEqual({ kind: 'file', text: 'top', size: 3 });
    expect(await read([work], join(work, 'src', 'link'))).toEqual({ kind: 'symlink', target: '/etc/passwd' });
  });

  it('says missing for a path that names nothing, also through a file or a dangling link', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'file.txt'), 'x');
    symlinkSync('nowhere', join(work, 'dangling'));
    expect(await read([work], join(work, 'nope.txt'))).toEqual({ kind: 'missing' });
    expect(await read([work], join(work, 'no', 'such', 'dir.txt'))).toEqual({ kind: 'missing' });
    expect(await read([work], join(work, 'file.txt', 'child'))).toEqual({ kind: 'missing' });
    expect(await read([work], join(work, 'dangling', 'child'))).toEqual({ kind: 'missing' });
  });

  it('reads no socket: a program listening in the workspace is not a file', async () => {
    const work = temp.make();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(work, 'app.sock'), resolve));
    try {
      expect(await read([work], join(work, 'app.sock'))).toEqual({ kind: 'not-a-file' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('keeps no folder or file open once it answers, whatever the answer', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src', 'deep'), { recursive: true });
    writeFileSync(join(work, 'src', 'deep', 'a.txt'), 'a');
    writeFileSync(join(work, 'src', 'big.txt'), 'x'.repeat(2000));
    symlinkSync('/etc/passwd', join(work, 'src', 'link'));
    symlinkSync('deep', join(work, 'src', 'alias'));
    const paths = ['deep/a.txt', 'big.txt', 'link', 'alias/a.txt', 'deep', 'nope/x', 'deep/a.txt/x', 'deep/nope'].map((p) => join(work, 'src', p));
    await read([work], paths[0]!);
    const before = readdirSync('/proc/self/fd').length;
    for (const path of paths) await read([work], path);
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });

  it('follows a chain of folder links up to the system’s own limit of 40', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'real'));
    writeFileSync(join(work, 'real', 'a.txt'), 'at the end');
    // l0 → l1 → … → l39 → real: 40 links.
    symlinkSync('real', join(work, 'l39'));
    for (let i = 38; i >= 0; i--) symlinkSync(`l${i + 1}`, join(work, `l${i}`));
    expect(await read([work], join(work, 'l0', 'a.txt'))).toEqual({ kind: 'file', text: 'at the end', size: 10 });
    symlinkSync('l0', join(work, 'one-more'));
    expect(await read([work], join(work, 'one-more', 'a.txt'))).toEqual({ kind: 'left-working-directory' });
  });

  it('reads no folder, FIFO or working directory itself', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'dir'));
    execFileSync('mkfifo', [join(work, 'fifo')]);
    expect(await read([work], join(work, 'dir'))).toEqual({ kind: 'not-a-file' });
    expect(await read([work], join(work, 'fifo'))).toEqual({ kind: 'not-a-file' });
    expect(await read([work], work)).toEqual({ kind: 'not-a-file' });
  });

  it('reads a file up to the size asked for, and only the metadata of a larger one', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'exact.txt'), 'x'.repeat(10));
    writeFileSync(join(work, 'big.txt'), 'x'.repeat(11));
    expect(await read([work], join(work, 'exact.txt'), 10)).toEqual({ kind: 'file', text: 'x'.repeat(10), size: 10 });
    expect(await read([work], join(work, 'big.txt'), 10)).toEqual({ kind: 'oversized', size: 11 });
  });

  it('reads nothing outside the working directories, whether named so or led there by a symlinked folder', async () => {
    const work = temp.make();
    const outside = temp.make('outside-');
    writeFileSync(join(outside, 'secret'), 'secret');
    mkdirSync(join(work, 'sub'));
    symlinkSync(outside, join(work, 'sub', 'out'));
    symlinkSync('../../', join(work, 'sub', 'up'));
    expect(await read([work], join(outside, 'secret'))).toEqual({ kind: 'left-working-directory' });
    expect(await read([work], `${work}-sibling/secret`)).toEqual({ kind: 'left-working-directory' });
    expect(await read([work], join(work, 'sub', 'out', 'secret'))).toEqual({ kind: 'left-working-directory' });
    expect(await read([work], join(work, 'sub', 'up', outside.split('/').pop()!, 'secret'))).toEqual({ kind: 'left-working-directory' });
  });

  it('follows a symlinked folder that leads back inside, resolving `..` from where the link really is', async () => {
    const work = temp.make();
    const other = temp.make('other-');
    mkdirSync(join(work, 'real', 'nested'), { recursive: true });
    mkdirSync(join(work, 'lib'));
    writeFileSync(join(work, 'lib', 'l.txt'), 'lib');
    writeFileSync(join(other, 'o.txt'), 'other');
    symlinkSync('real/nested', join(work, 'alias'));
    // From real/nested, `../../lib` is work/lib, though the path says alias/.
    symlinkSync('../../lib', join(work, 'real', 'nested', 'up'));
    symlinkSync(other, join(work, 'to-other'));
    writeFileSync(join(work, 'real', 'nested', 'n.txt'), 'nested');
    expect(await read([work], join(work, 'alias', 'n.txt'))).toEqual({ kind: 'file', text: 'nested', size: 6 });
    expect(await read([work], join(work, 'alias', 'up', 'l.txt'))).toEqual({ kind: 'file', text: 'lib', size: 3 });
    expect(await read([work, other], join(work, 'to-other', 'o.txt'))).toEqual({ kind: 'file', text: 'other', size: 5 });
    expect(await read([work], join(work, 'to-other', 'o.txt'))).toEqual({ kind: 'left-working-directory' });
  });

  it('gives up on folder links that lead round in circles', async () => {
    const work = temp.make();
    symlinkSync('loop', join(work, 'loop'));
    symlinkSync('b', join(work, 'a'));
    symlinkSync('a', join(work, 'b'));
    expect(await read([work], join(work, 'loop', 'x.txt'))).toEqual({ kind: 'left-working-directory' });
    expect(await read([work], join(work, 'a', 'x.txt'))).toEqual({ kind: 'left-working-directory' });
  });

  it('passes on errors other than a missing or linked path', async () => {
    const work = temp.make();
    await expect(readContained([work], join(work, 'x'.repeat(300), 'a.txt'), MAX)).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
    await expect(readContained([work], join(work, 'x'.repeat(300)), MAX)).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
  });
});
