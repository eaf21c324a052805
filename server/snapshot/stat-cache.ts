/**
 * The stat cache: per directory, the listing last read, each entry's stat
 * data and object id, and the directory's tree id. It is what lets a
 * snapshot re-hash only changed files and re-encode only changed trees.
 * Persisted as one compact binary file written atomically (temp + rename).
 */
import { closeSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { openPrivateSync } from '../private-files.js';
import { decodePathBytes } from '../path-bytes.js';

/** Entry kinds as read from the directory. */
export const KIND_FILE = 1;
export const KIND_SYMLINK = 2;
export const KIND_DIR = 3;
/** FIFOs, sockets, devices: never read, never recorded (git skips them too). */
export const KIND_OTHER = 4;

/** Recorded in the tree. */
export const STATUS_INCLUDED = 0;
/** Excluded by ignore rules (never stat'ed). */
export const STATUS_IGNORED = 1;
/** Not recorded for another reason (unreadable, too large, reserved name, nested repo without commit). */
export const STATUS_SKIPPED = 2;
/** A directory the ignore rules exclude that holds paths the index tracks: walked for those only. */
export const STATUS_TRACKED_ONLY = 3;

/** One directory entry as last seen. */
export interface CachedEntry {
  /** Name as a string, undecodable bytes escaped (see `decodePathBytes`). */
  name: string;
  /** Raw name bytes when the name is not valid UTF-8; undefined otherwise. */
  raw: Buffer | undefined;
  /** KIND_* constant. */
  kind: number;
  /** STATUS_* constant. */
  status: number;
  /** Git mode recorded in the tree (0 when not recorded). */
  mode: number;
  /** Size from lstat. */
  size: number;
  /** mtime from lstat (ms, float). */
  mtimeMs: number;
  /** ctime from lstat (ms, float). */
  ctimeMs: number;
  /** Inode from lstat. */
  ino: number;
  /** Object id recorded for this entry (blob, tree or gitlink commit). */
  oid: string | undefined;
  /** Stored as a Git LFS pointer. */
  lfs: boolean;
  /** Line-ending conversion on the way in (`EOL_*` in eol-conversion.ts); the id is of the converted content. */
  eol: number;
  /**
   * Other conversions on the way in (`ident`, `working-tree-encoding`, a
   * filter driver that is not run), as a key; kept in memory only: the
   * first snapshot of a process decides every entry again.
   */
  conv?: string | undefined;
  /** State of the directory below this entry (directories only). */
  dir: DirState | undefined;
}

/** One directory's cached state. */
export interface DirState {
  /** Directory mtime when the listing was read. */
  mtimeMs: number;
  /** Directory ctime when the listing was read. */
  ctimeMs: number;
  /** Directory inode when the listing was read. */
  ino: number;
  /** Identity of the ignore and attribute rules the entry decisions were made with. */
  rulesKey: string;
  /** All entries (including ignored ones), in git tree order. */
  entries: CachedEntry[];
  /** Tree id of the included entries; undefined when there are none (the directory is omitted). */
  tree: string | undefined;
  /** Number of blobs, symlinks and gitlinks recorded at or below this directory. */
  files: number;
  /** The directory holds a `.git` entry. */
  hasDotGit: boolean;
  /** The directory is the top of a valid nested repository (recorded as a gitlink). */
  nestedRepo: boolean;
}

const MAGIC = 'CSSC';
const VERSION = 3;

/*
 * File layout (little-endian), columns rather than records so that saving
 * and loading 100,000 entries is a few typed-array passes and a handful of
 * large string conversions instead of 100,000 small ones:
 *
 *   "CSSC" u32 version, u32 len + identity (UTF-8), f64 refTimeMs
 *   u32 dirCount, u32 entryCount, u32 keyCount, u32 namesBytes, u32 oidCount, u32 rawCount
 *   padding to 8
 *   f64[dirCount * 3]      dir mtime, ctime, ino
 *   f64[entryCount * 4]    entry size, mtime, ctime, ino
 *   u32[dirCount * 3]      dir files, entry count, rules-key index
 *   u32[entryCount]        entry mode
 *   u8[dirCount]           dir flags (1 tree, 2 .git, 4 nested repository)
 *   u8[entryCount * 3]     entry kind, status, flags (1 raw name, 2 oid, 4 lfs, 8 dir follows, 16/32 eol conversion)
 *   bytes[oidCount * 20]   dir tree ids then entry ids, in order
 *   bytes[namesBytes]      entry names (UTF-8), NUL-separated
 *   keys: u32 len + UTF-8, keyCount times
 *   raw names: u32 len + bytes, rawCount times
 *
 * Directories are in pre-order: a directory, then (recursively) the
 * directories of its entries that have one, in entry order.
 */

interface Columns {
  dirs: DirState[];
  entries: CachedEntry[];
  /** Object ids in reading order: a directory's tree, then its entries' ids. */
  oidHex: string[];
}

function collect(root: DirState): Columns {
  const dirs: DirState[] = [];
  const entries: CachedEntry[] = [];
  const oidHex: string[] = [];
  const visit = (d: DirState): void => {
    dirs.push(d);
    if (d.tree) oidHex.push(d.tree);
    for (const e of d.entries) {
      entries.push(e);
      if (e.oid) oidHex.push(e.oid);
    }
    for (const e of d.entries) if (e.dir) visit(e.dir);
  };
  visit(root);
  return { dirs, entries, oidHex };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function encode(identity: string, refTimeMs: number, root: DirState): Buffer {
  const { dirs, entries, oidHex } = collect(root);
  const keyIndex = new Map<string, number>();
  const keys: string[] = [];
  const names: string[] = new Array(entries.length);
  const raws: Buffer[] = [];
  for (const d of dirs) {
    if (!keyIndex.has(d.rulesKey)) {
      keyIndex.set(d.rulesKey, keys.length);
      keys.push(d.rulesKey);
    }
  }
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    names[i] = e.raw ? '' : e.name;
    if (e.raw) raws.push(e.raw);
  }
  const nameBytes = Buffer.from(names.join('\0'), 'utf8');
  const oidBytes = Buffer.from(oidHex.join(''), 'hex');
  const idBytes = Buffer.from(identity, 'utf8');
  const keyBytes = keys.map((k) => Buffer.from(k, 'utf8'));

  const headerLen = align8(4 + 4 + 4 + idBytes.length + 8 + 24);
  const f64Len = (dirs.length * 3 + entries.length * 4) * 8;
  const u32Len = (dirs.length * 3 + entries.length) * 4;
  const u8Len = dirs.length + entries.length * 3;
  let tailLen = oidBytes.length + nameBytes.length;
  for (const k of keyBytes) tailLen += 4 + k.length;
  for (const r of raws) tailLen += 4 + r.length;
  const out = Buffer.alloc(headerLen + f64Len + u32Len + u8Len + tailLen);

  let off = out.write(MAGIC, 0, 'latin1');
  off = out.writeUInt32LE(VERSION, off);
  off = out.writeUInt32LE(idBytes.length, off);
  off += idBytes.copy(out, off);
  // refTimeMs is read with readDoubleLE: no alignment needed here.
  off = out.writeDoubleLE(refTimeMs, off);
  for (const v of [dirs.length, entries.length, keys.length, nameBytes.length, oidHex.length, raws.length]) off = out.writeUInt32LE(v, off);
  off = headerLen;

  const f64 = new Float64Array(out.buffer, out.byteOffset + off, f64Len / 8);
  let k = 0;
  for (const d of dirs) {
    f64[k++] = d.mtimeMs;
    f64[k++] = d.ctimeMs;
    f64[k++] = d.ino;
  }
  for (const e of entries) {
    f64[k++] = e.size;
    f64[k++] = e.mtimeMs;
    f64[k++] = e.ctimeMs;
    f64[k++] = e.ino;
  }
  off += f64Len;
  const u32 = new Uint32Array(out.buffer, out.byteOffset + off, u32Len / 4);
  k = 0;
  for (const d of dirs) {
    u32[k++] = d.files;
    u32[k++] = d.entries.length;
    u32[k++] = keyIndex.get(d.rulesKey)!;
  }
  for (const e of entries) u32[k++] = e.mode;
  off += u32Len;
  for (const d of dirs) out[off++] = (d.tree ? 1 : 0) | (d.hasDotGit ? 2 : 0) | (d.nestedRepo ? 4 : 0);
  for (const e of entries) {
    out[off++] = e.kind;
    out[off++] = e.status;
    out[off++] = (e.raw ? 1 : 0) | (e.oid ? 2 : 0) | (e.lfs ? 4 : 0) | (e.dir ? 8 : 0) | ((e.eol & 3) << 4);
  }
  off += oidBytes.copy(out, off);
  off += nameBytes.copy(out, off);
  for (const kb of keyBytes) {
    off = out.writeUInt32LE(kb.length, off);
    off += kb.copy(out, off);
  }
  for (const r of raws) {
    off = out.writeUInt32LE(r.length, off);
    off += r.copy(out, off);
  }
  return out;
}

function decode(buf: Buffer, identity: string): LoadedCache | undefined {
  if (buf.length < 16 || buf.toString('latin1', 0, 4) !== MAGIC) return undefined;
  if (buf.readUInt32LE(4) !== VERSION) return undefined;
  const idLen = buf.readUInt32LE(8);
  if (buf.toString('utf8', 12, 12 + idLen) !== identity) return undefined;
  let off = 12 + idLen;
  const refTimeMs = buf.readDoubleLE(off);
  off += 8;
  const [dirCount, entryCount, keyCount, namesLen, oidCount, rawCount] = [0, 1, 2, 3, 4, 5].map((i) => buf.readUInt32LE(off + i * 4)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  off = align8(off + 24);
  // Typed arrays need aligned offsets: copy the columns into an aligned buffer.
  const f64Len = (dirCount * 3 + entryCount * 4) * 8;
  const u32Len = (dirCount * 3 + entryCount) * 4;
  const cols = new ArrayBuffer(f64Len + u32Len);
  new Uint8Array(cols).set(buf.subarray(off, off + f64Len + u32Len));
  const f64 = new Float64Array(cols, 0, f64Len / 8);
  const u32 = new Uint32Array(cols, f64Len, u32Len / 4);
  off += f64Len + u32Len;
  const flagsAt = off;
  off += dirCount + entryCount * 3;
  const oidHex = buf.toString('hex', off, off + oidCount * 20);
  off += oidCount * 20;
  const names = buf.toString('utf8', off, off + namesLen).split('\0');
  off += namesLen;
  if (names.length !== Math.max(entryCount, 1)) return undefined;
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) {
    const n = buf.readUInt32LE(off);
    keys.push(buf.toString('utf8', off + 4, off + 4 + n));
    off += 4 + n;
  }
  const raws: Buffer[] = [];
  for (let i = 0; i < rawCount; i++) {
    const n = buf.readUInt32LE(off);
    raws.push(Buffer.from(buf.subarray(off + 4, off + 4 + n)));
    off += 4 + n;
  }
  if (off !== buf.length) return undefined;

  let di = 0;
  let ei = 0;
  let oi = 0;
  let ri = 0;
  const nextOid = (): string => oidHex.slice(40 * oi, 40 * ++oi);
  const readDir = (): DirState => {
    if (di >= dirCount) throw new Error('stat cache: directory count mismatch');
    const d = di++;
    const dflags = buf[flagsAt + d]!;
    const count = u32[d * 3 + 1]!;
    const tree = dflags & 1 ? nextOid() : undefined;
    const entries: CachedEntry[] = new Array(count);
    const base = ei;
    for (let j = 0; j < count; j++) {
      const i = ei++;
      const at = flagsAt + dirCount + i * 3;
      const ef = buf[at + 2]!;
      const b = dirCount * 3 + i * 4;
      let raw: Buffer | undefined;
      let name = names[i]!;
      if (ef & 1) {
        raw = raws[ri++]!;
        name = decodePathBytes(raw);
      }
      entries[j] = {
        name,
        raw,
        kind: buf[at]!,
        status: buf[at + 1]!,
        mode: u32[dirCount * 3 + i]!,
        size: f64[b]!,
        mtimeMs: f64[b + 1]!,
        ctimeMs: f64[b + 2]!,
        ino: f64[b + 3]!,
        oid: ef & 2 ? nextOid() : undefined,
        lfs: (ef & 4) !== 0,
        eol: (ef >> 4) & 3,
        dir: undefined,
      };
    }
    const state: DirState = {
      mtimeMs: f64[d * 3]!,
      ctimeMs: f64[d * 3 + 1]!,
      ino: f64[d * 3 + 2]!,
      rulesKey: keys[u32[d * 3 + 2]!] ?? '',
      entries,
      tree,
      files: u32[d * 3]!,
      hasDotGit: (dflags & 2) !== 0,
      nestedRepo: (dflags & 4) !== 0,
    };
    for (let j = 0; j < count; j++) {
      const e = entries[j]!;
      if (buf[flagsAt + dirCount + (base + j) * 3 + 2]! & 8) e.dir = readDir();
    }
    return state;
  };
  const root = readDir();
  if (di !== dirCount || ei !== entryCount || oi !== oidCount) return undefined;
  return { root, refTimeMs };
}

/** A loaded cache: the root directory state and the cache file's mtime (the racy reference). */
export interface LoadedCache {
  /** State of the walk root. */
  root: DirState;
  /**
   * Filesystem time at the start of the walk that produced the cache: an
   * entry whose mtime is not older may have changed again unnoticed (racy).
   */
  refTimeMs: number;
}

/**
 * Loads the cache written for this `identity` (root path and options).
 * Returns undefined when absent, for another identity, or unreadable.
 */
export function loadStatCache(file: string, identity: string): LoadedCache | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
  try {
    return decode(buf, identity);
  } catch {
    return undefined;
  }
}

/**
 * Writes the cache atomically (temp file + rename; not fsync'ed: a cache
 * lost in a crash only costs re-hashing, and a torn file fails to load).
 */
export function saveStatCache(file: string, identity: string, refTimeMs: number, root: DirState): void {
  const bytes = encode(identity, refTimeMs, root);
  // No mkdir: the directory exists since the snapshot started (it holds the
  // clock file); if it was removed since, the cache is not resurrected.
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openPrivateSync(tmp, 'w');
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
