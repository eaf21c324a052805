/**
 * One file replaced, created or removed by an operation, only when it still
 * holds the version the operation planned against: what a user saved in the
 * meantime is never overwritten, and no temporary file is left behind.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContainedDirs, type PinnedDir } from '../../server/disk/contained-dirs.js';
import {
  ChangedWhileRunningError,
  changedSince,
  newSwapNames,
  releaseReplaced,
  replaceFile,
  swapFile,
  swapTestHooks,
  TEMP_EXCLUDES,
  TEMP_NAME,
  undoReplacement,
} from '../../server/disk/file-swap.js';
import { readDiskFile } from '../../server/disk/workspace-file.js';
import { blobId } from '../helpers/git-ids.js';
import { TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const opened: ContainedDirs[] = [];
afterEach(async () => {
  delete swapTestHooks.whileAside;
  for (const dirs of opened.splice(0)) await dirs.close();
  temp.cleanup();
});

async function dirOf(work: string, rel = 'a.txt'): Promise<PinnedDir> {
  const dirs = new ContainedDirs([work]);
  opened.push(dirs);
  return dirs.parentOf(join(work, rel), true, true);
}

const text = (s: string) => ({ content: Buffer.from(s), mode: '100644' as const });
const expect644 = (s: string) => ({ oid: blobId(s), mode: '100644' as const });
const name = (s: string) => Buffer.from(s);

async function failure(p: Promise<unknown>): Promise<ChangedWhileRunningError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChangedWhileRunningError);
  return error as ChangedWhileRunningError;
}

describe('temporary names', () => {
  it('are short, fixed-length, recognisable, and different for every write', () => {
    const a = newSwapNames();
    const b = newSwapNames();
    expect(a.tmp).toMatch(/^\.changeset-[0-9a-f]{12}\.tmp$/);
    expect(a.aside).toBe(a.tmp.replace(/\.tmp$/, '.old'));
    expect(TEMP_NAME.test(a.tmp) && TEMP_NAME.test(a.aside)).toBe(true);
    expect(a.tmp).not.toBe(b.tmp);
    for (const notOurs of ['x.changeset-0123456789ab.tmp', '.changeset-0123456789ab.tmp.bak', '.changeset-0123456789a.tmp', '.changeset-0123456789AB.old']) {
      expect(TEMP_NAME.test(notOurs)).toBe(false);
    }
    expect(TEMP_EXCLUDES).toEqual(['.changeset-????????????.tmp', '.changeset-????????????.old']);
  });
});

describe('swapFile', () => {
  it('replaces the version planned against and leaves no temporary file', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    await swapFile(await dirOf(work), name('a.txt'), newSwapNames(), expect644('before\n'), text('after\n'));
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('after\n');
    expect(readdirSync(work)).toEqual(['a.txt']);
  });

  it('creates a file that must not exist, and removes one', async () => {
    const work = temp.make();
    const dir = await dirOf(work);
    await swapFile(dir, name('a.txt'), newSwapNames(), undefined, text('new\n'));
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('new\n');
    await swapFile(dir, name('a.txt'), newSwapNames(), expect644('new\n'), undefined);
    expect(readdirSync(work)).toEqual([]);
  });

  it('creates the folders a new file needs', async () => {
    const work = temp.make();
    const dir = await dirOf(work, 'deep/er/a.txt');
    await swapFile(dir, name('a.txt'), newSwapNames(), undefined, text('new\n'));
    expect(readFileSync(join(work, 'deep', 'er', 'a.txt'), 'utf8')).toBe('new\n');
  });

  it('refuses, writing nothing, when the file was saved with other content since', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'saved by the user\n');
    const error = await failure(swapFile(await dirOf(work), name('a.txt'), newSwapNames(), expect644('before\n'), text('after\n')));
    expect(error.message).toBe(`${join(work, 'a.txt')} changed while the operation ran (its content changed)`);
    expect(error.detail).toBe('its content changed');
    expect(error.absPath).toBe(join(work, 'a.txt'));
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('saved by the user\n');
    expect(readdirSync(work)).toEqual(['a.txt']);
  });

  it('refuses a file of the same size with other content', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'BEFORE\n');
    const error = await failure(swapFile(await dirOf(work), name('a.txt'), newSwapNames(), expect644('before\n'), undefined));
    expect(error.detail).toBe('its content changed');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('BEFORE\n');
  });

  it('refuses when the file was deleted, made a directory, a FIFO, or had its mode changed', async () => {
    const work = temp.make();
    const dir = await dirOf(work);
    expect((await failure(swapFile(dir, name('a.txt'), newSwapNames(), expect644('x\n'), text('y\n')))).detail).toBe('it was deleted');
    mkdirSync(join(work, 'd'));
    expect((await failure(swapFile(dir, name('d'), newSwapNames(), expect644('x\n'), text('y\n')))).detail).toBe('it is a directory now');
    execFileSync('mkfifo', [join(work, 'fifo')]);
    expect((await failure(swapFile(dir, name('fifo'), newSwapNames(), expect644('x\n'), text('y\n')))).detail).toBe('it is not a regular file now');
    writeFileSync(join(work, 'run.sh'), 'x\n');
    chmodSync(join(work, 'run.sh'), 0o755);
    expect((await failure(swapFile(dir, name('run.sh'), newSwapNames(), expect644('x\n'), text('y\n')))).detail).toBe('its mode changed');
    writeFileSync(join(work, 'plain'), 'x\n');
    const plainAsExec = { oid: blobId('x\n'), mode: '100755' as const };
    expect((await failure(swapFile(dir, name('plain'), newSwapNames(), plainAsExec, text('y\n')))).detail).toBe('its mode changed');
    expect(readFileSync(join(work, 'run.sh'), 'utf8')).toBe('x\n');
    expect(readdirSync(work).sort()).toEqual(['d', 'fifo', 'plain', 'run.sh']);
  });

  it('refuses to create a file someone created first, and keeps theirs', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'theirs\n');
    const error = await failure(swapFile(await dirOf(work), name('a.txt'), newSwapNames(), undefined, text('ours\n')));
    expect(error.detail).toBe('it was created');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('theirs\n');
    expect(readdirSync(work)).toEqual(['a.txt']);
  });

  it('writes an executable with the execute bits its read bits allow, and a plain file without any', async () => {
    const work = temp.make();
    const dir = await dirOf(work);
    writeFileSync(join(work, 'run.sh'), 'old\n');
    await swapFile(dir, name('run.sh'), newSwapNames(), expect644('old\n'), { content: Buffer.from('new\n'), mode: '100755', perm: 0o640 });
    expect(statSync(join(work, 'run.sh')).mode & 0o7777).toBe(0o750);
    await swapFile(
      dir,
      name('run.sh'),
      newSwapNames(),
      { oid: blobId('new\n'), mode: '100755' },
      { content: Buffer.from('plain\n'), mode: '100644', perm: 0o755 },
    );
    expect(statSync(join(work, 'run.sh')).mode & 0o7777).toBe(0o644);
    await swapFile(dir, name('new.sh'), newSwapNames(), undefined, { content: Buffer.from('#!/bin/sh\n'), mode: '100755' });
    expect(statSync(join(work, 'new.sh')).mode & 0o111).not.toBe(0);
    await swapFile(dir, name('new.txt'), newSwapNames(), undefined, text('plain\n'));
    expect(statSync(join(work, 'new.txt')).mode & 0o111).toBe(0);
    // Bits the umask would take away are kept too.
    const umask = process.umask(0o022);
    try {
      await swapFile(dir, name('shared.txt'), newSwapNames(), undefined, { content: Buffer.from('x\n'), mode: '100644', perm: 0o666 });
    } finally {
      process.umask(umask);
    }
    expect(statSync(join(work, 'shared.txt')).mode & 0o7777).toBe(0o666);
    // A file that had no permission bits read keeps them exactly.
    await swapFile(dir, name('locked'), newSwapNames(), undefined, { content: Buffer.from('x\n'), mode: '100755', perm: 0o300 });
    expect(statSync(join(work, 'locked')).mode & 0o7777).toBe(0o300);
  });

  it('gives the new version the owner it had, when it can', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'old\n');
    await swapFile(await dirOf(work), name('a.txt'), newSwapNames(), expect644('old\n'), {
      content: Buffer.from('new\n'),
      mode: '100644',
      uid: 1234,
      gid: 2345,
    });
    const st = statSync(join(work, 'a.txt'));
    if (process.getuid?.() === 0) expect([st.uid, st.gid]).toEqual([1234, 2345]);
    else expect(st.uid).toBe(process.getuid?.());
  });

  it('replaces a symbolic link by its target text, and writes one', async () => {
    const work = temp.make();
    const dir = await dirOf(work);
    symlinkSync('old-target', join(work, 'link'));
    await swapFile(dir, name('link'), newSwapNames(), { oid: blobId('old-target'), mode: '120000' }, { content: Buffer.from('new-target'), mode: '120000' });
    expect(readlinkSync(join(work, 'link'))).toBe('new-target');
    const error = await failure(swapFile(dir, name('link'), newSwapNames(), { oid: blobId('old-target'), mode: '120000' }, undefined));
    expect(error.detail).toBe('its content changed');
    expect(readlinkSync(join(work, 'link'))).toBe('new-target');
  });

  it('trusts an identity still matching without reading, and reads when it no longer matches', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const disk = await readDiskFile(join(work, 'a.txt'));
    const dir = await dirOf(work);
    // The identity read says the file is unchanged.
    await swapFile(dir, name('a.txt'), newSwapNames(), { oid: disk!.oid, mode: '100644', identity: disk!.identity }, text('after\n'));
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('after\n');
    // An identity of an older version: the content decides.
    const error = await failure(
      swapFile(dir, name('a.txt'), newSwapNames(), { oid: blobId('before\n'), mode: '100644', identity: disk!.identity }, text('x\n')),
    );
    expect(error.detail).toBe('its content changed');
  });

  it('puts back the version a writer kept writing to while it was replaced, and says where the new one went', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const dir = await dirOf(work);
    const names = newSwapNames();
    const done = await replaceFile(dir, name('a.txt'), names, expect644('before\n'), text('after\n'));
    // A program that had the file open writes to it after the swap.
    writeFileSync(join(work, names.aside), 'before, and more\n', { flag: 'a' });
    expect(await changedSince(dir, names.aside, done.replaced!)).toBe('it was written to while being replaced');
    // What swapFile does next: the new version leaves, the written-to one goes back.
    const taken = await undoReplacement(dir, name('a.txt'), names, done);
    expect(taken?.name).toBe(names.tmp);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('before\nbefore, and more\n');
    expect(readFileSync(join(work, names.tmp), 'utf8')).toBe('after\n');
    expect(await changedSince(dir, taken!.name, taken!.version)).toBeUndefined();
    await releaseReplaced(dir, names);
    await releaseReplaced(dir, names);
    expect(readdirSync(work).sort()).toEqual([names.tmp, 'a.txt'].sort());
  });
});

describe('replaceFile', () => {
  it('keeps the version replaced under the aside name, as checked, until released', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const dir = await dirOf(work);
    const names = newSwapNames();
    const done = await replaceFile(dir, name('a.txt'), names, expect644('before\n'), text('after\n'));
    expect(readFileSync(join(work, names.aside), 'utf8')).toBe('before\n');
    expect(existsSync(join(work, names.tmp))).toBe(false);
    expect(done.replaced?.oid).toBe(blobId('before\n'));
    expect(done.placed).toMatchObject({ oid: blobId('after\n'), mode: '100644' });
    expect(done.placed?.identity.ino).toBe(BigInt(lstatSync(join(work, 'a.txt')).ino));
    expect(done.placed?.identity.size).toBe(6n);
    expect(await changedSince(dir, names.aside, done.replaced!)).toBeUndefined();
    await releaseReplaced(dir, names);
    expect(readdirSync(work)).toEqual(['a.txt']);
  });

  it('only takes the name off when removing, and places nothing', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const names = newSwapNames();
    const done = await replaceFile(await dirOf(work), name('a.txt'), names, expect644('before\n'), undefined);
    expect(done.placed).toBeUndefined();
    expect(done.replaced?.oid).toBe(blobId('before\n'));
    expect(readdirSync(work)).toEqual([names.aside]);
  });

  it('reports nothing replaced when creating', async () => {
    const work = temp.make();
    const done = await replaceFile(await dirOf(work), name('a.txt'), newSwapNames(), undefined, text('new\n'));
    expect(done.replaced).toBeUndefined();
    expect(done.placed?.oid).toBe(blobId('new\n'));
    expect(readdirSync(work)).toEqual(['a.txt']);
  });

  it('keeps a file saved in the instant the name was free, and the version before it', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const dir = await dirOf(work);
    const names = newSwapNames();
    // Saved while the swap holds with the file moved aside.
    let aside: boolean | undefined;
    swapTestHooks.whileAside = async () => {
      aside = existsSync(join(work, names.aside)) && !existsSync(join(work, 'a.txt'));
      writeFileSync(join(work, 'a.txt'), 'saved meanwhile\n');
    };
    const error = await failure(replaceFile(dir, name('a.txt'), names, expect644('before\n'), text('after\n')));
    expect(aside).toBe(true);
    expect(error.detail).toBe(`it was saved while being replaced; the version before that is kept as ${join(work, names.aside)}`);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('saved meanwhile\n');
    expect(readFileSync(join(work, names.aside), 'utf8')).toBe('before\n');
    expect(readdirSync(work).sort()).toEqual([names.aside, 'a.txt'].sort());
  });

  it('keeps a file created in the instant before a new one is linked in', async () => {
    const work = temp.make();
    const dir = await dirOf(work);
    const names = newSwapNames();
    // Created while the swap holds with our new version written beside the free name.
    let beside: boolean | undefined;
    swapTestHooks.whileAside = async () => {
      beside = existsSync(join(work, names.tmp)) && !existsSync(join(work, 'a.txt'));
      writeFileSync(join(work, 'a.txt'), 'theirs\n');
    };
    expect((await failure(replaceFile(dir, name('a.txt'), names, undefined, text('ours\n')))).detail).toBe('it was created');
    expect(beside).toBe(true);
    expect(readdirSync(work)).toEqual(['a.txt']);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('theirs\n');
  });
});

describe('undoReplacement', () => {
  it('puts back the version replaced, and hands back ours under a temporary name', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const dir = await dirOf(work);
    const names = newSwapNames();
    const done = await replaceFile(dir, name('a.txt'), names, expect644('before\n'), text('after\n'));
    const taken = await undoReplacement(dir, name('a.txt'), names, done);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('before\n');
    expect(taken).toMatchObject({ name: names.tmp, version: { oid: blobId('after\n') } });
    expect(readFileSync(join(work, names.tmp), 'utf8')).toBe('after\n');
    // The aside name is still a second name of the file back in place.
    expect(lstatSync(join(work, names.aside)).ino).toBe(lstatSync(join(work, 'a.txt')).ino);
  });

  it('removes a file it created, handing it back under the aside name', async () => {
    const work = temp.make();
    const dir = await dirOf(work);
    const names = newSwapNames();
    const done = await replaceFile(dir, name('a.txt'), names, undefined, text('new\n'));
    const taken = await undoReplacement(dir, name('a.txt'), names, done);
    expect(taken?.name).toBe(names.aside);
    expect(readdirSync(work)).toEqual([names.aside]);
  });

  it('puts back a file it removed, unless it was created again since', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const dir = await dirOf(work);
    const names = newSwapNames();
    const done = await replaceFile(dir, name('a.txt'), names, expect644('before\n'), undefined);
    expect(await undoReplacement(dir, name('a.txt'), names, done)).toBeUndefined();
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('before\n');

    const again = await replaceFile(dir, name('a.txt'), names, expect644('before\n'), undefined);
    writeFileSync(join(work, 'a.txt'), 'created again\n');
    const error = await failure(undoReplacement(dir, name('a.txt'), names, again));
    expect(error.detail).toBe('it was created again since');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('created again\n');
  });

  it('leaves a file edited since the write as the user left it', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'before\n');
    const dir = await dirOf(work);
    const names = newSwapNames();
    const done = await replaceFile(dir, name('a.txt'), names, expect644('before\n'), text('after\n'));
    writeFileSync(join(work, 'a.txt'), 'edited by the user\n');
    const error = await failure(undoReplacement(dir, name('a.txt'), names, done));
    expect(error.detail).toBe('its content changed');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('edited by the user\n');
    expect(readFileSync(join(work, names.aside), 'utf8')).toBe('before\n');
  });
});

describe('changedSince', () => {
  it('compares a racy version by content, and a settled one by identity', async () => {
    const work = temp.make();
    writeFileSync(join(work, '.changeset-0123456789ab.old'), 'same\n');
    const dir = await dirOf(work);
    const st = lstatSync(join(work, '.changeset-0123456789ab.old'), { bigint: true });
    const identity = { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs };
    const tmpName = '.changeset-0123456789ab.old';
    expect(await changedSince(dir, tmpName, { oid: blobId('same\n'), mode: '100644', identity: { ...identity, racy: true } })).toBeUndefined();
    expect(await changedSince(dir, tmpName, { oid: blobId('SAME\n'), mode: '100644', identity: { ...identity, racy: true } })).toBe(
      'it was written to while being replaced',
    );
    expect(await changedSince(dir, tmpName, { oid: blobId('SAME\n'), mode: '100644', identity: { ...identity, racy: false } })).toBeUndefined();
    for (const other of [{ ino: st.ino + 1n }, { dev: st.dev + 1n }, { size: st.size + 1n }, { mtimeNs: st.mtimeNs + 1n }]) {
      expect(await changedSince(dir, tmpName, { oid: blobId('same\n'), mode: '100644', identity: { ...identity, ...other, racy: false } })).toBe(
        'it was written to while being replaced',
      );
    }
    // Gone: nothing was written to it that could be lost.
    expect(await changedSince(dir, '.changeset-ffffffffffff.old', { oid: blobId('x'), mode: '100644', identity: { ...identity, racy: true } })).toBeUndefined();
  });

  it('reads a symbolic link by its target text', async () => {
    const work = temp.make();
    symlinkSync('target', join(work, '.changeset-0123456789ab.old'));
    const dir = await dirOf(work);
    const st = lstatSync(join(work, '.changeset-0123456789ab.old'), { bigint: true });
    const identity = { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, racy: true };
    expect(await changedSince(dir, '.changeset-0123456789ab.old', { oid: blobId('target'), mode: '120000', identity })).toBeUndefined();
  });

  it('reads a link target that is not UTF-8 by its bytes, racy or checked in place', async () => {
    const work = temp.make();
    // 0xFF is never UTF-8: read as text it would become the replacement character, another target.
    const target = Buffer.from([0x74, 0xff]);
    symlinkSync(target, join(work, '.changeset-0123456789ab.old'));
    const dir = await dirOf(work);
    const st = lstatSync(join(work, '.changeset-0123456789ab.old'), { bigint: true });
    const identity = { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, racy: true };
    expect(await changedSince(dir, '.changeset-0123456789ab.old', { oid: blobId(target), mode: '120000', identity })).toBeUndefined();
    symlinkSync(target, join(work, 'link'));
    await swapFile(dir, name('link'), newSwapNames(), { oid: blobId(target), mode: '120000' }, { content: Buffer.from('new-target'), mode: '120000' });
    expect(readlinkSync(join(work, 'link'))).toBe('new-target');
  });
});
