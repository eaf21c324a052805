/**
 * Tree objects: parsing into entries, serialising (for trees the store builds
 * itself, like multi-root checkpoint trees), git's entry order, and a reader
 * that keeps recently parsed trees in an LRU cache.
 */
import { CorruptObjectError, StoreInputError } from './errors.js';
import { decodePathBytes, displayPathBytes, encodePathBytes } from '../path-bytes.js';
import { LruCache, ownBytes } from './lru.js';
import type { ObjectStore } from './types.js';

/** Git's mode for subtrees, as stored in tree objects (without the leading zero). */
const TREE_MODE = '40000';
/** Mode of a gitlink (submodule or nested repository commit). */
export const GITLINK_MODE = '160000';

/** One entry of a tree object. */
export interface TreeEntry {
  /** Six-digit octal mode as git prints it: `100644`, `100755`, `120000`, `040000`, `160000`. */
  mode: string;
  /** Entry name as `decodePathBytes` gives it: bytes that are not UTF-8 are escaped, so it converts back exactly. */
  name: string;
  /** The entry name's exact bytes, used for ordering. */
  nameBytes: Uint8Array;
  /** Id of the blob, tree or (for gitlinks) commit the entry points at. */
  oid: string;
  /** What the entry points at: `tree` for directories, `commit` for gitlinks, `blob` otherwise. */
  kind: 'blob' | 'tree' | 'commit';
}

const MODES = new Map(['100644', '100755', '120000', '40000', '160000'].map((m) => [m, m.padStart(6, '0')]));

/** Parses a tree object's content. `oid` only names the tree in error messages. */
export function parseTree(content: Uint8Array, oid = 'tree'): TreeEntry[] {
  const entries: TreeEntry[] = [];
  const buf = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  let i = 0;
  while (i < buf.byteLength) {
    const space = buf.indexOf(0x20, i);
    if (space < 0) throw new CorruptObjectError(`tree ${oid}: entry at byte ${i} has no mode`);
    const nul = buf.indexOf(0, space + 1);
    if (nul < 0 || nul + 21 > buf.byteLength) throw new CorruptObjectError(`tree ${oid}: entry at byte ${i} is truncated`);
    const rawMode = buf.toString('latin1', i, space);
    if (!/^[0-7]{5,6}$/.test(rawMode)) throw new CorruptObjectError(`tree ${oid}: bad mode ${JSON.stringify(rawMode)}`);
    if (nul === space + 1) throw new CorruptObjectError(`tree ${oid}: entry with an empty name`);
    const nameBytes = buf.subarray(space + 1, nul);
    // One string per distinct mode rather than one per entry: cached trees hold hundreds of thousands of entries.
    const mode = MODES.get(rawMode) ?? rawMode.padStart(6, '0');
    entries.push({
      mode,
      name: decodePathBytes(nameBytes),
      nameBytes,
      oid: buf.toString('hex', nul + 1, nul + 21),
      kind: rawMode === TREE_MODE ? 'tree' : mode === GITLINK_MODE ? 'commit' : 'blob',
    });
    i = nul + 21;
  }
  return entries;
}

/**
 * Git's tree order: names compared as bytes, with a directory's name compared
 * as if it ended in `/`.
 */
export function compareTreeEntries(a: Pick<TreeEntry, 'nameBytes' | 'kind'>, b: Pick<TreeEntry, 'nameBytes' | 'kind'>): number {
  const an = a.nameBytes;
  const bn = b.nameBytes;
  const len = Math.min(an.byteLength, bn.byteLength);
  for (let i = 0; i < len; i++) {
    const d = an[i]! - bn[i]!;
    if (d !== 0) return d;
  }
  const ac = an.byteLength > len ? an[len]! : a.kind === 'tree' ? 0x2f : 0;
  const bc = bn.byteLength > len ? bn[len]! : b.kind === 'tree' ? 0x2f : 0;
  return ac - bc;
}

/** An entry to serialise into a new tree. */
export interface NewTreeEntry {
  /** Octal mode, e.g. `100644` or `040000`. */
  mode: string;
  /** Entry name (escaped bytes allowed, see `decodePathBytes`): no `/`, no NUL, not `.` or `..`. */
  name: string;
  /** Id of what the entry points at. */
  oid: string;
}

/** Serialises entries into tree object content, sorted in git's order. */
export function serializeTree(entries: readonly NewTreeEntry[]): Buffer {
  const prepared = entries.map((e) => {
    if (!e.name || e.name.includes('/') || e.name.includes('\0') || e.name === '.' || e.name === '..') {
      throw new StoreInputError(`invalid tree entry name ${JSON.stringify(e.name)}`);
    }
    const mode = e.mode.replace(/^0+/, '');
    const kind: TreeEntry['kind'] = mode === TREE_MODE ? 'tree' : 'blob';
    return { mode, nameBytes: encodePathBytes(e.name), kind, oid: e.oid };
  });
  prepared.sort(compareTreeEntries);
  for (let i = 1; i < prepared.length; i++) {
    if (Buffer.compare(prepared[i - 1]!.nameBytes, prepared[i]!.nameBytes) === 0) {
      throw new StoreInputError(`duplicate tree entry name ${JSON.stringify(displayPathBytes(decodePathBytes(prepared[i]!.nameBytes)))}`);
    }
  }
  return Buffer.concat(prepared.flatMap((e) => [Buffer.from(`${e.mode} `, 'latin1'), e.nameBytes, Buffer.from([0]), Buffer.from(e.oid, 'hex')]));
}

/** Reads and parses trees through an object store, caching parsed trees. */
export class TreeReader {
  private readonly cache: LruCache<string, readonly TreeEntry[]>;

  /**
   * @param store where tree objects are read from
   * @param maxCachedEntries total entries of parsed trees kept in memory (default 10,000, ~2 MB):
   *   a turn's diff reads only the trees along changed paths, so a long session must not fill memory with old ones
   */
  constructor(
    private readonly store: ObjectStore,
    maxCachedEntries = 10_000,
  ) {
    // Trees along the paths a turn touched are read again within that turn; ten seconds unused, they are history.
    this.cache = new LruCache(maxCachedEntries, (entries) => entries.length + 1, 10_000);
  }

  /** The entries of a tree, in git order. Rejects when the object is missing or not a tree. */
  async read(oid: string): Promise<readonly TreeEntry[]> {
    const cached = this.cache.get(oid);
    if (cached) return cached;
    const object = await this.store.readObject(oid);
    if (object.type !== 'tree') throw new StoreInputError(`object ${oid} is a ${object.type}, not a tree`);
    // Entry names are views into the content: it must not be a view into something larger.
    const entries = parseTree(ownBytes(object.content), oid);
    this.cache.set(oid, entries);
    return entries;
  }

  /**
   * Rejects as {@link read} does unless `oid` is a well-formed tree, without
   * keeping it: a checkpoint names a new root tree every turn, and caching
   * each one to check it filled the cache with trees nothing reads again.
   */
  async verify(oid: string): Promise<void> {
    if (this.cache.get(oid)) return;
    const object = await this.store.readObject(oid);
    if (object.type !== 'tree') throw new StoreInputError(`object ${oid} is a ${object.type}, not a tree`);
    parseTree(object.content, oid);
  }

  /** Forgets trees not read since `time` (epoch ms): see {@link LruCache.dropUnusedSince}. */
  dropUnusedSince(time: number): void {
    this.cache.dropUnusedSince(time);
  }
}
