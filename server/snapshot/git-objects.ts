/**
 * Raw git tree encoding for the snapshot's tree builder: modes, entries and
 * their ordering. Object ids and tree parsing are the store's
 * (`store/object-format.ts`, `store/tree.ts`), so there is one of each.
 */
export { EMPTY_TREE_OID, hashObject } from '../store/object-format.js';

/** Git file modes as they appear in tree objects. */
export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_SYMLINK = 0o120000;
export const MODE_TREE = 0o040000;
export const MODE_GITLINK = 0o160000;

/** One entry of a tree being encoded. */
export interface TreeEntryInput {
  /** Entry name: raw bytes, or a string written as UTF-8 (no slash). */
  name: Uint8Array | string;
  /** Git mode, one of the MODE_* constants. */
  mode: number;
  /** Object id, 40 lowercase hex digits. */
  oid: string;
}

/**
 * Encodes a tree object. Entries must already be in git tree order
 * (see `compareTreeNames`).
 */
export function encodeTree(entries: readonly TreeEntryInput[]): Buffer {
  let size = 0;
  for (const e of entries) {
    const nameLen = typeof e.name === 'string' ? Buffer.byteLength(e.name, 'utf8') : e.name.length;
    size += (e.mode === MODE_TREE ? 5 : 6) + 1 + nameLen + 1 + 20;
  }
  const out = Buffer.allocUnsafe(size);
  let off = 0;
  for (const e of entries) {
    off += out.write(e.mode.toString(8), off, 'latin1');
    out[off++] = 0x20;
    if (typeof e.name === 'string') off += out.write(e.name, off, 'utf8');
    else {
      out.set(e.name, off);
      off += e.name.length;
    }
    out[off++] = 0;
    off += out.write(e.oid, off, 'hex');
  }
  return out;
}

/**
 * Git's tree order: bytewise, with a directory compared as if its name ended
 * in '/'. Gitlinks sort as files, as git does.
 */
export function compareTreeNames(a: Uint8Array, aIsTree: boolean, b: Uint8Array, bIsTree: boolean): number {
  const len = Math.min(a.length, b.length);
  for (let i = 0; i < len; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  const ca = a.length > len ? a[len]! : aIsTree ? 0x2f : 0;
  const cb = b.length > len ? b[len]! : bIsTree ? 0x2f : 0;
  return ca - cb;
}
