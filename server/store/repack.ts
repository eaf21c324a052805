/**
 * Rewriting shadow packs into one, with deltas. Every flush stores each new
 * object whole (a delta's base must be in the same pack for git to read it,
 * and the previous version of a file is in an older pack or in the workspace
 * repository); compaction, in idle time, rewrites the packs into one where
 * each version of a path is a delta against the next newer version of the
 * same path — as git's packs do, the newest whole, so the versions read most
 * often cost one inflate — in chains of at most {@link MAX_DELTA_DEPTH}.
 *
 * `writeRepack` also serves consolidation and retention rewrites (no delta
 * plan): deltas whose base goes into the same pack are copied as they are,
 * any other delta is stored whole, so a pack never names a base it lacks.
 */
import { promisify } from 'node:util';
import { deflate as deflateCallback, deflateSync, constants as zlibConstants } from 'node:zlib';
import { parseCommit } from './commit.js';
import { createDelta } from './delta-encoder.js';
import { CorruptObjectError } from './errors.js';
import type { PackedLocation } from './object-directory.js';
import { PACK_OFS_DELTA, PACK_REF_DELTA, PACK_TYPE_CODE, type AnyObjectType } from './object-format.js';
import { encodeEntryHeader, writePack, type PackSource, type WrittenPack } from './pack-writer.js';
import { listRefs } from './refs.js';
import { GITLINK_MODE, parseTree } from './tree.js';
import type { StoredObject } from './types.js';

/**
 * Longest delta chain compaction makes: git's default (`pack.depth`). The
 * newest version of a path is whole, so the reads a turn makes do not walk
 * chains; measured against 20 (`npm run bench -- store --depth`), 50 took
 * the store over the last 30 of 60 turns from 2.17× git's pack to 1.45×
 * (every 21st version whole was most of the difference), at the same CPU
 * for a sweep of every old version (1.49× against 1.52× whole objects).
 */
export const MAX_DELTA_DEPTH = 50;

/** A delta is kept only when it is smaller than this share of the object. */
const MAX_DELTA_SHARE = 0.5;

/** Objects smaller than this are stored whole: a delta's headers would eat the gain. */
const MIN_DELTA_OBJECT = 64;

/** Options of {@link writeRepack}. */
export interface RepackOptions {
  /** Reads any object (a delta's base may be anywhere in the store). */
  readObject: (oid: string) => Promise<StoredObject>;
  /** The base each object should be a delta against (compaction's plan); without it, existing deltas are kept where they can be. */
  bases?: ReadonlyMap<string, string>;
  /** Packs whose whole entries are compressed again at `level` (those flushes wrote at zlib level 1). */
  recompress?: ReadonlySet<unknown>;
  /** zlib level of entries this rewrite compresses; 9 by default. */
  level?: number;
  /** Longest delta chain; {@link MAX_DELTA_DEPTH} by default. */
  maxDepth?: number;
  /** Lets the rewrite be paused (while a turn end uses the store) or abandoned (the store closing). */
  control?: RewriteControl;
}

/**
 * What a background rewrite consults each time it gives the event loop a
 * turn: `signal` abandons it (the temporary pack is removed, the old packs
 * stay as they were), `pause` holds it while the store is busy with
 * something a person waits for.
 */
export interface RewriteControl {
  signal?: AbortSignal;
  pause?: () => Promise<void>;
}

/** Thrown inside a rewrite its {@link RewriteControl.signal} abandoned. */
export class RewriteAbandonedError extends Error {
  constructor() {
    super('the pack rewrite was abandoned because the store is closing');
    this.name = 'RewriteAbandonedError';
  }
}

/** Gives the event loop a turn, then stops here if the rewrite was abandoned and waits while it is held. */
export async function yieldTurn(control: RewriteControl | undefined): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  if (control?.signal?.aborted) throw new RewriteAbandonedError();
  if (control?.pause) {
    await control.pause();
    if (control.signal?.aborted) throw new RewriteAbandonedError();
  }
}

/** What {@link writeRepack} wrote. */
export interface RepackResult extends WrittenPack {
  /** Entries stored as deltas in the new pack. */
  deltas: number;
  /** Deltas computed by this rewrite (the rest were copied). */
  deltasMade: number;
}

/** The negative offset of an ofs-delta, in git's encoding. */
function ofsBytes(distance: number): Buffer {
  const bytes = [distance & 0x7f];
  let rest = Math.floor(distance / 128);
  while (rest > 0) {
    rest -= 1;
    bytes.unshift(0x80 | (rest & 0x7f));
    rest = Math.floor(rest / 128);
  }
  return Buffer.from(bytes);
}

const deflateAsync = promisify(deflateCallback);

/** Objects at least this big are compressed on the thread pool, so the event loop keeps running. */
const ASYNC_DEFLATE_BYTES = 64 * 1024;
/** The rewrite gives the event loop a turn after this much work. */
const YIELD_AFTER_MS = 5;

async function deflate(content: Uint8Array, level: number): Promise<Buffer> {
  const options = { level, chunkSize: Math.max(64, Math.min(content.byteLength + 64, 1024 * 1024)) };
  return content.byteLength >= ASYNC_DEFLATE_BYTES ? deflateAsync(content, options) : deflateSync(content, options);
}

/**
 * Writes the objects (each read from where it is packed now) as one pack in
 * `packDir`, every delta's base before it, and returns the pack once it is
 * durable and in place.
 */
export async function writeRepack(packDir: string, objects: ReadonlyMap<string, PackedLocation>, options: RepackOptions): Promise<RepackResult> {
  const maxDepth = options.maxDepth ?? MAX_DELTA_DEPTH;
  const level = options.level ?? zlibConstants.Z_BEST_COMPRESSION;
  // Each object's stored base (when it is a delta) and the base it gets in the new pack.
  const stored = new Map<string, string | undefined>();
  let started = performance.now();
  for (const [oid, at] of objects) {
    stored.set(oid, await at.pack.deltaBaseAt(at.position));
    if (performance.now() - started > YIELD_AFTER_MS) {
      await yieldTurn(options.control);
      started = performance.now();
    }
  }
  const chosen = new Map<string, string>();
  for (const [oid, current] of stored) {
    const wanted = options.bases?.get(oid);
    if (wanted !== undefined && wanted !== oid && objects.has(wanted)) chosen.set(oid, wanted);
    else if (current !== undefined && objects.has(current) && !options.bases?.has(oid)) chosen.set(oid, current);
  }
  // Depths, breaking cycles and chains past the limit by storing that object whole; the output order puts bases first.
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const order: string[] = [];
  const place = (oid: string): number => {
    const known = depth.get(oid);
    if (known !== undefined) return known;
    if (visiting.has(oid)) return Number.POSITIVE_INFINITY;
    visiting.add(oid);
    let d = 0;
    const base = chosen.get(oid);
    if (base !== undefined) {
      d = place(base) + 1;
      if (!(d <= maxDepth)) {
        chosen.delete(oid);
        d = 0;
      }
    }
    visiting.delete(oid);
    depth.set(oid, d);
    order.push(oid);
    return d;
  };
  for (const oid of objects.keys()) place(oid);

  let deltas = 0;
  let deltasMade = 0;
  const offsets = new Map<string, number>();
  const sources = async function* (): AsyncGenerator<PackSource> {
    let position = 12;
    let slice = performance.now();
    for (const oid of order) {
      // Compaction runs beside the server's work: a request that comes in waits at most a few milliseconds for it.
      if (performance.now() - slice > YIELD_AFTER_MS) {
        await yieldTurn(options.control);
        slice = performance.now();
      }
      const at = objects.get(oid)!;
      const entry = await encodeEntry(oid, at, chosen.get(oid), stored.get(oid), offsets, position);
      offsets.set(oid, position);
      position += entry.byteLength;
      yield { kind: 'raw', oid, entry };
    }
  };
  const encodeEntry = async (
    oid: string,
    at: PackedLocation,
    base: string | undefined,
    current: string | undefined,
    written: ReadonlyMap<string, number>,
    position: number,
  ): Promise<Buffer> => {
    const info = await at.pack.readEntryInfo(at.position);
    const asDelta = (size: number, compressed: Uint8Array): Buffer => {
      deltas++;
      return Buffer.concat([encodeEntryHeader(PACK_OFS_DELTA, size), ofsBytes(position - written.get(base!)!), compressed]);
    };
    if (base !== undefined && base === current) return asDelta(info.size, info.raw.subarray(info.dataStart));
    const isDelta = info.typeCode === PACK_OFS_DELTA || info.typeCode === PACK_REF_DELTA;
    if (base !== undefined) {
      const target = await options.readObject(oid);
      if (target.content.byteLength >= MIN_DELTA_OBJECT) {
        const baseObject = await options.readObject(base);
        if (baseObject.type !== target.type) throw new CorruptObjectError(`delta base ${base} of ${oid} is a ${baseObject.type}, not a ${target.type}`);
        const delta = createDelta(baseObject.content, target.content, Math.floor(target.content.byteLength * MAX_DELTA_SHARE));
        if (delta) {
          deltasMade++;
          return asDelta(delta.byteLength, await deflate(delta, level));
        }
      }
      chosen.delete(oid);
      return Buffer.concat([encodeEntryHeader(PACK_TYPE_CODE[target.type as AnyObjectType], target.content.byteLength), await deflate(target.content, level)]);
    }
    // A compaction also compresses entries a flush stored uncompressed (a first deflate block of type 00), whichever pack holds them.
    const stored = options.recompress !== undefined && ((info.raw[info.dataStart + 2] ?? 0) & 0x06) === 0;
    if (!isDelta && !options.recompress?.has(at.pack) && !stored) return info.raw;
    const whole = await options.readObject(oid);
    return Buffer.concat([encodeEntryHeader(PACK_TYPE_CODE[whole.type as AnyObjectType], whole.content.byteLength), await deflate(whole.content, level)]);
  };
  const written = await writePack(packDir, sources(), order.length);
  return { ...written, deltas, deltasMade };
}

/** What compaction needs to read the store's history. */
export interface DeltaPlanSource {
  /** The shadow repository (its refs are read). */
  shadowDir: string;
  /** True when the shadow repository holds the object. */
  isShadowObject: (oid: string) => boolean;
  /** Reads an object. */
  readObject: (oid: string) => Promise<StoredObject>;
}

/** The key the versions of a path are grouped under: trees and blobs apart, every turn's change entries together. */
const ENTRIES_KEY = '\0entries';

/**
 * Plans compaction's deltas from the history: every shadow object a ref
 * reaches is placed at the path where the oldest checkpoint holding it has
 * it (checkpoint commits one after another, change entries together), the
 * versions of each path are ordered oldest first, and each version
 * gets the next newer one as its base, except every (depth + 1)th from the
 * oldest (and the newest), which stay whole. Anchored at the oldest, the
 * plan of old versions does not change as new ones come, so their deltas
 * are copied, not made again, at the next compaction.
 */
export async function planDeltaBases(source: DeltaPlanSource, maxDepth = MAX_DELTA_DEPTH, control?: RewriteControl): Promise<Map<string, string>> {
  const refs = await listRefs(source.shadowDir, 'refs/');
  const commits = new Map<string, { oid: string; tree: string; parents: string[]; time: number; height: number }>();
  const loose: string[] = [];
  const stack: string[] = [];
  for (const [name, oid] of [...refs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!source.isShadowObject(oid)) continue;
    const object = await source.readObject(oid);
    if (object.type === 'commit') stack.push(oid);
    else if (object.type === 'blob' && name.endsWith('/entries')) loose.push(oid);
  }
  while (stack.length > 0) {
    const oid = stack.pop()!;
    if (commits.has(oid) || !source.isShadowObject(oid)) continue;
    const object = await source.readObject(oid);
    if (object.type !== 'commit') continue;
    const commit = parseCommit(object.content, oid);
    const time = Number(/ (\d+) [+-]\d{4}$/.exec(commit.committer)?.[1] ?? 0);
    commits.set(oid, { oid, tree: commit.tree, parents: commit.parents, time, height: 0 });
    stack.push(...commit.parents);
  }
  // Height along the first parent, so checkpoints written within one second keep their chain order.
  for (const oid of commits.keys()) {
    const path: string[] = [];
    const onPath = new Set<string>();
    let at: string | undefined = oid;
    while (at !== undefined && commits.get(at)?.height === 0 && !onPath.has(at)) {
      path.push(at);
      onPath.add(at);
      at = commits.get(at)!.parents.find((p) => commits.has(p));
    }
    let h = at !== undefined && !onPath.has(at) ? (commits.get(at)?.height ?? 0) : 0;
    for (let i = path.length - 1; i >= 0; i--) commits.get(path[i]!)!.height = ++h;
  }
  const chronological = [...commits.values()].sort((a, b) => a.time - b.time || a.height - b.height);

  const versions = new Map<string, string[]>();
  const seen = new Set<string>();
  const add = (key: string, oid: string): void => {
    const list = versions.get(key);
    if (list) list.push(oid);
    else versions.set(key, [oid]);
  };
  const walk = async (tree: string, path: string): Promise<void> => {
    if (seen.has(tree) || !source.isShadowObject(tree)) return;
    seen.add(tree);
    add(`tree:${path}`, tree);
    const object = await source.readObject(tree);
    if (object.type !== 'tree') return;
    for (const entry of parseTree(object.content, tree)) {
      if (entry.mode === GITLINK_MODE) continue;
      const child = path === '' ? entry.name : `${path}/${entry.name}`;
      if (entry.kind === 'tree') await walk(entry.oid, child);
      else if (!seen.has(entry.oid) && source.isShadowObject(entry.oid)) {
        seen.add(entry.oid);
        add(`blob:${child}`, entry.oid);
      }
    }
  };
  let slice = performance.now();
  for (const commit of chronological) {
    if (performance.now() - slice > YIELD_AFTER_MS) {
      await yieldTurn(control);
      slice = performance.now();
    }
    // Checkpoint commits differ from the previous one in their ids, times and trailer: a delta against the next is small.
    add('commit:', commit.oid);
    await walk(commit.tree, '');
  }
  for (const oid of loose) {
    if (seen.has(oid)) continue;
    seen.add(oid);
    add(ENTRIES_KEY, oid);
  }

  const bases = new Map<string, string>();
  for (const list of versions.values()) {
    for (let k = 0; k + 1 < list.length; k++) {
      if (k % (maxDepth + 1) !== maxDepth) bases.set(list[k]!, list[k + 1]!);
    }
  }
  return bases;
}
