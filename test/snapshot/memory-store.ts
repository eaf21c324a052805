/**
 * An in-memory ObjectStore for tests: hashes with SHA-1 on its own (so it
 * also checks the engine's ids) and keeps every object in a Map.
 */
import { createHash } from 'node:crypto';
import type { ObjectStore, ObjectType, StoredObject } from '../../server/store/types.js';

export class MemoryObjectStore implements ObjectStore {
  readonly objects = new Map<string, StoredObject>();
  /** Number of writeObject calls, including ones for objects already present. */
  writes = 0;
  flushes = 0;

  async writeObject(type: ObjectType, content: Uint8Array): Promise<string> {
    this.writes++;
    const oid = createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
    if (!this.objects.has(oid)) this.objects.set(oid, { type, content: Uint8Array.from(content) });
    return oid;
  }

  async hasObject(oid: string): Promise<boolean> {
    return this.objects.has(oid);
  }

  async readObject(oid: string): Promise<StoredObject> {
    const o = this.objects.get(oid);
    if (!o) throw new Error(`object ${oid} not found`);
    return o;
  }

  async flush(): Promise<void> {
    this.flushes++;
  }
}
