/**
 * Reads a git index file (versions 2, 3 and 4) to seed the stat cache, so a
 * clean checkout is not re-hashed on first use. Only stage-0 file entries are
 * kept; skip-worktree, intent-to-add and sparse-directory entries are not
 * trusted. Split indexes (the `link` extension) are not read: seeding is then
 * skipped and files are hashed.
 */
import { readFileSync, lstatSync } from 'node:fs';

/** Stat data and object id of one index entry, as trusted for seeding. */
export interface IndexSeedEntry {
  /** mtime in the same float form as `fs.Stats.mtimeMs`. */
  mtimeMs: number;
  /** ctime in the same float form as `fs.Stats.ctimeMs`. */
  ctimeMs: number;
  /** Inode number, truncated to 32 bits as the index stores it. */
  ino: number;
  /** File size, truncated to 32 bits as the index stores it. */
  size: number;
  /** Git mode recorded in the index. */
  mode: number;
  /** Blob id. */
  oid: string;
}

/** Index entries by path (relative to the working tree top) plus the index file's own mtime. */
export interface IndexSeed {
  /** Trusted entries keyed by '/'-separated path. */
  entries: Map<string, IndexSeedEntry>;
  /** mtime of the index file; entries not older than it are racy and not trusted. */
  indexMtimeMs: number;
}

/** Node computes `mtimeMs` as sec * 1e3 + nsec / 1e6; doing the same gives bit-equal floats. */
function ms(sec: number, nsec: number): number {
  return sec * 1e3 + nsec / 1e6;
}

/**
 * Parses an index file. Returns undefined when it is missing, unreadable, of
 * an unknown version, split, or malformed: the caller then hashes files.
 */
export function readIndexSeed(indexPath: string): IndexSeed | undefined {
  let buf: Buffer;
  let indexMtimeMs: number;
  try {
    indexMtimeMs = lstatSync(indexPath).mtimeMs;
    buf = readFileSync(indexPath);
  } catch {
    return undefined;
  }
  try {
    return parseIndex(buf, indexMtimeMs);
  } catch {
    return undefined;
  }
}

/** Parses index bytes (exported for tests). */
export function parseIndex(buf: Buffer, indexMtimeMs: number): IndexSeed | undefined {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buf.readUInt32BE(8);
  const entries = new Map<string, IndexSeedEntry>();
  let off = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let n = 0; n < count; n++) {
    const start = off;
    if (off + 62 > buf.length) return undefined;
    const ctimeS = buf.readUInt32BE(off);
    const ctimeN = buf.readUInt32BE(off + 4);
    const mtimeS = buf.readUInt32BE(off + 8);
    const mtimeN = buf.readUInt32BE(off + 12);
    const ino = buf.readUInt32BE(off + 20);
    const mode = buf.readUInt32BE(off + 24);
    const size = buf.readUInt32BE(off + 36);
    const oid = buf.toString('hex', off + 40, off + 60);
    const flags = buf.readUInt16BE(off + 60);
    off += 62;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      extended = buf.readUInt16BE(off);
      off += 2;
    }
    let name: Buffer;
    if (version === 4) {
      // Offset varint: how many bytes to drop from the previous path.
      let c = buf[off++]!;
      let strip = c & 0x7f;
      while (c & 0x80) {
        c = buf[off++]!;
        strip = ((strip + 1) << 7) | (c & 0x7f);
      }
      const nul = buf.indexOf(0, off);
      if (nul < 0 || strip > prev.length) return undefined;
      name = Buffer.concat([prev.subarray(0, prev.length - strip), buf.subarray(off, nul)]);
      off = nul + 1;
    } else {
      const nul = buf.indexOf(0, off);
      if (nul < 0) return undefined;
      name = buf.subarray(off, nul);
      // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
      off = start + ((nul - start + 8) & ~7);
    }
    prev = name;
    const stage = (flags >> 12) & 3;
    const skipWorktree = (extended & 0x4000) !== 0;
    const intentToAdd = (extended & 0x2000) !== 0;
    const type = mode & 0o170000;
    if (stage !== 0 || skipWorktree || intentToAdd) continue;
    if (type !== 0o100000 && type !== 0o120000) continue;
    entries.set(name.toString('utf8'), {
      mtimeMs: ms(mtimeS, mtimeN),
      ctimeMs: ms(ctimeS, ctimeN),
      ino,
      size,
      mode,
      oid,
    });
  }
  // A split index keeps most entries in a shared file: do not seed from a partial view.
  while (off + 8 <= buf.length - 20) {
    if (buf.toString('latin1', off, off + 4) === 'link') return undefined;
    off += 8 + buf.readUInt32BE(off + 4);
  }
  return { entries, indexMtimeMs };
}
