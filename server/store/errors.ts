/**
 * Errors raised by the store. Each carries a stable `code` so callers (the
 * JSON-RPC layer, operations) can map them without matching on messages.
 */

/** A caller passed an argument the store cannot accept (bad oid, bad id, bad metadata). */
export class StoreInputError extends Error {
  /** Stable machine-readable error kind. */
  readonly code = 'STORE_INPUT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'StoreInputError';
  }
}

/** The object is neither in the shadow store nor in the workspace repository. */
export class ObjectNotFoundError extends Error {
  /** Stable machine-readable error kind. */
  readonly code = 'OBJECT_NOT_FOUND' as const;
  /** The id that was looked up. */
  readonly oid: string;
  constructor(oid: string) {
    super(`object ${oid} not found in the shadow store or the workspace repository`);
    this.name = 'ObjectNotFoundError';
    this.oid = oid;
  }
}

/** Bytes on disk do not parse as what they claim to be (truncated pack, bad idx, bad delta). */
export class CorruptObjectError extends Error {
  /** Stable machine-readable error kind. */
  readonly code = 'CORRUPT_OBJECT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'CorruptObjectError';
  }
}

/** Another live process holds the shadow store's write lock. */
export class StoreBusyError extends Error {
  /** Stable machine-readable error kind. */
  readonly code = 'STORE_BUSY' as const;
  constructor(message: string) {
    super(message);
    this.name = 'StoreBusyError';
  }
}

/** The store was used after `close()`. */
export class StoreClosedError extends Error {
  /** Stable machine-readable error kind. */
  readonly code = 'STORE_CLOSED' as const;
  constructor() {
    super('the workspace store is closed');
    this.name = 'StoreClosedError';
  }
}
