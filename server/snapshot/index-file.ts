/**
 * Reads a git index file (versions 2, 3 and 4) to seed the stat cache, so a
 * clean checkout is not re-hashed on first use. Only stage-0 file entries are
 * kept; skip-worktree, intent-to-add and sparse-directory entries are not
 * trusted. Split indexes (the `link` extension) are not read: seeding is then
 * skipped and files are hashed.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { decodePathBytes } from '../path-bytes.js';

/**
 * Index entries by path (relative to the working tree top) plus the index
 * file's own mtime. Stat data lives in typed arrays and object ids stay in
 * the index bytes until asked for: a 100,000-entry index costs one string per
 * path, not one object per entry.
 */
export class IndexSeed {
  /**
   * Entry number by directory ('' or 'a/b/') and then by name: the walk looks
   * up one directory's map and then plain names, which is cheaper than
   * hashing a freshly concatenated full path per file.
   */
  private readonly byDir = new Map<string, Map<string, number>>();
  private lastDirBytes: Buffer = Buffer.alloc(0);
  private lastMap: Map<string, number> | undefined;
  private readonly mtime: Float64Array;
  private readonly ctime: Float64Array;
  private readonly ino: Float64Array;
  private readonly size: Float64Array;
  private readonly mode: Uint32Array;
  private readonly oidAt: Uint32Array;
  /** Each entry's position among all the index's entries (untrusted ones included). */
  private readonly position: Uint32Array;
  private count = 0;
  /** The index's cache-tree extension by directory ('' or 'a/b/'): trees the repository holds. */
  private trees = new Map<string, CachedTree>();
  /** Full paths of the entries not trusted for seeding (other stages, intent-to-add, skip-worktree, gitlinks): tracked all the same. */
  private readonly others = new Set<string>();
  /** Every directory ('a/', 'a/b/') holding an index entry at any depth, built on first use. */
  private trackedDirs: Set<string> | undefined;

  constructor(
    private readonly buf: Buffer,
    capacity: number,
    /** mtime of the index file; entries not older than it are racy and not trusted. */
    readonly indexMtimeMs: number,
  ) {
    this.mtime = new Float64Array(capacity);
    this.ctime = new Float64Array(capacity);
    this.ino = new Float64Array(capacity);
    this.size = new Float64Array(capacity);
    this.mode = new Uint32Array(capacity);
    this.oidAt = new Uint32Array(capacity);
    this.position = new Uint32Array(capacity);
  }

  /** Number of trusted entries. */
  get entries(): number {
    return this.count;
  }

  /** Records entry number `count`, the index's entry at `position`, whose path is `bytes[start, end)`. */
  add(
    position: number,
    bytes: Buffer,
    start: number,
    end: number,
    mtimeMs: number,
    ctimeMs: number,
    ino: number,
    size: number,
    mode: number,
    oidOffset: number,
  ): void {
    const i = this.count++;
    this.mtime[i] = mtimeMs;
    this.ctime[i] = ctimeMs;
    this.ino[i] = ino;
    this.size[i] = size;
    this.mode[i] = mode;
    this.oidAt[i] = oidOffset;
    this.position[i] = position;
    let slash = end - 1;
    while (slash >= start && bytes[slash] !== 0x2f) slash--;
    const dirEnd = slash + 1;
    // Index order keeps a directory's files together: decode the directory only when it changes.
    if (!this.lastMap || !sameBytes(this.lastDirBytes, bytes, start, dirEnd)) {
      this.lastDirBytes = Buffer.from(bytes.subarray(start, dirEnd));
      const dir = decodeName(bytes, start, dirEnd);
      this.lastMap = this.byDir.get(dir);
      if (!this.lastMap) {
        this.lastMap = new Map();
        this.byDir.set(dir, this.lastMap);
      }
    }
    this.lastMap.set(decodeName(bytes, dirEnd, end), i);
  }

  /** Records an entry not trusted for seeding (still a tracked path: git never ignores it). */
  addOther(path: string): void {
    this.others.add(path);
  }

  /** True when the index has an entry at `path` (relative to the work tree top), whatever its stage or type. */
  isTracked(path: string): boolean {
    const slash = path.lastIndexOf('/');
    return this.byDir.get(path.slice(0, slash + 1))?.has(path.slice(slash + 1)) === true || this.others.has(path);
  }

  /** True when the index has an entry below the directory `dir` ('a/b/'). */
  hasTrackedBelow(dir: string): boolean {
    if (!this.trackedDirs) {
      const dirs = new Set<string>();
      const addAncestors = (d: string): void => {
        for (let end = d.length; end > 0 && !dirs.has(d.slice(0, end)); end = d.lastIndexOf('/', end - 2) + 1) dirs.add(d.slice(0, end));
      };
      for (const d of this.byDir.keys()) addAncestors(d);
      for (const p of this.others) addAncestors(p.slice(0, p.lastIndexOf('/') + 1));
      this.trackedDirs = dirs;
    }
    return this.trackedDirs.has(dir);
  }

  /** Paths (relative to the work tree top) in one of the two indexes and not in the other. */
  membershipDiff(prev: IndexSeed): string[] {
    const out: string[] = [];
    const oneWay = (a: IndexSeed, b: IndexSeed): void => {
      for (const [dir, names] of a.byDir) {
        const other = b.byDir.get(dir);
        for (const name of names.keys()) if (!other?.has(name) && !b.others.has(dir + name)) out.push(dir + name);
      }
      for (const p of a.others) if (!b.isTracked(p)) out.push(p);
    };
    oneWay(this, prev);
    oneWay(prev, this);
    return out;
  }

  /** Where entry `i` is among all the index's entries (what {@link LstatPrefetch} numbers by). */
  indexPosition(i: number): number {
    return this.position[i]!;
  }

  /** The mode recorded for entry `i`, whatever the file on disk looks like. */
  entryMode(i: number): number {
    return this.mode[i]!;
  }

  /** The blob id recorded for entry `i`, whatever the file on disk looks like. */
  entryOid(i: number): string {
    const at = this.oidAt[i]!;
    return this.buf.toString('hex', at, at + 20);
  }

  /** The tree id the index's cache-tree records for a directory ('' or 'a/b/'), if it is valid. */
  treeId(dir: string): string | undefined {
    return this.trees.get(dir)?.oid;
  }

  /** The cache-tree's record of a directory ('' or 'a/b/'): its tree id and how many index entries and subdirectories it holds. */
  cachedTree(dir: string): CachedTree | undefined {
    return this.trees.get(dir);
  }

  setTrees(trees: Map<string, CachedTree>): void {
    this.trees = trees;
  }

  /** The entries of one directory ('' for the top, else 'a/b/'), by name. */
  directory(dir: string): SeedDirectory | undefined {
    const names = this.byDir.get(dir);
    return names ? { seed: this, names } : undefined;
  }

  /**
   * The blob id recorded for entry `i` when the index's stat data matches this
   * lstat result exactly (mtime, ctime, inode and size as the index truncates
   * them, same file type) and the entry is not racy; otherwise undefined.
   */
  match(i: number, st: { mtimeMs: number; ctimeMs: number; ino: number; size: number }, mode: number): string | undefined {
    if (
      this.mtime[i] !== st.mtimeMs ||
      this.ctime[i] !== st.ctimeMs ||
      this.size[i] !== st.size % 0x100000000 ||
      this.ino[i] !== st.ino % 0x100000000 ||
      (this.mode[i]! & 0o170000) !== (mode & 0o170000) ||
      this.mtime[i]! >= this.indexMtimeMs
    ) {
      return undefined;
    }
    const at = this.oidAt[i]!;
    return this.buf.toString('hex', at, at + 20);
  }
}

/** True when `a` holds exactly the bytes `b[start, end)`; compared from the end, where paths of neighbouring directories differ. */
function sameBytes(a: Buffer, b: Buffer, start: number, end: number): boolean {
  if (a.length !== end - start) return false;
  for (let i = a.length - 1; i >= 0; i--) if (a[i] !== b[start + i]) return false;
  return true;
}

/** `decodePathBytes` of `bytes[start, end)`, without a decoder call for the usual all-ASCII name. */
function decodeName(bytes: Buffer, start: number, end: number): string {
  for (let i = start; i < end; i++) if (bytes[i]! >= 0x80) return decodePathBytes(bytes.subarray(start, end));
  return bytes.toString('latin1', start, end);
}

/** A valid directory of the index's cache-tree. */
export interface CachedTree {
  /** The tree id git wrote for it. */
  oid: string;
  /** Index entries below it, at any depth. */
  entries: number;
  /** Its direct subdirectories. */
  subtrees: number;
}

/** One directory's slice of the seed. */
export interface SeedDirectory {
  /** The seed the entry numbers refer to. */
  seed: IndexSeed;
  /** Entry number by file name. */
  names: Map<string, number>;
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
  const file = readIndexBytes(indexPath);
  return file && parseIndexSafely(file);
}

/** An index file's bytes, and its mtime when read. */
export interface IndexBytes {
  /** The whole file, in memory another thread can share. */
  buf: Buffer;
  /** mtime of the index file. */
  mtimeMs: number;
  /** Inode of the index file. */
  ino: number;
}

/**
 * Reads an index file into a SharedArrayBuffer, so a worker can read its
 * paths while this thread parses it; undefined when it cannot be read.
 */
export function readIndexBytes(indexPath: string): IndexBytes | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(indexPath, 'r');
    const st = fstatSync(fd);
    const buf = Buffer.from(new SharedArrayBuffer(Math.max(1, st.size)), 0, st.size);
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, read);
      // Shorter than it said: rewritten in place while read, so not a whole index.
      if (n === 0) return undefined;
      read += n;
    }
    return { buf, mtimeMs: st.mtimeMs, ino: st.ino };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** {@link parseIndex} of bytes read by {@link readIndexBytes}; undefined where it would throw. */
export function parseIndexSafely(file: IndexBytes): IndexSeed | undefined {
  try {
    return parseIndex(file.buf, file.mtimeMs);
  } catch {
    return undefined;
  }
}

/** Parses index bytes (exported for tests). */
function parseIndex(buf: Buffer, indexMtimeMs: number): IndexSeed | undefined {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buf.readUInt32BE(8);
  const seed = new IndexSeed(buf, count, indexMtimeMs);
  // A DataView reads big-endian words without Buffer's per-call argument checks.
  const view = new DataView(buf.buffer, buf.byteOffset, buf.length);
  let off = 12;
  // Version 4: each path is rebuilt from the previous one, in place.
  let path = Buffer.allocUnsafe(version === 4 ? 4096 : 0);
  let pathLength = 0;
  for (let n = 0; n < count; n++) {
    const start = off;
    if (off + 62 > buf.length) return undefined;
    const ctimeS = view.getUint32(off);
    const ctimeN = view.getUint32(off + 4);
    const mtimeS = view.getUint32(off + 8);
    const mtimeN = view.getUint32(off + 12);
    const ino = view.getUint32(off + 20);
    const mode = view.getUint32(off + 24);
    const size = view.getUint32(off + 36);
    const oidOffset = off + 40;
    const flags = view.getUint16(off + 60);
    off += 62;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      extended = view.getUint16(off);
      off += 2;
    }
    let pathBuf: Buffer;
    let pathStart: number;
    let pathEnd: number;
    if (version === 4) {
      // Offset varint: how many bytes to drop from the previous path.
      let c = buf[off++]!;
      let strip = c & 0x7f;
      while (c & 0x80) {
        c = buf[off++]!;
        strip = ((strip + 1) << 7) | (c & 0x7f);
      }
      const nul = buf.indexOf(0, off);
      if (nul < 0 || strip > pathLength) return undefined;
      const keep = pathLength - strip;
      pathLength = keep + nul - off;
      if (pathLength > path.length) {
        const grown = Buffer.allocUnsafe(pathLength * 2);
        path.copy(grown, 0, 0, keep);
        path = grown;
      }
      buf.copy(path, keep, off, nul);
      pathBuf = path;
      pathStart = 0;
      pathEnd = pathLength;
      off = nul + 1;
    } else {
      // The flags hold the name length unless it is 0xfff or more.
      const nameLen = flags & 0xfff;
      const nul = nameLen < 0xfff && buf[off + nameLen] === 0 ? off + nameLen : buf.indexOf(0, off + Math.min(nameLen, 0xfff));
      if (nul < 0) return undefined;
      pathBuf = buf;
      pathStart = off;
      pathEnd = nul;
      // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
      off = start + ((nul - start + 8) & ~7);
    }
    const stage = (flags >> 12) & 3;
    const skipWorktree = (extended & 0x4000) !== 0;
    const intentToAdd = (extended & 0x2000) !== 0;
    const type = mode & 0o170000;
    if (stage !== 0 || skipWorktree || intentToAdd || (type !== 0o100000 && type !== 0o120000)) {
      seed.addOther(decodeName(pathBuf, pathStart, pathEnd));
      continue;
    }
    seed.add(n, pathBuf, pathStart, pathEnd, ms(mtimeS, mtimeN), ms(ctimeS, ctimeN), ino, size, mode, oidOffset);
  }
  // A split index keeps most entries in a shared file: do not seed from a partial view.
  while (off + 8 <= buf.length - 20) {
    const signature = buf.toString('latin1', off, off + 4);
    const length = buf.readUInt32BE(off + 4);
    if (signature === 'link') return undefined;
    if (signature === 'TREE') seed.setTrees(parseCacheTree(buf, off + 8, Math.min(off + 8 + length, buf.length)));
    off += 8 + length;
  }
  return seed;
}

/**
 * The `TREE` extension: per directory, pre-order, its name (NUL-ended),
 * "<entries> <subtrees>\n", and the tree id when entries is not -1 (an
 * invalidated directory). Git wrote those trees, so the repository has
 * them. Malformed data gives no trees.
 */
function parseCacheTree(buf: Buffer, start: number, end: number): Map<string, CachedTree> {
  const trees = new Map<string, CachedTree>();
  let off = start;
  // "<decimal><terminator>", the decimal possibly negative; 11,000 directories make splitting strings show in profiles.
  const readNumber = (b: Buffer, terminator: ' ' | '\n', limit: number): number => {
    const stop = terminator === ' ' ? 0x20 : 0x0a;
    let sign = 1;
    if (b[off] === 0x2d) {
      sign = -1;
      off++;
    }
    const first = off;
    let value = 0;
    while (off < limit && b[off]! >= 0x30 && b[off]! <= 0x39) value = value * 10 + b[off++]! - 0x30;
    if (off === first || off >= limit || b[off] !== stop) throw new Error('malformed cache-tree');
    off++;
    return sign * value;
  };
  const visit = (dir: string): void => {
    const entries = readNumber(buf, ' ', end);
    const subtrees = readNumber(buf, '\n', end);
    if (subtrees < 0) throw new Error('malformed cache-tree');
    if (entries >= 0) {
      if (off + 20 > end) throw new Error('truncated cache-tree');
      trees.set(dir, { oid: buf.toString('hex', off, off + 20), entries, subtrees });
      off += 20;
    }
    for (let i = 0; i < subtrees; i++) {
      const nul = buf.indexOf(0, off);
      if (nul < 0 || nul >= end) throw new Error('truncated cache-tree');
      const name = decodeName(buf, off, nul);
      off = nul + 1;
      visit(`${dir}${name}/`);
    }
  };
  try {
    // The top-level entry's name is empty.
    const nul = buf.indexOf(0, off);
    if (nul !== off) return new Map();
    off = nul + 1;
    visit('');
    return trees;
  } catch {
    return new Map();
  }
}
