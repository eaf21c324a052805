import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteIntent, recoverInterruptedWrites } from '../../server/disk/write-intent.js';
import { TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
afterEach(() => temp.cleanup());

const blobId = (content: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(content)}\0`)
    .update(content)
    .digest('hex');
const names = (id: string) => ({ tmp: `.changeset-${id}.tmp`, aside: `.changeset-${id}.old` });

/** The states a SIGKILL can leave one write in, recovered as the next start does. */
describe('recovery of writes a crash interrupted', () => {
  it('puts back a file moved aside, removes our temporary files, and touches nothing it did not write', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    const outside = temp.make('outside-');
    mkdirSync(join(work, 'sub'));
    // a.txt: moved aside, new content not yet linked in.
    writeFileSync(join(work, names('aaaaaaaaaaaa').aside), 'a before\n');
    writeFileSync(join(work, names('aaaaaaaaaaaa').tmp), 'a after\n');
    // sub/b.txt: replaced, the moved-aside version not yet removed.
    writeFileSync(join(work, 'sub', 'b.txt'), 'b after\n');
    writeFileSync(join(work, 'sub', names('bbbbbbbbbbbb').aside), 'b before\n');
    // c.txt: replaced, then saved again by the user; what sits aside is neither recorded version.
    writeFileSync(join(work, 'c.txt'), 'c saved by the user\n');
    writeFileSync(join(work, names('cccccccccccc').aside), 'c unknown\n');
    // Not ours: a look-alike no intent names, and an intent entry outside the working directory.
    writeFileSync(join(work, names('dddddddddddd').tmp), 'a user file\n');
    writeFileSync(join(outside, names('eeeeeeeeeeee').tmp), 'elsewhere\n');
    await WriteIntent.begin(store, [
      { absPath: join(work, 'a.txt'), names: names('aaaaaaaaaaaa'), expectedOid: blobId('a before\n'), writtenOid: blobId('a after\n') },
      { absPath: join(work, 'sub', 'b.txt'), names: names('bbbbbbbbbbbb'), expectedOid: blobId('b before\n'), writtenOid: blobId('b after\n') },
      { absPath: join(work, 'c.txt'), names: names('cccccccccccc'), expectedOid: blobId('c before\n'), writtenOid: blobId('c after\n') },
      { absPath: join(outside, 'e.txt'), names: names('eeeeeeeeeeee') },
    ]);

    const report = await recoverInterruptedWrites(store, [work]);

    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a before\n');
    expect(readFileSync(join(work, 'sub', 'b.txt'), 'utf8')).toBe('b after\n');
    expect(readdirSync(join(work, 'sub'))).toEqual(['b.txt']);
    expect(report.restored).toEqual([join(work, 'a.txt')]);
    // A version no record holds is never deleted.
    expect(readFileSync(join(work, names('cccccccccccc').aside), 'utf8')).toBe('c unknown\n');
    expect(report.kept).toEqual([join(work, names('cccccccccccc').aside)]);
    expect(existsSync(join(work, names('dddddddddddd').tmp))).toBe(true);
    expect(existsSync(join(outside, names('eeeeeeeeeeee').tmp))).toBe(true);
    // Recovered once: the intent is gone.
    expect(await recoverInterruptedWrites(store, [work])).toEqual({ removed: 0, restored: [], kept: [], finished: [], unfinished: [] });
  });
});
