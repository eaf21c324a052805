import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteIntent, recoverInterruptedWrites } from '../../server/disk/write-intent.js';
import { TempDirs } from '../helpers/workspace.js';
import { blobId } from '../helpers/git-ids.js';
import { swapNames } from './swap-names.js';

const temp = new TempDirs();
afterEach(() => temp.cleanup());

/** The states a SIGKILL can leave one write in, recovered as the next start does. */
describe('recovery of writes a crash interrupted', () => {
  it('puts back a file moved aside, removes our temporary files, and touches nothing it did not write', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    const outside = temp.make('outside-');
    mkdirSync(join(work, 'sub'));
    // a.txt: moved aside, new content not yet linked in.
    writeFileSync(join(work, swapNames('aaaaaaaaaaaa').aside), 'a before\n');
    writeFileSync(join(work, swapNames('aaaaaaaaaaaa').tmp), 'a after\n');
    // sub/b.txt: replaced, the moved-aside version not yet removed.
    writeFileSync(join(work, 'sub', 'b.txt'), 'b after\n');
    writeFileSync(join(work, 'sub', swapNames('bbbbbbbbbbbb').aside), 'b before\n');
    // c.txt: replaced, then saved again by the user; what sits aside is neither recorded version.
    writeFileSync(join(work, 'c.txt'), 'c saved by the user\n');
    writeFileSync(join(work, swapNames('cccccccccccc').aside), 'c unknown\n');
    // Not ours: a look-alike no intent names, and an intent entry outside the working directory.
    writeFileSync(join(work, swapNames('dddddddddddd').tmp), 'a user file\n');
    writeFileSync(join(outside, swapNames('eeeeeeeeeeee').tmp), 'elsewhere\n');
    await WriteIntent.begin(store, [
      { absPath: join(work, 'a.txt'), names: swapNames('aaaaaaaaaaaa'), expectedOid: blobId('a before\n'), writtenOid: blobId('a after\n') },
      { absPath: join(work, 'sub', 'b.txt'), names: swapNames('bbbbbbbbbbbb'), expectedOid: blobId('b before\n'), writtenOid: blobId('b after\n') },
      { absPath: join(work, 'c.txt'), names: swapNames('cccccccccccc'), expectedOid: blobId('c before\n'), writtenOid: blobId('c after\n') },
      { absPath: join(outside, 'e.txt'), names: swapNames('eeeeeeeeeeee') },
    ]);

    const report = await recoverInterruptedWrites(store, [work]);

    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('a before\n');
    expect(readFileSync(join(work, 'sub', 'b.txt'), 'utf8')).toBe('b after\n');
    expect(readdirSync(join(work, 'sub'))).toEqual(['b.txt']);
    expect(report.restored).toEqual([join(work, 'a.txt')]);
    // A version no record holds is never deleted.
    expect(readFileSync(join(work, swapNames('cccccccccccc').aside), 'utf8')).toBe('c unknown\n');
    expect(report.kept).toEqual([join(work, swapNames('cccccccccccc').aside)]);
    expect(existsSync(join(work, swapNames('dddddddddddd').tmp))).toBe(true);
    expect(existsSync(join(outside, swapNames('eeeeeeeeeeee').tmp))).toBe(true);
    // Recovered once: the intent is gone.
    expect(await recoverInterruptedWrites(store, [work])).toEqual({ removed: 0, restored: [], kept: [], finished: [], unfinished: [] });
  });
});
