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

/**
 * Opens `path` for reading; `rootPrefix` is the walked root's real path and
 * a trailing `/`, as bytes. Throws `LeftRootError` (nothing read) when the
 * opened file lies outside it. Without `/proc` only the last component is
 * protected.
 */
export function openInside(path: string | Buffer, rootPrefix: Buffer): number {
  const fd = openSync(path, FLAGS);
  if (!canAskWhere) return fd;
  let where: Buffer;
  try {
    where = readlinkSync(`${FD_DIR}/${fd}`, { encoding: 'buffer' });
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (where.length > rootPrefix.length && where.subarray(0, rootPrefix.length).equals(rootPrefix)) return fd;
  closeSync(fd);
  throw new LeftRootError('a folder on its path now leads outside the working directory');
}
