/** Files and directories only the user can read (0700 / 0600), and small file helpers: used by the store, the channel store and everything else that writes under the state directory. */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fchmodSync, fstatSync, mkdirSync, openSync, readSync, type OpenMode } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The store holds copies of files the user may keep private, so everything
 * under the state directory is the user's alone: directories 0700, files
 * 0600. Modes are set explicitly, never left to the umask.
 */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file written under the state directory. */
export const PRIVATE_FILE_MODE = 0o600;

/** The directories `mkdir -p` made: from `first` (the outermost created) down to `dir`. */
function createdDirs(first: string, dir: string): string[] {
  const chain: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    chain.push(d);
    if (d === first || dirname(d) === d) break;
  }
  return chain;
}

/** Creates a directory and its missing parents, each 0700 whatever the umask. */
export async function mkdirPrivate(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (const d of createdDirs(first, dir)) await chmod(d, PRIVATE_DIR_MODE);
}

/** {@link mkdirPrivate}, synchronously. */
export function mkdirPrivateSync(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (const d of createdDirs(first, dir)) chmodSync(d, PRIVATE_DIR_MODE);
}

/** Opens a file for writing with mode 0600 whatever the umask (also when it already existed). */
export async function openPrivate(path: string, flags: OpenMode): Promise<FileHandle> {
  const handle = await open(path, flags, PRIVATE_FILE_MODE);
  try {
    await handle.chmod(PRIVATE_FILE_MODE);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** {@link openPrivate}, synchronously; returns the descriptor. */
export function openPrivateSync(path: string, flags: OpenMode): number {
  const fd = openSync(path, flags, PRIVATE_FILE_MODE);
  fchmodSync(fd, PRIVATE_FILE_MODE);
  return fd;
}

/**
 * Makes an existing tree private: directories 0700, regular files 0600.
 * Stores written by earlier versions (or under a loose umask) are tightened
 * this way when opened. Symlinks are not followed; entries that vanish
 * meanwhile are skipped.
 */
export async function tightenPrivateTree(root: string): Promise<void> {
  const visit = async (path: string, isDir: boolean): Promise<void> => {
    let mode: number;
    try {
      mode = (await lstat(path)).mode & 0o7777;
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    const wanted = isDir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
    if (mode !== wanted) await chmod(path, wanted).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (!isDir) return;
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) await visit(join(path, entry.name), true);
      else if (entry.isFile()) await visit(join(path, entry.name), false);
    }
  };
  const st = await lstat(root).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
  if (st?.isDirectory()) await visit(root, true);
  else if (st?.isFile()) await visit(root, false);
}

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
 * The file is 0600 and directories created on the way 0700.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, tmpDir: string): Promise<void> {
  await mkdirPrivate(tmpDir);
  const tmp = join(tmpDir, `${randomBytes(8).toString('hex')}.tmp`);
  try {
    const handle = await openPrivate(tmp, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await mkdirPrivate(dirname(path));
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** True when the error is a missing-file error. */
/**
 * The whole file, read synchronously when it is at most `maxBytes` long;
 * undefined for a larger file (read it asynchronously). Small reads from the
 * page cache take microseconds, an asynchronous one a thread-pool round trip.
 */
export function readSmallFileSync(path: string, maxBytes = 64 * 1024): Buffer | undefined {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) return undefined;
    const buf = Buffer.allocUnsafe(size);
    let done = 0;
    while (done < size) {
      const n = readSync(fd, buf, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return done === size ? buf : buf.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
