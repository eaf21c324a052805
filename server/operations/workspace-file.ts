import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readFile, readlink, rename, rm, symlink, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { GitMode } from '../changes/file-change.js';
import { hashObject } from '../snapshot/index.js';

/** A file's content and mode as found on disk; `undefined` when it does not exist. */
export type DiskFile = { content: Uint8Array; mode: GitMode; oid: string } | undefined;

/** Reads a path without following a final symlink (links are content, as git records them). */
export async function readDiskFile(absPath: string): Promise<DiskFile> {
  let st;
  try {
    st = await lstat(absPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  if (st.isSymbolicLink()) {
    const content = Buffer.from(await readlink(absPath, { encoding: 'buffer' }));
    return { content, mode: '120000', oid: hashObject('blob', content) };
  }
  if (!st.isFile()) return undefined;
  const content = await readFile(absPath);
  return { content, mode: (st.mode & 0o111) !== 0 ? '100755' : '100644', oid: hashObject('blob', content) };
}

/**
 * Replaces a file atomically: the new content goes to a temporary file in
 * the same directory, is flushed to disk, gets its mode, and is renamed over
 * the target, so a crash leaves either the old or the new file, never a mix.
 * Symlinks are created as links. Missing parent directories are created.
 */
export async function writeDiskFileAtomic(absPath: string, content: Uint8Array, mode: GitMode): Promise<void> {
  const dir = dirname(absPath);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(absPath)}.changeset-${randomBytes(6).toString('hex')}.tmp`);
  try {
    if (mode === '120000') {
      await symlink(Buffer.from(content).toString(), tmp);
    } else {
      const handle = await open(tmp, 'wx', mode === '100755' ? 0o755 : 0o644);
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await chmod(tmp, mode === '100755' ? 0o755 : 0o644);
    }
    // A directory in the way (the file became a directory) is not ours to remove.
    const existing = await lstat(absPath).catch(() => undefined);
    if (existing?.isDirectory()) throw new Error(`${absPath} is a directory`);
    await rename(tmp, absPath);
    await syncDirectory(dir);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** Deletes a file (never a directory). */
export async function deleteDiskFile(absPath: string): Promise<void> {
  try {
    await unlink(absPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await syncDirectory(dirname(absPath));
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  try {
    await handle?.sync();
  } catch {
    // Not every platform can fsync a directory; the rename is atomic regardless.
  } finally {
    await handle?.close();
  }
}
