/**
 * lstat without the garbage: Node 20's `fs.lstatSync` builds a Stats object
 * and four Date objects per call, which at 100,000 files per snapshot costs
 * more than the system call itself. When the runtime's fs binding answers
 * exactly like `fs.lstatSync` (checked once at start-up on real paths), it is
 * used directly; otherwise the public API is. Both give the same numbers.
 */
import { lstatSync } from 'node:fs';

/** The stat fields the snapshot uses. */
export interface LiteStat {
  /** st_mode: file type and permission bits. */
  mode: number;
  /** Size in bytes. */
  size: number;
  /** Inode number. */
  ino: number;
  /** mtime in ms, computed exactly as `fs.Stats.mtimeMs`. */
  mtimeMs: number;
  /** ctime in ms, computed exactly as `fs.Stats.ctimeMs`. */
  ctimeMs: number;
}

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

type RawLstat = (path: string | Buffer, bigint: boolean, req: undefined, throwIfNoEntry: boolean) => Float64Array | undefined;

function publicLstat(path: string | Buffer): LiteStat | undefined {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return undefined;
  return { mode: st.mode, size: st.size, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

function fromRaw(v: Float64Array): LiteStat {
  // Layout of the binding's stat array: dev, mode, nlink, uid, gid, rdev, blksize, ino, size, blocks, atime s/ns, mtime s/ns, ctime s/ns, ...
  return { mode: v[1]!, size: v[8]!, ino: v[7]!, mtimeMs: v[12]! * 1e3 + v[13]! / 1e6, ctimeMs: v[14]! * 1e3 + v[15]! / 1e6 };
}

function loadRaw(): RawLstat | undefined {
  try {
    const binding = (process as unknown as { binding(name: string): { lstat?: unknown } }).binding('fs');
    if (typeof binding.lstat !== 'function') return undefined;
    const raw = binding.lstat.bind(binding) as RawLstat;
    for (const probe of ['/', process.execPath, process.cwd()]) {
      const want = publicLstat(probe);
      const got = raw(probe, false, undefined, false);
      if (!want || !(got instanceof Float64Array)) return undefined;
      const g = fromRaw(got);
      if (g.mode !== want.mode || g.size !== want.size || g.ino !== want.ino || g.mtimeMs !== want.mtimeMs || g.ctimeMs !== want.ctimeMs) return undefined;
    }
    if (raw('/nonexistent-path-for-lstat-probe', false, undefined, false) !== undefined) return undefined;
    return raw;
  } catch {
    return undefined;
  }
}

const raw = process.env['CHANGESET_SERVER_PUBLIC_LSTAT'] ? undefined : loadRaw();

/** lstat; undefined when the path does not exist, throws (with `code`) on other errors. */
export const liteLstat: (path: string | Buffer) => LiteStat | undefined = raw
  ? (path) => {
      const v = raw(path, false, undefined, false);
      return v === undefined ? undefined : fromRaw(v);
    }
  : publicLstat;

/** True when the fast path is in use (reported by the benchmark). */
export const usingRawLstat = raw !== undefined;
