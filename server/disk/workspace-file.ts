import { constants } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import type { GitMode } from '../changes/file-change.js';
import { fsPath } from '../path-bytes.js';
import { hashObject } from '../snapshot/index.js';
import { insidePrefixes, liesInside } from '../snapshot/open-inside.js';
import { OutsideWorkingDirectoriesError } from '../containment.js';

/**
 * What identifies one version of a file on disk without reading it: when
 * all of these are unchanged (and the version was not "racy"), the content
 * is the one read with them.
 */
export interface DiskIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  /** The mtime was so close to the read that a same-tick write could hide behind it: compare by hash. */
  racy: boolean;
}

/** A file's content and mode as found on disk; `undefined` when it does not exist. */
export type DiskFile =
  | {
      content: Uint8Array;
      mode: GitMode;
      oid: string;
      /** Permission bits (`st_mode & 0o7777`), kept when the file is rewritten. */
      perm: number;
      uid: number;
      gid: number;
      identity: DiskIdentity;
    }
  | undefined;

/** A path holds something operations do not write over: a directory, a socket, a device. */
export class NotAFileError extends Error {}

/**
 * Timestamps come from the kernel's coarse clock (a few milliseconds a
 * tick): a write landing in the same tick as a read can leave mtime as it
 * was, so a version read within this window is compared by content.
 */
const RACY_NS = 20_000_000n;

/**
 * Reads a path without following a final symlink (links are content, as git
 * records them). With `inside` (the working directories, real paths), a
 * file's content is read only if the file opened lies inside one of them: a
 * folder on its path swapped for a link since it was checked throws
 * `OutsideWorkingDirectoriesError` and nothing is read.
 */
export async function readDiskFile(absPath: string, inside?: readonly string[]): Promise<DiskFile> {
  const path = fsPath(absPath);
  const prefixes = inside ? insidePrefixes(inside) : undefined;
  for (let attempt = 0; ; attempt++) {
    const startedNs = process.hrtime.bigint();
    const wallNs = BigInt(Date.now()) * 1_000_000n;
    const st = await lstatOrUndefined(path);
    if (!st) return undefined;
    if (!st.isFile() && !st.isSymbolicLink()) throw new NotAFileError(`${absPath} is not a regular file`);
    const content = st.isSymbolicLink() ? Buffer.from(await readlink(path, { encoding: 'buffer' })) : await readContent(path, absPath, prefixes);
    if (content === undefined) {
      if (attempt >= 20) throw new Error(`${absPath} keeps changing while it is read`);
      continue;
    }
    const again = await lstatOrUndefined(path);
    // A write between the two stats means the content may be neither version: read again.
    if (again && sameStat(st, again) && BigInt(content.length) === st.size) {
      const mode: GitMode = st.isSymbolicLink() ? '120000' : (Number(st.mode) & 0o111) !== 0 ? '100755' : '100644';
      const elapsed = process.hrtime.bigint() - startedNs;
      return {
        content,
        mode,
        oid: hashObject('blob', content),
        perm: Number(st.mode) & 0o7777,
        uid: Number(st.uid),
        gid: Number(st.gid),
        identity: identityOf(st, wallNs + elapsed),
      };
    }
    if (attempt >= 20) throw new Error(`${absPath} keeps changing while it is read`);
  }
}

// O_NONBLOCK: a FIFO put in the file's place must not hang the operation.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A regular file's content, checked to lie inside `prefixes`; undefined when the name became a symlink meanwhile (read again). */
async function readContent(path: string | Buffer, absPath: string, prefixes: readonly Buffer[] | undefined): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
    throw error;
  }
  try {
    if (prefixes && !liesInside(handle.fd, prefixes)) {
      throw new OutsideWorkingDirectoriesError(
        `${absPath} now leads outside the session's working directories (a folder on its path was replaced by a link): nothing was read`,
      );
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The identity of a stat result, racy when its mtime is within a clock tick of `readNs`. */
export function identityOf(st: BigIntStats, readNs: bigint): DiskIdentity {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, racy: st.mtimeNs + RACY_NS >= readNs };
}

/** True when a stat shows the very version an identity was taken from (never for a racy one). */
export function matchesIdentity(st: BigIntStats, identity: DiskIdentity): boolean {
  return !identity.racy && st.ino === identity.ino && st.dev === identity.dev && st.size === identity.size && st.mtimeNs === identity.mtimeNs;
}

export async function lstatOrUndefined(path: string | Buffer): Promise<BigIntStats | undefined> {
  try {
    return await lstat(path, { bigint: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function sameStat(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.mode === b.mode;
}
