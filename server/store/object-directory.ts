/**
 * A git `objects` directory opened read-only: its packs (indexes kept in
 * memory for fast membership tests) and its loose objects (checked with one
 * stat, read on demand). The pack list is reloaded when the pack directory
 * changes, so a `git gc` in the workspace repository is picked up.
 */
import { statSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inflate, inflateSync } from 'node:zlib';
import { isNotFound, readSmallFileSync } from '../private-files.js';
import { parseLooseObject } from './object-format.js';
import { PackFile, type DeltaBaseCache } from './pack-reader.js';
import type { StoredObject } from './types.js';

const inflateAsync = promisify(inflate);

/** How long a pack list is trusted before the directory is stat'ed again, for membership tests. */
const PACK_RECHECK_MS = 1000;

/** Where a packed object lives. */
export interface PackedLocation {
  /** The pack holding the object. */
  pack: PackFile;
  /** Position of the object in the pack index's sorted table. */
  position: number;
}

/** A cached listing of one loose fan-out directory (`objects/ab/`). */
interface LooseListing {
  names: Set<string>;
  mtimeMs: number;
  checkedAt: number;
  listedAt?: number;
}

export class ObjectDirectory {
  private readonly looseListings = new Map<string, LooseListing>();
  private packList: PackFile[] = [];
  private stamp = '';
  private checkedAt = 0;
  private refreshing: Promise<boolean> | undefined;

  constructor(
    /** Absolute path of the `objects` directory. */
    readonly objectsDir: string,
    private readonly baseCache: DeltaBaseCache,
  ) {}

  /** The packs currently known, newest discoveries first. */
  get packs(): readonly PackFile[] {
    return this.packList;
  }

  /** Finds an object in the known packs without touching the disk. */
  findPacked(oid: Buffer): PackedLocation | undefined {
    for (const pack of this.packList) {
      const position = pack.index.indexOf(oid);
      if (position >= 0) return { pack, position };
    }
    return undefined;
  }

  /**
   * True when a loose object file exists. A stat per lookup costs ~50 µs on
   * the thread pool, too slow for hundreds of thousands of misses, so each
   * fan-out directory's listing is cached and re-validated (one stat of the
   * directory) at most once per second. A file added within that second may
   * be missed; the caller then stores a duplicate, which is harmless.
   */
  async hasLoose(oid: string): Promise<boolean> {
    const fan = oid.slice(0, 2);
    let listing = this.looseListings.get(fan);
    const now = Date.now();
    if (!listing || now - listing.checkedAt >= PACK_RECHECK_MS) {
      listing = await this.listLooseDir(fan, listing, now);
      this.looseListings.set(fan, listing);
    }
    return listing.names.has(oid.slice(2));
  }

  private async listLooseDir(fan: string, previous: LooseListing | undefined, now: number): Promise<LooseListing> {
    const dir = join(this.objectsDir, fan);
    // A synchronous stat: a turn end with 1,000 new objects re-validates up to 256 directories a second, and an
    // asynchronous stat waits a thread-pool round trip each (~50 µs) where the call itself takes a few.
    let mtimeMs: number;
    try {
      const info = statSync(dir, { throwIfNoEntry: false });
      if (!info) return { names: new Set(), mtimeMs: -1, checkedAt: now };
      mtimeMs = info.mtimeMs;
    } catch {
      return { names: new Set(), mtimeMs: -1, checkedAt: now };
    }
    // A listing taken in the same clock tick as a change may have missed it ("racy"), so relist then.
    const racy = previous !== undefined && previous.listedAt !== undefined && previous.listedAt - mtimeMs < 2000;
    if (previous && previous.mtimeMs === mtimeMs && !racy) {
      previous.checkedAt = now;
      return previous;
    }
    let names: string[] = [];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return { names: new Set(names), mtimeMs, checkedAt: now, listedAt: Date.now() };
  }

  /** Reads a loose object, or undefined when there is no such file. */
  async readLoose(oid: string): Promise<StoredObject | undefined> {
    let deflated: Buffer;
    try {
      deflated = readSmallFileSync(this.loosePath(oid)) ?? (await readFile(this.loosePath(oid)));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const inflated = deflated.byteLength >= 256 * 1024 ? await inflateAsync(deflated) : inflateSync(deflated);
    return parseLooseObject(inflated, oid);
  }

  /**
   * Reloads the pack list if the pack directory changed. Without `force`, the
   * directory is stat'ed at most once per second. Resolves true when the list
   * changed.
   */
  refresh(force = false): Promise<boolean> {
    if (!force && Date.now() - this.checkedAt < PACK_RECHECK_MS) return Promise.resolve(false);
    if (!this.refreshing) {
      this.refreshing = this.reload().finally(() => {
        this.refreshing = undefined;
      });
    }
    return this.refreshing;
  }

  /** Loads a pack's index (sharing this directory's delta base cache) without adding it. */
  loadPack(idxPath: string): Promise<PackFile> {
    return PackFile.load(idxPath, this.baseCache);
  }

  /** Adds a pack this process just wrote, without rescanning the directory. */
  addPack(pack: PackFile): void {
    this.packList = [pack, ...this.packList];
  }

  /** Forgets packs (after they were replaced); their files close once idle. */
  removePacks(packs: readonly PackFile[]): void {
    const gone = new Set(packs);
    this.packList = this.packList.filter((p) => !gone.has(p));
    for (const pack of packs) pack.retire();
  }

  /** Closes every pack file. */
  close(): void {
    for (const pack of this.packList) pack.retire();
    this.packList = [];
  }

  private loosePath(oid: string): string {
    return join(this.objectsDir, oid.slice(0, 2), oid.slice(2));
  }

  private async reload(): Promise<boolean> {
    const packDir = join(this.objectsDir, 'pack');
    const stamp = `${await mtime(packDir)}:${await mtime(join(this.objectsDir, 'info', 'packs'))}`;
    this.checkedAt = Date.now();
    if (stamp === this.stamp) return false;
    const names = new Set<string>();
    try {
      for (const name of await readdir(packDir)) if (name.startsWith('pack-') && name.endsWith('.idx')) names.add(name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    // objects/info/packs lists packs for dumb transports; honour it for packs a listing missed.
    for (const name of await listInfoPacks(this.objectsDir)) names.add(name);
    const byPath = new Map(this.packList.map((p) => [p.packPath, p]));
    const next: PackFile[] = [];
    for (const name of names) {
      const idxPath = join(packDir, name);
      const known = byPath.get(idxPath.replace(/\.idx$/, '.pack'));
      if (known) {
        next.push(known);
        byPath.delete(known.packPath);
        continue;
      }
      try {
        next.push(await PackFile.load(idxPath, this.baseCache));
      } catch (error) {
        // A pack that vanished between listing and loading (concurrent gc) is simply skipped.
        if (!isNotFound(error)) throw error;
      }
    }
    for (const stale of byPath.values()) stale.retire();
    this.packList = next;
    this.stamp = stamp;
    return true;
  }
}

async function mtime(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.mtimeMs}/${s.size}`;
  } catch {
    return '-';
  }
}

async function listInfoPacks(objectsDir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(join(objectsDir, 'info', 'packs'), 'utf8');
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const match = /^P (pack-[0-9a-f]+)\.pack$/.exec(line.trim());
    if (match) names.push(`${match[1]}.idx`);
  }
  const present: string[] = [];
  for (const name of names) {
    try {
      await stat(join(objectsDir, 'pack', name));
      present.push(name);
    } catch {
      // listed but gone: ignore
    }
  }
  return present;
}
