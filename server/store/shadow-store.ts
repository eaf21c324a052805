/**
 * The shadow object store: new objects are buffered in memory, then written
 * as one pack per flush into the shadow bare repository. Reads and membership
 * tests fall back to the workspace repository's object directories, which are
 * only ever read. Objects already present anywhere are never written again.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { constants as zlibConstants } from 'node:zlib';
import { ObjectNotFoundError, StoreClosedError, StoreInputError } from './errors.js';
import { writeFileAtomic } from '../private-files.js';
import { SerialQueue } from '../serial-queue.js';
import { ObjectDirectory, type PackedLocation } from './object-directory.js';
import { EMPTY_TREE_OID, assertOid, assertWritableType, hashObject, describeValue } from './object-format.js';
import { createDeltaBaseCache, type DeltaBaseCache, type PackFile } from './pack-reader.js';
import { writePack, type PackSource } from './pack-writer.js';
import { RecentIds } from './recent-ids.js';
import { type RewriteControl, writeRepack } from './repack.js';
import { shadowTmpDir } from './shadow-repo.js';
import type { ObjectStore, ObjectType, StoredObject } from './types.js';

/** A flush of at most this many bytes is written uncompressed: see `writePack`'s level 0. */
const STORED_FLUSH_BYTES = 8 * 1024 * 1024;
/** A flush of at most this many bytes stays readable from memory for {@link FLUSHED_KEEP_MS}. */
const FLUSHED_KEEP_BYTES = 16 * 1024 * 1024;
/** How long a turn end goes on reading what its snapshot flushed (line counts, hashes, changesets). */
const FLUSHED_KEEP_MS = 10_000;

/** Default time ids stay in the recently-used list (retention's default grace). */
const RECENT_KEEP_MS = 15 * 60 * 1000;

/** Where the collection generation is kept. */
function generationFile(shadowDir: string): string {
  return join(shadowDir, 'changeset-server-generation');
}

/** Options of {@link ShadowStore.open}. */
export interface ShadowStoreOptions {
  /** The shadow bare repository (already initialised). */
  shadowDir: string;
  /** Workspace object directories to read from, in lookup order (may be empty). */
  workspaceObjectDirs: readonly string[];
  /** Buffered bytes that trigger an automatic flush inside `writeObject`; 64 MiB by default. */
  maxPendingBytes?: number;
  /** More shadow packs than this are consolidated into one after a flush; 50 by default. */
  maxPacks?: number;
}

/** A buffered object awaiting the next flush. */
interface PendingObject {
  type: ObjectType;
  content: Uint8Array;
}

/**
 * Keeps objects that came into use while a collection was running: every
 * object written or probed since `since`, plus what `expand` says they reach.
 */
export interface RewriteProtection {
  /** Epoch milliseconds when the caller started deciding what to keep. */
  since: number;
  /** The shadow objects reachable from the given ids (including them). */
  expand?: (roots: string[]) => Promise<Set<string>>;
}

/** Summary of one pack rewrite. */
export interface RewriteResult {
  /** Objects in the packs before the rewrite (duplicates across packs counted once). */
  objectsBefore: number;
  /** Objects kept in the new pack. */
  objectsKept: number;
  /** Packs replaced. */
  packsReplaced: number;
}

export class ShadowStore implements ObjectStore {
  private pending = new Map<string, PendingObject>();
  private pendingBytes = 0;
  private flushing: Map<string, PendingObject> | undefined;
  /**
   * What the last flush wrote, readable from memory for a while: a turn end
   * reads back the files its snapshot just stored (line counts, hashes) and
   * would otherwise inflate each one again.
   */
  private flushed: Map<string, PendingObject> | undefined;
  private flushedTimer: NodeJS.Timeout | undefined;
  private readonly writes = new SerialQueue();
  /** Object ids with when each was last written or probed. */
  private readonly recent = new RecentIds();
  /** How long `recent` remembers an id: the longest grace a collection asked for. */
  private recentKeepMs = RECENT_KEEP_MS;
  private touchesSincePrune = 0;
  private closed = false;
  private generation = 0;
  /** True while a compaction writes its pack (flushes do not consolidate packs meanwhile). */
  private compacting = false;

  private constructor(
    private readonly shadowDir: string,
    private readonly shadow: ObjectDirectory,
    private readonly workspace: ObjectDirectory[],
    private readonly baseCache: DeltaBaseCache,
    private readonly maxPendingBytes: number,
    private readonly maxPacks: number,
  ) {}

  /** Opens the store over an initialised shadow repository and loads every pack index. */
  static async open(options: ShadowStoreOptions): Promise<ShadowStore> {
    const baseCache: DeltaBaseCache = createDeltaBaseCache();
    const shadow = new ObjectDirectory(join(options.shadowDir, 'objects'), baseCache);
    const workspace = options.workspaceObjectDirs.map((dir) => new ObjectDirectory(dir, baseCache));
    await shadow.refresh(true);
    for (const dir of workspace) await dir.refresh(true);
    const store = new ShadowStore(options.shadowDir, shadow, workspace, baseCache, options.maxPendingBytes ?? 64 * 1024 * 1024, options.maxPacks ?? 50);
    const saved = Number((await readFile(generationFile(options.shadowDir), 'utf8').catch(() => '0')).trim());
    store.generation = Number.isSafeInteger(saved) && saved > 0 ? saved : 0;
    return store;
  }

  async writeObject(type: ObjectType, content: Uint8Array): Promise<string> {
    this.assertOpen();
    assertWritableType(type);
    if (!(content instanceof Uint8Array)) {
      throw new StoreInputError(`object content must be a Uint8Array, got ${describeValue(content)}`);
    }
    const oid = hashObject(type, content);
    this.touch(oid);
    if (this.pending.has(oid) || this.flushing?.has(oid) || this.shadow.findPacked(Buffer.from(oid, 'hex'))) return oid;
    if (await this.workspaceHas(oid)) return oid;
    if (this.pending.has(oid)) return oid;
    // Copy: the caller may reuse its buffer before the next flush.
    this.pending.set(oid, { type, content: Uint8Array.prototype.slice.call(content) });
    this.pendingBytes += content.byteLength;
    if (this.pendingBytes >= this.maxPendingBytes) await this.flush();
    return oid;
  }

  /**
   * Adds read-only fallback object directories (a nested repository's, whose
   * blobs snapshots reference without copying). Directories already known
   * are ignored.
   */
  async addFallbackObjectDirs(dirs: readonly string[]): Promise<void> {
    this.assertOpen();
    for (const dir of dirs) {
      if (this.workspace.some((d) => d.objectsDir === dir)) continue;
      const added = new ObjectDirectory(dir, this.baseCache);
      await added.refresh(true);
      this.workspace.push(added);
    }
  }

  async hasObject(oid: string): Promise<boolean> {
    this.assertOpen();
    assertOid(oid);
    if (this.pending.has(oid) || this.flushing?.has(oid)) return true;
    if (this.shadow.findPacked(Buffer.from(oid, 'hex'))) {
      // A probe usually precedes a reference to the object; keep it safe from a concurrent collection.
      this.touch(oid);
      return true;
    }
    return (await this.workspaceHas(oid)) || oid === EMPTY_TREE_OID;
  }

  async readObject(oid: string): Promise<StoredObject> {
    this.assertOpen();
    assertOid(oid);
    const buffered = this.pending.get(oid) ?? this.flushing?.get(oid) ?? this.flushed?.get(oid);
    if (buffered) return { type: buffered.type, content: buffered.content };
    const found = await this.readFromDisk(oid);
    if (found) return found;
    if (oid === EMPTY_TREE_OID) return { type: 'tree', content: new Uint8Array(0) };
    throw new ObjectNotFoundError(oid);
  }

  /** Writes every buffered object as one pack; consolidates packs when there are too many. */
  async flush(): Promise<void> {
    this.assertOpen();
    return this.writes.run(async () => {
      await this.flushPending();
      if (this.shadow.packs.length > this.maxPacks && !this.compacting) await this.rewriteUnlocked(undefined, undefined, this.packsToConsolidate());
    });
  }

  /** True when the object is stored in the shadow repository itself (buffered or packed). */
  isShadowObject(oid: string): boolean {
    return this.pending.has(oid) || this.flushing?.has(oid) === true || this.shadow.findPacked(Buffer.from(oid, 'hex')) !== undefined;
  }

  /** Compressed size of a packed shadow object (0 when it is buffered or absent). */
  async shadowEntrySize(oid: string): Promise<number> {
    const at = this.shadow.findPacked(Buffer.from(oid, 'hex'));
    return at ? at.pack.entrySize(at.position) : 0;
  }

  /** Number of packs in the shadow repository. */
  get packCount(): number {
    return this.shadow.packs.length;
  }

  /** Number of objects buffered and not yet flushed. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Every distinct object id in the shadow packs. */
  shadowObjectIds(): Set<string> {
    const ids = new Set<string>();
    for (const pack of this.shadow.packs) for (let i = 0; i < pack.index.count; i++) ids.add(pack.index.oidAt(i));
    return ids;
  }

  /**
   * Ids written (or re-written) within the last `graceMs`, which a collection
   * must keep: they may belong to a checkpoint whose ref is not written yet.
   */
  recentlyWritten(graceMs: number): Set<string> {
    this.recentKeepMs = Math.max(this.recentKeepMs, graceMs);
    const cutoff = Date.now() - graceMs;
    const ids = this.recent.since(cutoff);
    for (const oid of this.pending.keys()) ids.add(oid);
    return ids;
  }

  /**
   * Replaces all shadow packs by one holding the objects `keep` accepts (all
   * when `keep` is undefined). Buffered objects are flushed first.
   */
  async rewritePacks(keep?: (oid: string) => boolean, protect?: RewriteProtection): Promise<RewriteResult> {
    this.assertOpen();
    return this.writes.run(async () => {
      await this.flushPending();
      const result = await this.rewriteUnlocked(keep, protect);
      if (keep) {
        // What was dropped is not read from memory either.
        this.forgetFlushed();
        this.generation++;
        await writeFileAtomic(generationFile(this.shadowDir), `${this.generation}\n`, shadowTmpDir(this.shadowDir));
      }
      return result;
    });
  }

  /**
   * Incremented (and persisted, so it survives restarts) each time a rewrite
   * may have removed objects.
   */
  get collectionGeneration(): number {
    return this.generation;
  }

  /** Flushes, then closes every pack file. Further calls fail with {@link StoreClosedError}. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    this.forgetFlushed();
    this.shadow.close();
    for (const dir of this.workspace) dir.close();
  }

  private touch(oid: string): void {
    this.recent.touch(oid);
    // Without pruning, every id ever written would stay in memory for the life of the process.
    if (++this.touchesSincePrune >= 4096) {
      this.touchesSincePrune = 0;
      this.recent.forgetBefore(Date.now() - this.recentKeepMs);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  private async workspaceHas(oid: string): Promise<boolean> {
    if (this.workspace.length === 0) return false;
    const key = Buffer.from(oid, 'hex');
    for (const dir of this.workspace) if (dir.findPacked(key)) return true;
    for (const dir of this.workspace) if (await dir.hasLoose(oid)) return true;
    let changed = false;
    for (const dir of this.workspace) changed = (await dir.refresh()) || changed;
    return changed && this.workspace.some((dir) => dir.findPacked(key) !== undefined);
  }

  private async readFromDisk(oid: string): Promise<StoredObject | undefined> {
    const key = Buffer.from(oid, 'hex');
    for (let attempt = 0; attempt < 2; attempt++) {
      const at = this.shadow.findPacked(key) ?? this.findWorkspacePacked(key);
      if (at) {
        try {
          return await at.pack.readAt(at.position, (base) => this.readObject(base));
        } catch (error) {
          // The pack may have been replaced by a concurrent repack or gc; look again once.
          if (attempt > 0) throw error;
          for (const dir of this.workspace) await dir.refresh(true);
          continue;
        }
      }
      for (const dir of this.workspace) {
        const loose = await dir.readLoose(oid);
        if (loose) return loose;
      }
      const stray = await this.shadow.readLoose(oid);
      if (stray) return stray;
      if (attempt > 0) return undefined;
      let changed = false;
      for (const dir of this.workspace) changed = (await dir.refresh(true)) || changed;
      if (!changed) return undefined;
    }
    return undefined;
  }

  private findWorkspacePacked(key: Buffer): PackedLocation | undefined {
    for (const dir of this.workspace) {
      const at = dir.findPacked(key);
      if (at) return at;
    }
    return undefined;
  }

  private async flushPending(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    const bytes = this.pendingBytes;
    this.pending = new Map();
    this.pendingBytes = 0;
    this.flushing = batch;
    try {
      const sources = function* (): Generator<PackSource> {
        for (const [oid, o] of batch) yield { kind: 'object', oid, type: o.type, content: o.content };
      };
      // A small batch is stored uncompressed (compaction compresses it in idle time); a large one at zlib level 1.
      const level = bytes <= STORED_FLUSH_BYTES ? zlibConstants.Z_NO_COMPRESSION : zlibConstants.Z_BEST_SPEED;
      const written = await writePack(join(this.shadowDir, 'objects', 'pack'), sources(), batch.size, { level });
      this.shadow.addPack(await this.shadow.loadPack(written.idxPath));
      this.keepFlushed(batch, bytes);
    } catch (error) {
      // Keep the objects buffered so a later flush can retry.
      for (const [oid, o] of batch) {
        if (!this.pending.has(oid)) {
          this.pending.set(oid, o);
          this.pendingBytes += o.content.byteLength;
        }
      }
      throw error;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Keeps a flushed batch readable from memory until the next flush or {@link FLUSHED_KEEP_MS}, when it is small enough. */
  private keepFlushed(batch: Map<string, PendingObject>, bytes: number): void {
    this.forgetFlushed();
    if (bytes > FLUSHED_KEEP_BYTES) return;
    this.flushed = batch;
    this.flushedTimer = setTimeout(() => this.forgetFlushed(), FLUSHED_KEEP_MS);
    this.flushedTimer.unref();
  }

  private forgetFlushed(): void {
    if (this.flushedTimer) clearTimeout(this.flushedTimer);
    this.flushedTimer = undefined;
    this.flushed = undefined;
  }

  /**
   * Geometric consolidation: the largest pack is left alone while it holds at
   * least as many objects as all the others together, so big stores are not
   * rewritten whole every time small packs pile up.
   */
  private packsToConsolidate(): PackFile[] {
    const bySize = [...this.shadow.packs].sort((a, b) => b.index.count - a.index.count);
    const largest = bySize[0];
    const rest = bySize.slice(1).reduce((n, p) => n + p.index.count, 0);
    return largest && largest.index.count >= rest ? bySize.slice(1) : bySize;
  }

  private async rewriteUnlocked(
    keep: ((oid: string) => boolean) | undefined,
    protect: RewriteProtection | undefined,
    packs: readonly PackFile[] = this.shadow.packs,
  ): Promise<RewriteResult> {
    const startedAt = protect?.since ?? Date.now();
    const oldPacks = [...packs];
    const all = new Map<string, PackedLocation>();
    for (const pack of oldPacks) {
      for (let i = 0; i < pack.index.count; i++) {
        const oid = pack.index.oidAt(i);
        if (!all.has(oid)) all.set(oid, { pack, position: i });
      }
    }
    const chosen = keep ? new Map([...all].filter(([oid]) => keep(oid))) : all;
    if (oldPacks.length <= 1 && chosen.size === all.size) {
      return { objectsBefore: all.size, objectsKept: all.size, packsReplaced: 0 };
    }
    const added: PackFile[] = [];
    if (chosen.size > 0) added.push(await this.packFrom(chosen));
    // Objects written or probed while the pack was being written may have been
    // judged unreachable a moment earlier; they are in use now, so keep them too.
    const rescued = new Map<string, PackedLocation>();
    const inUse = [...this.recent.since(startedAt)];
    const reached = protect?.expand && inUse.length > 0 ? await protect.expand(inUse) : new Set(inUse);
    for (const oid of reached) {
      const location = chosen.has(oid) ? undefined : all.get(oid);
      if (location) rescued.set(oid, location);
    }
    if (rescued.size > 0) added.push(await this.packFrom(rescued));
    const addedPaths = new Set(added.map((p) => p.packPath));
    const replaced = oldPacks.filter((p) => !addedPaths.has(p.packPath));
    this.shadow.removePacks(oldPacks);
    for (const pack of added) this.shadow.addPack(pack);
    for (const pack of replaced) {
      // Index first: a pack without an index is invisible, never the reverse.
      await rm(pack.packPath.replace(/\.pack$/, '.idx'), { force: true });
      await rm(pack.packPath, { force: true });
      await rm(pack.packPath.replace(/\.pack$/, '.rev'), { force: true });
    }
    return { objectsBefore: all.size, objectsKept: chosen.size + rescued.size, packsReplaced: replaced.length };
  }

  /**
   * Writes the given packed objects into one new pack (`repack.ts`): entries
   * copied verbatim, a delta kept when its base goes into the same pack and
   * stored whole otherwise, so the new pack stands alone.
   */
  private async packFrom(objects: ReadonlyMap<string, PackedLocation>): Promise<PackFile> {
    const written = await writeRepack(join(this.shadowDir, 'objects', 'pack'), objects, { readObject: (oid) => this.readObject(oid) });
    return this.shadow.loadPack(written.idxPath);
  }

  /**
   * Compaction: rewrites the shadow packs into one where each object in
   * `bases` is a delta against the object it names (the next newer version
   * of its path), entries compressed again at zlib's best level except those
   * of the largest pack, which an earlier compaction wrote. The new pack is
   * written while flushes go on (they add packs of their own); only the swap
   * waits for the write queue. When a rewrite replaced any of the packs
   * meanwhile, the new pack is thrown away and nothing changes.
   */
  async compact(bases: ReadonlyMap<string, string>, maxDepth?: number, control?: RewriteControl): Promise<RewriteResult> {
    this.assertOpen();
    await this.flush();
    const packs = [...this.shadow.packs];
    const all = new Map<string, PackedLocation>();
    for (const pack of packs) for (let i = 0; i < pack.index.count; i++) if (!all.has(pack.index.oidAt(i))) all.set(pack.index.oidAt(i), { pack, position: i });
    const unchanged = { objectsBefore: all.size, objectsKept: all.size, packsReplaced: 0 };
    if (packs.length < 2 || this.compacting) return unchanged;
    const largest = [...packs].sort((a, b) => b.index.count - a.index.count)[0];
    this.compacting = true;
    let written: { idxPath: string; packPath: string } | undefined;
    try {
      written = await writeRepack(join(this.shadowDir, 'objects', 'pack'), all, {
        readObject: (oid) => this.readObject(oid),
        bases,
        recompress: new Set(packs.filter((p) => p !== largest)),
        ...(maxDepth !== undefined ? { maxDepth } : {}),
        ...(control !== undefined ? { control } : {}),
      });
      const done = written;
      return await this.writes.run(async () => {
        // The same objects in the same order make the same pack, under the same name: that file stays.
        const known = (path: string): boolean => this.shadow.packs.some((p) => p.packPath === path);
        if (this.closed || !packs.every((p) => this.shadow.packs.includes(p))) {
          if (!known(done.packPath)) {
            await rm(done.idxPath, { force: true });
            await rm(done.packPath, { force: true });
          }
          return unchanged;
        }
        const pack = await this.shadow.loadPack(done.idxPath);
        this.shadow.removePacks(packs);
        this.shadow.addPack(pack);
        for (const old of packs.filter((p) => p.packPath !== done.packPath)) {
          // Index first: a pack without an index is invisible, never the reverse.
          await rm(old.packPath.replace(/\.pack$/, '.idx'), { force: true });
          await rm(old.packPath, { force: true });
          await rm(old.packPath.replace(/\.pack$/, '.rev'), { force: true });
        }
        return { objectsBefore: all.size, objectsKept: all.size, packsReplaced: packs.length };
      });
    } finally {
      this.compacting = false;
    }
  }
}
