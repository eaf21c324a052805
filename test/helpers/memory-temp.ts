import { accessSync, constants, statfsSync } from 'node:fs';
import { afterAll } from 'vitest';

/** Where Linux keeps a file system in memory (tmpfs). */
const MEMORY_DIR = '/dev/shm';
/** The room it must have free, so that a small one (a container's 64 MB) is left alone. */
const MIN_FREE_BYTES = 2 * 1024 ** 3;

/**
 * Points this test file's temporary directories at a file system in memory
 * when the system has one with room to spare: `os.tmpdir()` reads `TMPDIR`
 * at each call, and the servers and commands the file starts inherit it.
 * The files are the same files, written and renamed by the same calls; what
 * changes is that the `fsync` the store does after each pack and ref (which
 * no test can observe: a killed process loses nothing the kernel holds)
 * costs no disk round trip (16 ms each measured on a busy disk, against 0.5 ms in memory).
 * Call it at the top of a test file: `TMPDIR` is put back after the file's
 * tests (`afterAll`), so the next file in the same worker is left as it was.
 * Returns the directory used, or undefined when it stays the default.
 */
export function useMemoryTempDir(): string | undefined {
  try {
    accessSync(MEMORY_DIR, constants.W_OK);
    const fs = statfsSync(MEMORY_DIR);
    if (fs.bavail * fs.bsize < MIN_FREE_BYTES) return undefined;
  } catch {
    return undefined;
  }
  const previous = process.env['TMPDIR'];
  process.env['TMPDIR'] = MEMORY_DIR;
  afterAll(() => {
    if (previous === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = previous;
  });
  return MEMORY_DIR;
}
