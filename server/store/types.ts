/**
 * The contract between the snapshot engine and the object store. The engine
 * hashes and builds trees; the store decides where bytes live (the shadow
 * repository's packs, or the workspace repository it may only read).
 */

/** Git object kinds the engine writes. */
export type ObjectType = 'blob' | 'tree' | 'commit';

/** A stored object's kind and its raw content (without the git header). */
export interface StoredObject {
  type: ObjectType | 'tag';
  content: Uint8Array;
}

export interface ObjectStore {
  /**
   * Records an object and returns its SHA-1 id (lowercase hex). An object
   * already present in the shadow store or in the workspace repository is not
   * written again. Writes may be buffered until `flush()`; reads see them
   * immediately.
   */
  writeObject(type: ObjectType, content: Uint8Array): Promise<string>;
  /** True when the object can be read from this store or its fallback. */
  hasObject(oid: string): Promise<boolean>;
  /** Reads an object; rejects with a clear error when it is not present. */
  readObject(oid: string): Promise<StoredObject>;
  /** Persists buffered objects (as a pack) so they survive a restart. */
  flush(): Promise<void>;
}
