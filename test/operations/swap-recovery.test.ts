import { linkSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteIntent, recoverInterruptedWrites } from '../../server/disk/write-intent.js';
import { TempDirs } from '../helpers/workspace.js';
import { blobId } from '../helpers/git-ids.js';
import { swapNames } from './swap-names.js';

const temp = new TempDirs();
afterEach(() => temp.cleanup());

/** States of the swap a SIGKILL can leave that only its rollback and final check create, recovered as the next start does. */
describe('recovery after a kill during a swap or its rollback', () => {
  it('keeps a version someone saved that a rollback had taken off the name, and puts the version before back', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    const n = swapNames('aaaaaaaaaaaa');
    // Rollback of a.txt: the name taken (it held a save by rename, not ours), the version before not yet linked back.
    writeFileSync(join(work, n.tmp), 'saved by an editor meanwhile\n');
    writeFileSync(join(work, n.aside), 'before the operation\n');
    await WriteIntent.begin(store, [
      { absPath: join(work, 'a.txt'), names: n, expectedOid: blobId('before the operation\n'), writtenOid: blobId('written by the operation\n') },
    ]);

    const report = await recoverInterruptedWrites(store, [work]);

    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('before the operation\n');
    expect(readFileSync(join(work, n.tmp), 'utf8')).toBe('saved by an editor meanwhile\n');
    expect(report.kept).toEqual([join(work, n.tmp)]);
  });

  it('removes a second name of the file in place and our own temporary files, whatever was written to the file since', async () => {
    const work = temp.make();
    const store = temp.make('store-');
    const n = swapNames('bbbbbbbbbbbb');
    const partial = swapNames('cccccccccccc');
    // b.txt: put back by a rollback (its aside still a second name of it), then appended to; our version taken off beside it.
    writeFileSync(join(work, 'b.txt'), 'before the operation\nappended meanwhile\n');
    linkSync(join(work, 'b.txt'), join(work, n.aside));
    writeFileSync(join(work, n.tmp), 'written by the operation\n');
    // c.txt: killed while its new version was being written; nothing else had happened.
    writeFileSync(join(work, 'c.txt'), 'c before\n');
    writeFileSync(join(work, partial.tmp), 'c wri');
    await WriteIntent.begin(store, [
      { absPath: join(work, 'b.txt'), names: n, expectedOid: blobId('before the operation\n'), writtenOid: blobId('written by the operation\n') },
      { absPath: join(work, 'c.txt'), names: partial, expectedOid: blobId('c before\n'), writtenOid: blobId('c written\n') },
    ]);

    const report = await recoverInterruptedWrites(store, [work]);

    expect(readdirSync(work).sort()).toEqual(['b.txt', 'c.txt']);
    expect(readFileSync(join(work, 'b.txt'), 'utf8')).toBe('before the operation\nappended meanwhile\n');
    expect(statSync(join(work, 'b.txt')).nlink).toBe(1);
    expect(readFileSync(join(work, 'c.txt'), 'utf8')).toBe('c before\n');
    expect(report.kept).toEqual([]);
  });
});
