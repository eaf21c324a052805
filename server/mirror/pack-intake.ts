/**
 * Indexing a pack received from a mirror without trusting it. Every entry's
 * declared size is checked against the limits before it is inflated, every
 * inflation stops at the declared size (a zlib stream that claims 100 bytes
 * and holds 1 GiB is cut off at the first chunk past 100), every delta's
 * result size is checked before it is applied, and the running total of
 * inflated bytes is checked as the pack is read. Only the window of the pack
 * being read and one object (with its delta base) are in memory at a time.
 * isomorphic-git's `indexPack` inflated every object whole first: a 1 GiB
 * blob of zeros took 4.3 GB of memory before anything could say no.
 */
import { createHash } from 'node:crypto';
import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { crc32, inflateSync } from 'node:zlib';
import { applyDelta } from '../store/delta.js';
import { CorruptObjectError } from '../store/errors.js';
import { LruCache } from '../store/lru.js';
import { hashObject, PACK_OFS_DELTA, PACK_REF_DELTA, typeFromPackCode, type AnyObjectType } from '../store/object-format.js';
import { writePackIndex, type PackIndexRow } from '../store/pack-index.js';
import { parseEntryHeader } from '../store/pack-reader.js';
import { describeBytes, ImportError, refusedImport, type ImportLimits } from './import-limits.js';

/** What the pack holds: each object's type and size, by id. */
export type PackContents = Map<string, { type: AnyObjectType; size: number }>;

interface Entry {
  offset: number;
  typeCode: number;
  /** Inflated size of the entry's data (for a delta: of the delta itself). */
  dataSize: number;
  dataStart: number;
  end: number;
  crc: number;
  baseOffset?: number;
  baseOid?: string;
  /** Known once resolved. */
  oid?: string;
  type?: AnyObjectType;
  size?: number;
}

const WINDOW_BYTES = 4 * 1024 * 1024;
const MAX_DELTA_DEPTH = 1000;

/** Checks and indexes the pack at `packPath` (writing its `.idx` beside it); throws {@link ImportError} for anything over the limits. */
export async function indexReceivedPack(packPath: string, limits: ImportLimits): Promise<PackContents> {
  const handle = await open(packPath, 'r');
  try {
    const pack = new PackWindow(handle, (await handle.stat()).size);
    const checksum = await verifyChecksum(pack);
    const intake = new Intake(pack, limits);
    try {
      await intake.readEntries();
      await intake.resolveDeltas();
    } catch (error) {
      if (error instanceof CorruptObjectError) throw refusedImport(`the pack the mirror sent is corrupt (${error.message})`);
      throw error;
    }
    const rows: PackIndexRow[] = [];
    const seen = new Set<string>();
    for (const e of intake.entries) {
      if (seen.has(e.oid!)) continue;
      seen.add(e.oid!);
      rows.push({ oid: e.oid!, offset: e.offset, crc: e.crc });
    }
    await writeFile(packPath.replace(/\.pack$/, '.idx'), writePackIndex(rows, checksum), { mode: 0o600 });
    return new Map(intake.entries.map((e) => [e.oid!, { type: e.type!, size: e.size! }]));
  } finally {
    await handle.close();
  }
}

/** Sequential and positioned reads of a pack file through one bounded buffer. */
class PackWindow {
  private buffer = Buffer.alloc(0);
  private start = 0;

  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  /** At least `min` bytes from `offset` (fewer only at the end of the file), possibly more. */
  async bytes(offset: number, min: number): Promise<Buffer> {
    const want = Math.min(min, this.size - offset);
    if (offset >= this.start && offset + want <= this.start + this.buffer.byteLength) return this.buffer.subarray(offset - this.start);
    const length = Math.min(Math.max(want, WINDOW_BYTES), this.size - offset);
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await this.handle.read(buffer, 0, length, offset);
    this.buffer = buffer.subarray(0, bytesRead);
    this.start = offset;
    return this.buffer;
  }
}

async function verifyChecksum(pack: PackWindow): Promise<Buffer> {
  if (pack.size < 32) throw refusedImport('the mirror sent a pack too short to hold anything');
  const hash = createHash('sha1');
  for (let at = 0; at < pack.size - 20; ) {
    const chunk = await pack.bytes(at, WINDOW_BYTES);
    const take = Math.min(chunk.byteLength, pack.size - 20 - at);
    hash.update(chunk.subarray(0, take));
    at += take;
  }
  const trailer = Buffer.from(await pack.bytes(pack.size - 20, 20)).subarray(0, 20);
  if (!hash.digest().equals(trailer)) throw refusedImport('the pack the mirror sent is corrupt (its checksum does not match)');
  return Buffer.from(trailer);
}

class Intake {
  readonly entries: Entry[] = [];
  private readonly byOffset = new Map<number, Entry>();
  private readonly byOid = new Map<string, Entry>();
  private readonly cache = new LruCache<number, Buffer>(64 * 1024 * 1024, (b) => b.byteLength + 64);
  private total = 0;

  constructor(
    private readonly pack: PackWindow,
    private readonly limits: ImportLimits,
  ) {}

  async readEntries(): Promise<void> {
    const head = await this.pack.bytes(0, 12);
    const version = head.readUInt32BE(4);
    if (head.toString('latin1', 0, 4) !== 'PACK' || (version !== 2 && version !== 3)) throw refusedImport('the mirror sent something that is not a git pack');
    const count = head.readUInt32BE(8);
    const end = this.pack.size - 20;
    let offset = 12;
    for (let n = 0; n < count; n++) {
      if (offset >= end) throw refusedImport(`the pack the mirror sent is truncated (${n} of ${count} objects)`);
      const entry = await this.readEntry(offset, end);
      this.entries.push(entry);
      this.byOffset.set(offset, entry);
      if (entry.oid) this.byOid.set(entry.oid, entry);
      offset = entry.end;
    }
    if (offset !== end) throw refusedImport('the pack the mirror sent holds more than it declares');
  }

  private async readEntry(offset: number, end: number): Promise<Entry> {
    const header = parseEntryHeader(await this.pack.bytes(offset, 64), offset);
    const dataStart = offset + header.dataStart;
    const isDelta = header.typeCode === PACK_OFS_DELTA || header.typeCode === PACK_REF_DELTA;
    const type = typeFromPackCode(header.typeCode);
    if (!isDelta && !type) throw refusedImport(`the pack the mirror sent has an object of unknown type ${header.typeCode}`);
    // A delta is a list of copy and insert instructions: a sane one is not much larger than what it builds.
    const allowed = isDelta ? this.limits.maxObjectBytes * 2 + 1024 : this.limits.maxObjectBytes;
    if (header.size > allowed) throw this.tooLarge(header.size);
    if (!isDelta) this.count(header.size);
    const { data, consumed } = await this.inflate(dataStart, header.size, end);
    const entry: Entry = { offset, typeCode: header.typeCode, dataSize: header.size, dataStart, end: dataStart + consumed, crc: 0 };
    entry.crc = crc32(await this.pack.bytes(offset, entry.end - offset).then((b) => b.subarray(0, entry.end - offset)));
    if (header.baseOffset !== undefined) entry.baseOffset = header.baseOffset;
    if (header.baseOid !== undefined) entry.baseOid = header.baseOid;
    if (isDelta) {
      const resultSize = deltaResultSize(data);
      if (resultSize > this.limits.maxObjectBytes) throw this.tooLarge(resultSize);
      this.count(resultSize);
    } else {
      Object.assign(entry, { type, size: header.size, oid: hashObject(type!, data) });
    }
    return entry;
  }

  /** Resolves every delta against its base (ref-deltas may name a base that comes later), giving each its id. */
  async resolveDeltas(): Promise<void> {
    let pending = this.entries.filter((e) => e.oid === undefined);
    while (pending.length > 0) {
      let progress = false;
      for (const entry of pending) {
        const content = await this.contentOf(entry, 0);
        if (!content) continue;
        progress = true;
        const type = await this.typeOf(entry);
        Object.assign(entry, { type, size: content.byteLength, oid: hashObject(type, content) });
        this.byOid.set(entry.oid!, entry);
      }
      pending = pending.filter((e) => e.oid === undefined);
      if (!progress) throw refusedImport(`the pack the mirror sent has ${pending.length} object(s) built on objects it does not hold`);
    }
  }

  private async typeOf(entry: Entry): Promise<AnyObjectType> {
    for (let e: Entry | undefined = entry, depth = 0; e; depth++) {
      if (e.type) return e.type;
      if (depth > MAX_DELTA_DEPTH) break;
      e = this.baseOf(e);
    }
    throw refusedImport('the pack the mirror sent has a delta without a base');
  }

  private baseOf(entry: Entry): Entry | undefined {
    if (entry.baseOffset !== undefined) {
      const base = this.byOffset.get(entry.baseOffset);
      if (!base) throw refusedImport('the pack the mirror sent has a delta whose base is not an object of the pack');
      return base;
    }
    return entry.baseOid !== undefined ? this.byOid.get(entry.baseOid) : undefined;
  }

  /** An entry's content, or undefined while its ref-delta base is not known yet. */
  private async contentOf(entry: Entry, depth: number): Promise<Buffer | undefined> {
    const cached = this.cache.get(entry.offset);
    if (cached) return cached;
    if (depth > MAX_DELTA_DEPTH) throw refusedImport('the pack the mirror sent has a delta chain too deep to follow');
    const { data } = await this.inflate(entry.dataStart, entry.dataSize, entry.end);
    let content = data;
    if (entry.typeCode === PACK_OFS_DELTA || entry.typeCode === PACK_REF_DELTA) {
      const base = this.baseOf(entry);
      if (!base) return undefined;
      const baseContent = await this.contentOf(base, depth + 1);
      if (!baseContent) return undefined;
      try {
        content = applyDelta(baseContent, data);
      } catch (error) {
        if (error instanceof CorruptObjectError) throw refusedImport(`the pack the mirror sent has a broken delta: ${error.message}`);
        throw error;
      }
    }
    this.cache.set(entry.offset, content);
    return content;
  }

  /** Inflates the zlib stream at `at`, stopping as soon as it goes past `size` bytes; returns the data and the compressed length. */
  private async inflate(at: number, size: number, end: number): Promise<{ data: Buffer; consumed: number }> {
    let want = Math.min(end - at, 64 * 1024 + Math.ceil(size / 8));
    for (;;) {
      const input = (await this.pack.bytes(at, want)).subarray(0, Math.min(want, end - at));
      try {
        const { buffer, engine } = inflateSync(input, { info: true, maxOutputLength: Math.max(1, size) }) as unknown as {
          buffer: Buffer;
          engine: { bytesWritten: number };
        };
        if (buffer.byteLength !== size)
          throw refusedImport(`the pack the mirror sent has an object that inflates to ${buffer.byteLength} bytes instead of the ${size} it declares`);
        return { data: buffer, consumed: engine.bytesWritten };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ERR_BUFFER_TOO_LARGE')
          throw refusedImport(`the pack the mirror sent has an object that inflates to more than the ${size} bytes it declares`);
        if (code === 'Z_BUF_ERROR' && want < end - at) {
          want = Math.min(end - at, want * 4);
          continue;
        }
        if (error instanceof ImportError) throw error;
        throw refusedImport(`the pack the mirror sent is corrupt (${(error as Error).message})`);
      }
    }
  }

  private count(bytes: number): void {
    this.total += bytes;
    if (this.total > this.limits.maxTotalBytes) {
      throw refusedImport(
        `the mirror holds more than ${describeBytes(this.limits.maxTotalBytes)} of files and checkpoints, the most one import takes in (--store-budget)`,
      );
    }
  }

  private tooLarge(bytes: number): ImportError {
    return refusedImport(
      `the mirror holds a file of ${describeBytes(bytes)}, over the ${describeBytes(this.limits.maxObjectBytes)} limit for one file (--max-file-size)`,
    );
  }
}

/** The size a delta builds, from its header (base size, then result size, as varints). */
function deltaResultSize(delta: Buffer): number {
  let i = 0;
  for (let field = 0; field < 2; field++) {
    let value = 0;
    let shift = 1;
    for (;;) {
      const byte = delta[i++];
      if (byte === undefined) throw refusedImport('the pack the mirror sent has a truncated delta');
      value += (byte & 0x7f) * shift;
      shift *= 128;
      if ((byte & 0x80) === 0) break;
    }
    if (field === 1) return value;
  }
  return 0;
}
