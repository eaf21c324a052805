/**
 * Raw git object encoding: object ids, tree entries and their ordering. Done
 * directly with SHA-1 because it is a few lines and sits on the hot path.
 */
import { createHash } from 'node:crypto';

/** Git file modes as they appear in tree objects. */
export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_SYMLINK = 0o120000;
export const MODE_TREE = 0o040000;
export const MODE_GITLINK = 0o160000;

/** The id of the empty tree, what `git write-tree` prints for an empty index. */
export const EMPTY_TREE_ID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Computes the id git gives an object of this type and content. */
export function hashObject(type: 'blob' | 'tree' | 'commit', content: Uint8Array): string {
  const h = createHash('sha1');
  h.update(`${type} ${content.length}\0`);
  h.update(content);
  return h.digest('hex');
}

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

/** Parses the entries of a raw tree object (used by tests and readers). */
export function parseTree(content: Uint8Array): { mode: number; name: Buffer; oid: string }[] {
  const buf = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const out: { mode: number; name: Buffer; oid: string }[] = [];
  let off = 0;
  while (off < buf.length) {
    const sp = buf.indexOf(0x20, off);
    const nul = buf.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > buf.length) throw new Error('malformed tree object');
    out.push({
      mode: parseInt(buf.toString('latin1', off, sp), 8),
      name: Buffer.from(buf.subarray(sp + 1, nul)),
      oid: buf.toString('hex', nul + 1, nul + 21),
    });
    off = nul + 21;
  }
  return out;
}
