/**
 * The files of one operation, written one by one and settled together: an
 * operation either leaves every file as planned, or puts every file back as
 * it was, never over what a user saved since and never losing what a
 * program wrote to a file while it was replaced.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContainedDirs } from '../../server/disk/contained-dirs.js';
import { ChangedWhileRunningError, newSwapNames, type ExpectedVersion, type NewVersion } from '../../server/disk/file-swap.js';
import { HeldOpenError, WriteBatch, type BatchWrite } from '../../server/disk/write-batch.js';
import { blobId } from '../helpers/git-ids.js';
import { holdOpenForWriting, killWriters } from '../helpers/open-writer.js';
import { TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const opened: ContainedDirs[] = [];
afterEach(async () => {
  killWriters();
  for (const dirs of opened.splice(0)) await dirs.close();
  temp.cleanup();
});

function batchIn(work: string): WriteBatch {
  const dirs = new ContainedDirs([work]);
  opened.push(dirs);
  return new WriteBatch(dirs);
}

function write(work: string, display: string, before: string | undefined, after: string | undefined): BatchWrite {
  const expected: ExpectedVersion = before === undefined ? undefined : { oid: blobId(before), mode: '100644' };
  const next: NewVersion = after === undefined ? undefined : { content: Buffer.from(after), mode: '100644' };
  return { absPath: join(work, display), display, names: newSwapNames(), expected, next };
}

/** Every file under `dir`, relative, with its content. */
function tree(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + entry.name;
    if (entry.isDirectory()) Object.assign(out, tree(join(dir, entry.name), `${rel}/`));
    else out[rel] = readFileSync(join(dir, entry.name), 'utf8');
  }
  return out;
}

describe('WriteBatch', () => {
  it('writes, settles and releases: every file as planned, nothing else left', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, 'gone.txt'), 'gone\n');
    const batch = batchIn(work);
    expect(batch.count).toBe(0);
    await batch.write(write(work, 'a.txt', 'a before\n', 'a after\n'));
    await batch.write(write(work, 'new/b.txt', undefined, 'b\n'));
    await batch.write(write(work, 'gone.txt', 'gone\n', undefined));
    expect(batch.count).toBe(3);
    await batch.settle();
    await batch.release();
    expect(tree(work)).toEqual({ 'a.txt': 'a after\n', 'new/b.txt': 'b\n' });
  });

  it('writes nothing of a file that changed since the plan, and counts only what it wrote', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'saved by the user\n');
    const batch = batchIn(work);
    await expect(batch.write(write(work, 'a.txt', 'a before\n', 'a after\n'))).rejects.toThrow(ChangedWhileRunningError);
    expect(batch.count).toBe(0);
    expect(tree(work)).toEqual({ 'a.txt': 'saved by the user\n' });
  });

  it('rolls back every file written, newest first, and removes the folders it made', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, 'gone.txt'), 'gone\n');
    const batch = batchIn(work);
    await batch.write(write(work, 'a.txt', 'a before\n', 'a after\n'));
    await batch.write(write(work, 'new/deeper/b.txt', undefined, 'b\n'));
    await batch.write(write(work, 'gone.txt', 'gone\n', undefined));
    expect(await batch.rollBack()).toEqual({ failed: [], kept: [] });
    expect(tree(work)).toEqual({ 'a.txt': 'a before\n', 'gone.txt': 'gone\n' });
  });

  it('leaves a file edited since it was written as the user left it, and puts back the rest', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src'));
    writeFileSync(join(work, 'src', 'a.txt'), 'a before\n');
    writeFileSync(join(work, 'b.txt'), 'b before\n');
    const batch = batchIn(work);
    await batch.write(write(work, 'src/a.txt', 'a before\n', 'a after\n'));
    await batch.write(write(work, 'b.txt', 'b before\n', 'b after\n'));
    writeFileSync(join(work, 'src', 'a.txt'), 'edited by the user\n');
    expect(await batch.rollBack()).toEqual({ failed: ['src/a.txt'], kept: [] });
    // The version before the operation went: the safety checkpoint holds it.
    expect(tree(work)).toEqual({ 'src/a.txt': 'edited by the user\n', 'b.txt': 'b before\n' });
  });

  it('keeps, and names, a version replaced that a program wrote to, when the file cannot go back', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'src'));
    writeFileSync(join(work, 'src', 'a.txt'), 'a before\n');
    const w = write(work, 'src/a.txt', 'a before\n', 'a after\n');
    const batch = batchIn(work);
    await batch.write(w);
    writeFileSync(join(work, 'src', w.names.aside), 'written meanwhile\n', { flag: 'a' });
    writeFileSync(join(work, 'src', 'a.txt'), 'edited by the user\n');
    expect(await batch.rollBack()).toEqual({ failed: ['src/a.txt'], kept: [`src/${w.names.aside}`] });
    expect(tree(work)).toEqual({ 'src/a.txt': 'edited by the user\n', [`src/${w.names.aside}`]: 'a before\nwritten meanwhile\n' });
  });

  it('refuses to settle when a version replaced was written to since, and the rollback puts that version back', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, 'b.txt'), 'b before\n');
    const a = write(work, 'a.txt', 'a before\n', 'a after\n');
    const batch = batchIn(work);
    await batch.write(a);
    await batch.write(write(work, 'new.txt', undefined, 'new\n'));
    await batch.write(write(work, 'b.txt', 'b before\n', 'b after\n'));
    writeFileSync(join(work, a.names.aside), 'more\n', { flag: 'a' });
    const error = await batch.settle().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ChangedWhileRunningError);
    expect((error as ChangedWhileRunningError).message).toBe(`${join(work, 'a.txt')} changed while the operation ran (it was written to while being replaced)`);
    expect(await batch.rollBack()).toEqual({ failed: [], kept: [] });
    expect(tree(work)).toEqual({ 'a.txt': 'a before\nmore\n', 'b.txt': 'b before\n' });
  });

  it('refuses to settle while a program holds a version replaced open for writing, and keeps our version it may write to', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    writeFileSync(join(work, 'b.txt'), 'b before\n');
    const batch = batchIn(work);
    await holdOpenForWriting(join(work, 'a.txt'));
    const a = write(work, 'a.txt', 'a before\n', 'a after\n');
    await batch.write(a);
    await batch.write(write(work, 'b.txt', 'b before\n', 'b after\n'));
    const error = await batch.settle().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HeldOpenError);
    expect((error as HeldOpenError).absPath).toBe(join(work, 'a.txt'));
    expect((error as HeldOpenError).message).toMatch(new RegExp(`^${join(work, 'a.txt')} is held open for writing by sleep \\(pid \\d+\\)$`));
    expect(await batch.rollBack()).toEqual({ failed: [], kept: [] });
    expect(tree(work)).toEqual({ 'a.txt': 'a before\n', 'b.txt': 'b before\n' });
  });

  it('keeps our version, taken off the name by a rollback, while a program holds it open for writing', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    const a = write(work, 'a.txt', 'a before\n', 'a after\n');
    const batch = batchIn(work);
    await batch.write(a);
    await holdOpenForWriting(join(work, 'a.txt'));
    expect(await batch.rollBack()).toEqual({ failed: [], kept: [a.names.tmp] });
    expect(tree(work)).toEqual({ 'a.txt': 'a before\n', [a.names.tmp]: 'a after\n' });
  });

  it('makes no folder to remove a file from a folder that is gone', async () => {
    const work = temp.make();
    const batch = batchIn(work);
    await expect(batch.write(write(work, 'gone/a.txt', 'a\n', undefined))).rejects.toThrow();
    expect(readdirSync(work)).toEqual([]);
  });

  it('leaves a file it created and the user edited since', async () => {
    const work = temp.make();
    writeFileSync(join(work, 'a.txt'), 'a before\n');
    const batch = batchIn(work);
    await batch.write(write(work, 'created.txt', undefined, 'ours\n'));
    writeFileSync(join(work, 'created.txt'), 'ours\nand theirs\n');
    const result = await batch.rollBack();
    expect(result.failed).toEqual(['created.txt']);
    expect(tree(work)).toEqual({ 'a.txt': 'a before\n', 'created.txt': 'ours\nand theirs\n' });
    expect(existsSync(join(work, 'created.txt'))).toBe(true);
  });

  it('rolls back through the folder each file was written in, however many other folders were opened since', async () => {
    const work = temp.make();
    mkdirSync(join(work, 'first'));
    writeFileSync(join(work, 'first', 'a.txt'), 'a before\n');
    const before: Record<string, string> = { 'first/a.txt': 'a before\n' };
    // More folders than stay open at once (128): the first one written in must not be among those closed.
    const others = Array.from({ length: 140 }, (_, i) => `d${String(i).padStart(3, '0')}`);
    for (const d of others) {
      mkdirSync(join(work, d));
      writeFileSync(join(work, d, 'f.txt'), `${d} before\n`);
      before[`${d}/f.txt`] = `${d} before\n`;
    }
    const batch = batchIn(work);
    await batch.write(write(work, 'first/a.txt', 'a before\n', 'a after\n'));
    for (const d of others) await batch.write(write(work, `${d}/f.txt`, `${d} before\n`, `${d} after\n`));
    expect(await batch.rollBack()).toEqual({ failed: [], kept: [] });
    expect(tree(work)).toEqual(before);
  });
});
