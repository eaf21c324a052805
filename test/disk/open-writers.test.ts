import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOpenWriters } from '../../server/disk/open-writers.js';
import { holdOpenForWriting, killWriters } from '../helpers/open-writer.js';

const dirs: string[] = [];
afterEach(() => {
  killWriters();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('findOpenWriters', () => {
  // Linux keeps /dev/shm as a file system in memory, where a workspace may live too.
  it('finds a writer of a file in a workspace under /dev, as anywhere else', async () => {
    const work = mkdtempSync('/dev/shm/changeset-server-open-writers-');
    dirs.push(work);
    const file = join(work, 'a.txt');
    writeFileSync(file, 'a\n');
    const writer = await holdOpenForWriting(file);
    const found = await findOpenWriters([statSync(file, { bigint: true })]);
    expect([...found.values()]).toEqual([{ pid: writer.pid, name: 'sleep' }]);
  });
});
