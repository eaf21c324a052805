/** Small filesystem helpers shared by the store's writers. */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Flushes a directory's entries (renames) to disk; a no-op where directories cannot be opened. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}

/**
 * Replaces `path` with `data` atomically: writes a temporary file in
 * `tmpDir` (same filesystem), fsyncs it, then renames it over the target.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, tmpDir: string): Promise<void> {
  await mkdir(tmpDir, { recursive: true });
  const tmp = join(tmpDir, `${randomBytes(8).toString('hex')}.tmp`);
  try {
    const handle = await open(tmp, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await mkdir(dirname(path), { recursive: true });
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** True when the error is a missing-file error. */
export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
