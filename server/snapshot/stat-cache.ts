/**
 * The stat cache: per directory, the listing last read, each entry's stat
 * data and object id, and the directory's tree id. It is what lets a
 * snapshot re-hash only changed files and re-encode only changed trees.
 * Persisted as one compact binary file written atomically (temp + rename).
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

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

/** One directory entry as last seen. */
export interface CachedEntry {
  /** Name as a string (UTF-8 decoded). */
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
const VERSION = 1;

class Writer {
  buf: Buffer;
  off = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  ensure(n: number): void {
    if (this.off + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.off + n));
    this.buf.copy(next, 0, 0, this.off);
    this.buf = next;
  }
  u8(v: number): void {
    this.buf[this.off++] = v;
  }
  u32(v: number): void {
    this.off = this.buf.writeUInt32LE(v >>> 0, this.off);
  }
  f64(v: number): void {
    this.off = this.buf.writeDoubleLE(v, this.off);
  }
  str(s: string): void {
    this.ensure(4 + s.length * 3);
    const n = this.buf.write(s, this.off + 4, 'utf8');
    this.buf.writeUInt32LE(n, this.off);
    this.off += 4 + n;
  }
  bytes(b: Uint8Array): void {
    this.ensure(4 + b.length);
    this.buf.writeUInt32LE(b.length, this.off);
    this.buf.set(b, this.off + 4);
    this.off += 4 + b.length;
  }
  oid(hex: string): void {
    this.off += this.buf.write(hex, this.off, 20, 'hex');
  }
}

function writeDir(w: Writer, d: DirState): void {
  w.ensure(64);
  w.f64(d.mtimeMs);
  w.f64(d.ctimeMs);
  w.f64(d.ino);
  w.u8((d.tree ? 1 : 0) | (d.hasDotGit ? 2 : 0) | (d.nestedRepo ? 4 : 0));
  if (d.tree) w.oid(d.tree);
  w.u32(d.files);
  w.u32(d.entries.length);
  w.str(d.rulesKey);
  for (const e of d.entries) {
    w.ensure(64);
    w.u8(e.kind);
    w.u8(e.status);
    w.u8((e.raw ? 1 : 0) | (e.oid ? 2 : 0) | (e.lfs ? 4 : 0) | (e.dir ? 8 : 0));
    w.u32(e.mode);
    w.f64(e.size);
    w.f64(e.mtimeMs);
    w.f64(e.ctimeMs);
    w.f64(e.ino);
    if (e.oid) w.oid(e.oid);
    if (e.raw) w.bytes(e.raw);
    else w.str(e.name);
    if (e.dir) writeDir(w, e.dir);
  }
}

class Reader {
  off = 0;
  constructor(readonly buf: Buffer) {}
  u8(): number {
    return this.buf[this.off++]!;
  }
  u32(): number {
    const v = this.buf.readUInt32LE(this.off);
    this.off += 4;
    return v;
  }
  f64(): number {
    const v = this.buf.readDoubleLE(this.off);
    this.off += 8;
    return v;
  }
  str(): string {
    const n = this.u32();
    const s = this.buf.toString('utf8', this.off, this.off + n);
    this.off += n;
    return s;
  }
  bytes(): Buffer {
    const n = this.u32();
    const b = Buffer.from(this.buf.subarray(this.off, this.off + n));
    this.off += n;
    return b;
  }
  oid(): string {
    const s = this.buf.toString('hex', this.off, this.off + 20);
    this.off += 20;
    return s;
  }
}

function readDir(r: Reader): DirState {
  const mtimeMs = r.f64();
  const ctimeMs = r.f64();
  const ino = r.f64();
  const flags = r.u8();
  const tree = flags & 1 ? r.oid() : undefined;
  const files = r.u32();
  const count = r.u32();
  const rulesKey = r.str();
  const entries: CachedEntry[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const kind = r.u8();
    const status = r.u8();
    const ef = r.u8();
    const mode = r.u32();
    const size = r.f64();
    const emtime = r.f64();
    const ectime = r.f64();
    const eino = r.f64();
    const oid = ef & 2 ? r.oid() : undefined;
    let name: string;
    let raw: Buffer | undefined;
    if (ef & 1) {
      raw = r.bytes();
      name = raw.toString('utf8');
    } else name = r.str();
    const dir = ef & 8 ? readDir(r) : undefined;
    entries[i] = { name, raw, kind, status, mode, size, mtimeMs: emtime, ctimeMs: ectime, ino: eino, oid, lfs: (ef & 4) !== 0, dir };
  }
  return { mtimeMs, ctimeMs, ino, rulesKey, entries, tree, files, hasDotGit: (flags & 2) !== 0, nestedRepo: (flags & 4) !== 0 };
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
    if (buf.toString('latin1', 0, 4) !== MAGIC) return undefined;
    const r = new Reader(buf);
    r.off = 4;
    if (r.u32() !== VERSION) return undefined;
    if (r.str() !== identity) return undefined;
    const refTimeMs = r.f64();
    const root = readDir(r);
    if (r.off !== buf.length) return undefined;
    return { root, refTimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Writes the cache atomically (temp file + rename; not fsync'ed: a cache
 * lost in a crash only costs re-hashing, and a torn file fails to load).
 */
export function saveStatCache(file: string, identity: string, refTimeMs: number, root: DirState, sizeHint: number): void {
  const w = new Writer(Math.max(4096, sizeHint));
  w.ensure(8);
  w.off += w.buf.write(MAGIC, 0, 'latin1');
  w.u32(VERSION);
  w.str(identity);
  w.ensure(8);
  w.f64(refTimeMs);
  writeDir(w, root);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    let off = 0;
    while (off < w.off) off += writeSync(fd, w.buf, off, w.off - off);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
