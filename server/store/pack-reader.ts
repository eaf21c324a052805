/**
 * Random access to one pack through its index: entries are read with
 * positioned reads (the pack is never loaded whole), inflated, and deltas are
 * resolved against their base (same pack for ofs-delta; any store for
 * ref-delta, through a caller-supplied resolver).
 */
import { readSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { inflate, inflateSync } from 'node:zlib';
import { applyDelta } from './delta.js';
import { CorruptObjectError } from './errors.js';
import { LruCache } from './lru.js';
import { PACK_OFS_DELTA, PACK_REF_DELTA, typeFromPackCode } from './object-format.js';
import { PackIndex } from './pack-index.js';
import type { StoredObject } from './types.js';

const inflateAsync = promisify(inflate);
const ASYNC_INFLATE_BYTES = 256 * 1024;
/**
 * Entries up to this size are read with a synchronous positioned read: from
 * the page cache it takes microseconds, while an asynchronous read waits a
 * thread-pool round trip, and a diff reads its trees and blobs one after
 * another (a 1,000-file turn end spent ~0.5 s waiting on them).
 */
const SYNC_READ_BYTES = 64 * 1024;
/** zlib's smallest accepted output chunk. */
const MIN_INFLATE_CHUNK = 64;

/** Resolves the base of a ref-delta, which may live anywhere in the object database. */
export type RefDeltaResolver = (oid: string) => Promise<StoredObject>;

/** Shared cache of reconstructed delta bases, keyed by pack path and offset. */
export type DeltaBaseCache = LruCache<string, StoredObject>;

/** Creates a delta base cache bounded by content bytes. */
export function createDeltaBaseCache(maxBytes = 32 * 1024 * 1024): DeltaBaseCache {
  return new LruCache<string, StoredObject>(maxBytes, (o) => o.content.byteLength + 64);
}

interface EntryHeader {
  typeCode: number;
  size: number;
  dataStart: number;
  baseOffset?: number;
  baseOid?: string;
}

/** Parses a pack entry's header from the bytes starting at the entry. */
export function parseEntryHeader(buf: Buffer, entryOffset: number): EntryHeader {
  let i = 0;
  let byte = buf[i++]!;
  const typeCode = (byte >> 4) & 0x07;
  let size = byte & 0x0f;
  let shift = 16;
  while (byte & 0x80) {
    if (i >= buf.byteLength) throw new CorruptObjectError(`pack entry at ${entryOffset} has a truncated header`);
    byte = buf[i++]!;
    size += (byte & 0x7f) * shift;
    shift *= 128;
  }
  if (typeCode === PACK_OFS_DELTA) {
    byte = buf[i++]!;
    let rel = byte & 0x7f;
    while (byte & 0x80) {
      byte = buf[i++]!;
      rel = (rel + 1) * 128 + (byte & 0x7f);
    }
    return { typeCode, size, dataStart: i, baseOffset: entryOffset - rel };
  }
  if (typeCode === PACK_REF_DELTA) {
    return { typeCode, size, dataStart: i + 20, baseOid: buf.toString('hex', i, i + 20) };
  }
  return { typeCode, size, dataStart: i };
}

/** One pack file and its index. */
export class PackFile {
  private handle: Promise<FileHandle> | undefined;
  private packSize = 0;
  private inFlight = 0;
  private retired = false;
  private byOffset: Map<number, number> | undefined;

  private constructor(
    /** Absolute path of the `.pack` file. */
    readonly packPath: string,
    /** The pack's parsed index. */
    readonly index: PackIndex,
    private readonly baseCache: DeltaBaseCache,
  ) {}

  /** Loads the index at `idxPath`; the pack itself is opened on first read. */
  static async load(idxPath: string, baseCache: DeltaBaseCache): Promise<PackFile> {
    const index = PackIndex.parse(await readFile(idxPath), idxPath);
    return new PackFile(idxPath.replace(/\.idx$/, '.pack'), index, baseCache);
  }

  /** True when the pack holds the object (a binary search in memory). */
  has(oid: Buffer): boolean {
    return this.index.indexOf(oid) >= 0;
  }

  /** Reads the object at a sorted-table position of the index. */
  async readAt(position: number, resolveRef: RefDeltaResolver): Promise<StoredObject> {
    return this.withHandle((handle) => this.readEntry(handle, this.index.offsetAt(position), resolveRef, 0, new Set()));
  }

  /**
   * The raw bytes of the entry at a sorted-table position, when it is stored
   * whole (not as a delta), so it can be copied into another pack unchanged.
   */
  async readRawEntry(position: number): Promise<Buffer | undefined> {
    return this.withHandle(async (handle) => {
      const offset = this.index.offsetAt(position);
      const bytes = await this.readRange(handle, offset);
      const header = parseEntryHeader(bytes, offset);
      return header.typeCode === PACK_OFS_DELTA || header.typeCode === PACK_REF_DELTA ? undefined : bytes;
    });
  }

  /**
   * The raw bytes of the entry at a sorted-table position and what its header
   * says: its type code, the size it inflates to, where its compressed data
   * starts, and for a delta the id of its base when the base is in this pack
   * (an ofs-delta's base found through the index; a ref-delta's named).
   */
  async readEntryInfo(position: number): Promise<{ raw: Buffer; typeCode: number; size: number; dataStart: number; baseOid?: string }> {
    return this.withHandle(async (handle) => {
      const offset = this.index.offsetAt(position);
      const raw = await this.readRange(handle, offset);
      const header = parseEntryHeader(raw, offset);
      const info = { raw, typeCode: header.typeCode, size: header.size, dataStart: header.dataStart };
      if (header.baseOid !== undefined) return { ...info, baseOid: header.baseOid };
      if (header.baseOffset !== undefined) {
        const at = this.positionOfOffset(header.baseOffset);
        if (at === undefined) throw new CorruptObjectError(`${this.packPath}: delta at ${offset} names a base at ${header.baseOffset}, where no entry starts`);
        return { ...info, baseOid: this.index.oidAt(at) };
      }
      return info;
    });
  }

  /** The id of the delta base of the entry at a sorted-table position, or undefined when it is stored whole. */
  async deltaBaseAt(position: number): Promise<string | undefined> {
    return this.withHandle(async (handle) => {
      const offset = this.index.offsetAt(position);
      const end = this.index.entryEnd(offset, this.packSize);
      const head = Buffer.allocUnsafe(Math.min(end - offset, 40));
      if (readSync(handle.fd, head, 0, head.byteLength, offset) !== head.byteLength) throw new CorruptObjectError(`${this.packPath} is truncated at ${offset}`);
      const header = parseEntryHeader(head, offset);
      if (header.baseOid !== undefined) return header.baseOid;
      if (header.baseOffset === undefined) return undefined;
      const at = this.positionOfOffset(header.baseOffset);
      if (at === undefined) throw new CorruptObjectError(`${this.packPath}: delta at ${offset} names a base at ${header.baseOffset}, where no entry starts`);
      return this.index.oidAt(at);
    });
  }

  /** The sorted-table position of the entry starting at `offset`. */
  private positionOfOffset(offset: number): number | undefined {
    if (!this.byOffset) {
      this.byOffset = new Map();
      for (let i = 0; i < this.index.count; i++) this.byOffset.set(this.index.offsetAt(i), i);
    }
    return this.byOffset.get(offset);
  }

  /** Size in bytes of the stored entry at a sorted-table position (compressed, with header). */
  async entrySize(position: number): Promise<number> {
    await this.withHandle(async () => undefined);
    const offset = this.index.offsetAt(position);
    return this.index.entryEnd(offset, this.packSize) - offset;
  }

  /** Closes the file once no read is in flight; later reads reopen it. */
  retire(): void {
    this.retired = true;
    if (this.inFlight === 0) void this.closeHandle();
  }

  private async withHandle<T>(fn: (handle: FileHandle) => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await fn(await this.openHandle());
    } finally {
      this.inFlight--;
      if (this.retired && this.inFlight === 0) void this.closeHandle();
    }
  }

  private openHandle(): Promise<FileHandle> {
    if (!this.handle) {
      const opening = (async () => {
        const handle = await open(this.packPath, 'r');
        try {
          const { size } = await handle.stat();
          const head = Buffer.alloc(12);
          const tail = Buffer.alloc(20);
          await handle.read(head, 0, 12, 0);
          await handle.read(tail, 0, 20, size - 20);
          if (head.toString('latin1', 0, 4) !== 'PACK') throw new CorruptObjectError(`${this.packPath} is not a pack`);
          if (tail.toString('hex') !== this.index.packChecksum) {
            throw new CorruptObjectError(`${this.packPath} does not match its index`);
          }
          this.packSize = size;
          return handle;
        } catch (error) {
          await handle.close();
          throw error;
        }
      })();
      this.handle = opening;
      opening.catch(() => {
        if (this.handle === opening) this.handle = undefined;
      });
    }
    return this.handle;
  }

  private async closeHandle(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await (await handle.catch(() => undefined))?.close();
  }

  private async readRange(handle: FileHandle, offset: number): Promise<Buffer> {
    const end = this.index.entryEnd(offset, this.packSize);
    if (end <= offset || end > this.packSize - 20) throw new CorruptObjectError(`${this.packPath}: bad entry offset ${offset}`);
    const buf = Buffer.allocUnsafe(end - offset);
    const bytesRead =
      buf.byteLength <= SYNC_READ_BYTES ? readSync(handle.fd, buf, 0, buf.byteLength, offset) : (await handle.read(buf, 0, buf.byteLength, offset)).bytesRead;
    if (bytesRead !== buf.byteLength) throw new CorruptObjectError(`${this.packPath} is truncated at ${offset}`);
    return buf;
  }

  /** `chain` holds the offsets being read below this one: a ref-delta naming one of them as its base is a loop, refused at once. */
  private async readEntry(handle: FileHandle, offset: number, resolveRef: RefDeltaResolver, depth: number, chain: Set<number>): Promise<StoredObject> {
    if (depth > 0) {
      const cached = this.baseCache.get(`${this.packPath}:${offset}`);
      if (cached) return cached;
    }
    if (chain.has(offset)) throw new CorruptObjectError(`${this.packPath}: delta chain loops back to its entry at ${offset}`);
    if (depth > 10_000) throw new CorruptObjectError(`${this.packPath}: delta chain too deep at ${offset}`);
    chain.add(offset);
    const bytes = await this.readRange(handle, offset);
    const header = parseEntryHeader(bytes, offset);
    const compressed = bytes.subarray(header.dataStart);
    // An output chunk of the object's size: zlib's default 16 KiB chunk would stay
    // behind every small object as its backing store, wherever the object is cached.
    const inflateOptions = { chunkSize: Math.max(MIN_INFLATE_CHUNK, header.size) };
    const data = compressed.byteLength >= ASYNC_INFLATE_BYTES ? await inflateAsync(compressed, inflateOptions) : inflateSync(compressed, inflateOptions);
    if (data.byteLength !== header.size) {
      throw new CorruptObjectError(`${this.packPath}: entry at ${offset} inflates to ${data.byteLength} bytes, expected ${header.size}`);
    }
    let result: StoredObject;
    if (header.baseOffset !== undefined) {
      const base = await this.readEntry(handle, header.baseOffset, resolveRef, depth + 1, chain);
      result = { type: base.type, content: applyDelta(base.content, data) };
    } else if (header.baseOid !== undefined) {
      // A base in this pack is read here, so its chain counts towards the depth limit and a loop is caught.
      const inPack = this.index.indexOf(Buffer.from(header.baseOid, 'hex'));
      const base = inPack >= 0 ? await this.readEntry(handle, this.index.offsetAt(inPack), resolveRef, depth + 1, chain) : await resolveRef(header.baseOid);
      result = { type: base.type, content: applyDelta(base.content, data) };
    } else {
      const type = typeFromPackCode(header.typeCode);
      if (!type) throw new CorruptObjectError(`${this.packPath}: entry at ${offset} has unknown type ${header.typeCode}`);
      result = { type, content: data };
    }
    if (depth > 0) this.baseCache.set(`${this.packPath}:${offset}`, result);
    return result;
  }
}
