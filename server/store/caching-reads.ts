import { createHash } from 'node:crypto';
import { LruCache, ownBytes } from './lru.js';
import type { ObjectStore, ObjectType, StoredObject } from './types.js';

/** Repeats come within one turn end and the reviews right after it: older entries only fill memory. */
const IDLE_MS = 10_000;
/** What one cached object costs besides its bytes: the Buffer, its ArrayBuffer and the map entry. */
const ENTRY_OVERHEAD = 400;

/**
 * An object store view that keeps recently read objects in memory. Ending a
 * turn reads each changed blob several times (line counts, hashes, sizes,
 * changeset files); this makes the repeats free. Writes pass through.
 */
export class CachingReads implements ObjectStore {
  private readonly objects: LruCache<string, StoredObject>;
  /** Both sides of the files of one large turn, not the whole session's history. */
  private readonly sha256 = new LruCache<string, string>(20_000, undefined, IDLE_MS);

  constructor(
    private readonly store: ObjectStore,
    maxBytes = 16 * 1024 * 1024,
  ) {
    this.objects = new LruCache(maxBytes, (o) => o.content.byteLength + ENTRY_OVERHEAD, IDLE_MS);
  }

  writeObject(type: ObjectType, content: Uint8Array): Promise<string> {
    return this.store.writeObject(type, content);
  }

  hasObject(oid: string): Promise<boolean> {
    return this.store.hasObject(oid);
  }

  async readObject(oid: string): Promise<StoredObject> {
    const hit = this.objects.get(oid);
    if (hit) return hit;
    const read = await this.store.readObject(oid);
    const object = { type: read.type, content: ownBytes(read.content) };
    this.objects.set(oid, object);
    return object;
  }

  /** SHA-256 (hex) of an object's content, remembered by object id. */
  async sha256Of(oid: string): Promise<string> {
    const hit = this.sha256.get(oid);
    if (hit) return hit;
    const hash = createHash('sha256')
      .update((await this.readObject(oid)).content)
      .digest('hex');
    this.sha256.set(oid, hash);
    return hash;
  }

  /** Forgets what was not read since `time` (epoch ms): see {@link LruCache.dropUnusedSince}. */
  dropUnusedSince(time: number): void {
    this.objects.dropUnusedSince(time);
    this.sha256.dropUnusedSince(time);
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
