import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOpenWriters } from '../../server/disk/open-writers.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A process holding `path` open for writing until killed. */
async function holdOpenForWriting(path: string): Promise<ChildProcess> {
  const child = spawn('sh', ['-c', 'exec 3>>"$0"; echo ready; exec sleep 60', path], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

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
