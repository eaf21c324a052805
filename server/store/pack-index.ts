/**
 * Pack index (`.idx`) version 2: reading for lookups and writing for the packs
 * the shadow store creates. Layout (gitformat-pack): magic `\377tOc`, version
 * 2, a 256-entry fanout table, sorted 20-byte ids, CRC-32s of the packed
 * entries, 4-byte offsets (MSB set = index into a table of 8-byte offsets),
 * then the pack checksum and the index's own checksum.
 */
import { createHash } from 'node:crypto';
import { CorruptObjectError } from './errors.js';

const MAGIC = 0xff744f63;
const HEADER_BYTES = 8;
const FANOUT_BYTES = 256 * 4;

/** A parsed `.idx` file held in memory: ids are looked up without copying them. */
export class PackIndex {
  /** Number of objects in the pack. */
  readonly count: number;
  /** Hex checksum of the pack this index describes (the pack's trailer). */
  readonly packChecksum: string;
  private readonly oidBase: number;
  private readonly crcBase: number;
  private readonly offsetBase: number;
  private readonly largeOffsetBase: number;
  private sortedOffsets: Float64Array | undefined;

  private constructor(private readonly buf: Buffer) {
    this.count = buf.readUInt32BE(HEADER_BYTES + 255 * 4);
    this.oidBase = HEADER_BYTES + FANOUT_BYTES;
    this.crcBase = this.oidBase + this.count * 20;
    this.offsetBase = this.crcBase + this.count * 4;
    this.largeOffsetBase = this.offsetBase + this.count * 4;
    this.packChecksum = buf.toString('hex', buf.byteLength - 40, buf.byteLength - 20);
  }

  /** Parses an index file's bytes; `name` is used in error messages only. */
  static parse(buf: Buffer, name: string): PackIndex {
    if (buf.byteLength < HEADER_BYTES + FANOUT_BYTES + 40) throw new CorruptObjectError(`pack index ${name} is truncated`);
    if (buf.readUInt32BE(0) !== MAGIC) throw new CorruptObjectError(`pack index ${name} is not a version 2 index`);
    const version = buf.readUInt32BE(4);
    if (version !== 2) throw new CorruptObjectError(`pack index ${name} has unsupported version ${version}`);
    const count = buf.readUInt32BE(HEADER_BYTES + 255 * 4);
    if (buf.byteLength < HEADER_BYTES + FANOUT_BYTES + count * 28 + 40) {
      throw new CorruptObjectError(`pack index ${name} is truncated`);
    }
    return new PackIndex(buf);
  }

  /** Position of the id in the sorted table, or -1 when the pack does not hold it. */
  indexOf(oid: Buffer): number {
    const buf = this.buf;
    const first = oid[0]!;
    let lo = first === 0 ? 0 : buf.readUInt32BE(HEADER_BYTES + (first - 1) * 4);
    let hi = buf.readUInt32BE(HEADER_BYTES + first * 4);
    const head = oid.readUInt32BE(0);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.oidBase + mid * 20;
      const probe = buf.readUInt32BE(at);
      if (probe < head) lo = mid + 1;
      else if (probe > head) hi = mid;
      else {
        const cmp = oid.compare(buf, at, at + 20, 0, 20);
        if (cmp === 0) return mid;
        if (cmp > 0) lo = mid + 1;
        else hi = mid;
      }
    }
    return -1;
  }

  /** The hex id at a position of the sorted table. */
  oidAt(i: number): string {
    const at = this.oidBase + i * 20;
    return this.buf.toString('hex', at, at + 20);
  }

  /** The CRC-32 of the packed entry at a position of the sorted table. */
  crcAt(i: number): number {
    return this.buf.readUInt32BE(this.crcBase + i * 4);
  }

  /** The byte offset in the pack of the entry at a position of the sorted table. */
  offsetAt(i: number): number {
    const small = this.buf.readUInt32BE(this.offsetBase + i * 4);
    if ((small & 0x80000000) === 0) return small;
    const at = this.largeOffsetBase + (small & 0x7fffffff) * 8;
    return Number(this.buf.readBigUInt64BE(at));
  }

  /**
   * Where the entry starting at `offset` ends: the next entry's offset, or the
   * start of the pack trailer for the last one.
   */
  entryEnd(offset: number, packSize: number): number {
    const sorted = this.offsetsInPackOrder();
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length ? sorted[lo]! : packSize - 20;
  }

  /** All entry offsets, ascending. */
  offsetsInPackOrder(): Float64Array {
    if (!this.sortedOffsets) {
      const offsets = new Float64Array(this.count);
      for (let i = 0; i < this.count; i++) offsets[i] = this.offsetAt(i);
      offsets.sort();
      this.sortedOffsets = offsets;
    }
    return this.sortedOffsets;
  }
}

/** One object's row in an index being written. */
export interface PackIndexRow {
  /** The object's id (lowercase hex). */
  oid: string;
  /** Byte offset of the entry in the pack. */
  offset: number;
  /** CRC-32 of the entry's bytes in the pack (header and compressed data). */
  crc: number;
}

/** Serialises a version 2 index for a pack whose trailer checksum is `packChecksum`. */
export function writePackIndex(rows: PackIndexRow[], packChecksum: Buffer): Buffer {
  // Lowercase hex sorts like the raw bytes, and string comparison is cheaper than Buffer.compare.
  const sorted = [...rows].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = sorted.length;
  const large = sorted.filter((r) => r.offset >= 0x80000000).length;
  const size = HEADER_BYTES + FANOUT_BYTES + n * 28 + large * 8 + 40;
  const out = Buffer.alloc(size);
  out.writeUInt32BE(MAGIC, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Uint32Array(256);
  for (const row of sorted) fanout[parseInt(row.oid.slice(0, 2), 16)]!++;
  let running = 0;
  for (let i = 0; i < 256; i++) {
    running += fanout[i]!;
    out.writeUInt32BE(running, HEADER_BYTES + i * 4);
  }
  const oidBase = HEADER_BYTES + FANOUT_BYTES;
  const crcBase = oidBase + n * 20;
  const offsetBase = crcBase + n * 4;
  const largeBase = offsetBase + n * 4;
  let largeIndex = 0;
  for (let i = 0; i < n; i++) {
    const row = sorted[i]!;
    out.write(row.oid, oidBase + i * 20, 20, 'hex');
    out.writeUInt32BE(row.crc >>> 0, crcBase + i * 4);
    if (row.offset < 0x80000000) {
      out.writeUInt32BE(row.offset, offsetBase + i * 4);
    } else {
      out.writeUInt32BE((0x80000000 | largeIndex) >>> 0, offsetBase + i * 4);
      out.writeBigUInt64BE(BigInt(row.offset), largeBase + largeIndex * 8);
      largeIndex++;
    }
  }
  const trailer = largeBase + large * 8;
  packChecksum.copy(out, trailer);
  createHash('sha1')
    .update(out.subarray(0, trailer + 20))
    .digest()
    .copy(out, trailer + 20);
  return out;
}
