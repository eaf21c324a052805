/**
 * Opening a file the walk listed, for reading, so that a directory swapped
 * for a symlink after the listing cannot make the read land outside the
 * walked root: the name itself is opened without following a symlink, and
 * the file actually opened is asked where it lives (its `/proc/self/fd`
 * link) before a byte is read. The walk stays synchronous and pays one
 * `readlink` per file it reads, not per file it visits.
 */
import { closeSync, constants, existsSync, openSync, readlinkSync } from 'node:fs';

const FD_DIR = '/proc/self/fd';
const canAskWhere = process.platform === 'linux' && existsSync(FD_DIR);
// O_NONBLOCK: a FIFO put in the file's place must not hang the walk.
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The file opened is outside the walked root: a directory on its path was replaced by a link since it was listed. */
export class LeftRootError extends Error {}

/** Where the file behind `fd` lives (its `/proc/self/fd` link), or undefined where the system cannot say. */
function whereIs(fd: number): Buffer | undefined {
  return canAskWhere ? readlinkSync(`${FD_DIR}/${fd}`, { encoding: 'buffer' }) : undefined;
}

/**
 * True when the file opened as `fd` lies under one of `prefixes` (real
 * directory paths with a trailing `/`, as bytes), or when the system cannot
 * say where it lies (without `/proc`).
 */
export function liesInside(fd: number, prefixes: readonly Buffer[]): boolean {
  const where = whereIs(fd);
  if (!where) return true;
  return prefixes.some((prefix) => where.length > prefix.length && where.subarray(0, prefix.length).equals(prefix));
}

/** The `prefixes` `liesInside` takes for these directories (real paths). */
export function insidePrefixes(dirs: readonly string[]): Buffer[] {
  return dirs.map((dir) => Buffer.from(dir.endsWith('/') ? dir : `${dir}/`));
}

/**
 * Opens `path` for reading; `rootPrefix` is the walked root's real path and
 * a trailing `/`, as bytes. Throws `LeftRootError` (nothing read) when the
 * opened file lies outside it. Without `/proc` only the last component is
 * protected.
 */
export function openInside(path: string | Buffer, rootPrefix: Buffer): number {
  const fd = openSync(path, FLAGS);
  let inside: boolean;
  try {
    inside = liesInside(fd, [rootPrefix]);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (inside) return fd;
  closeSync(fd);
  throw new LeftRootError('a folder on its path now leads outside the working directory');
}
