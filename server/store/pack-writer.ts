/**
 * Writes one pack (version 2, undeltified entries) plus its version 2 index,
 * crash-safely: both are written under temporary names and fsynced, then the
 * pack is renamed into place and the index last, so an index never names an
 * incomplete pack (readers discover packs through their indexes).
 */
import { randomBytes, createHash } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflate, deflateSync, constants as zlibConstants } from 'node:zlib';
import { PACK_TYPE_CODE, type AnyObjectType } from './object-format.js';
import { writePackIndex, type PackIndexRow } from './pack-index.js';
import { fsyncDirectory, openPrivate } from '../private-files.js';

const deflateAsync = promisify(deflate);

/** Objects at least this big are compressed on the thread pool so the event loop keeps running. */
const ASYNC_DEFLATE_BYTES = 256 * 1024;
/** Output is written in batches of about this size. */
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;

/** One object to put in a pack. */
export type PackSource =
  /** An object given by content; it is compressed while writing. */
  | { kind: 'object'; oid: string; type: AnyObjectType; content: Uint8Array }
  /** An undeltified entry copied verbatim from another pack (header and compressed data). */
  | { kind: 'raw'; oid: string; entry: Buffer };

/** A pack that is now visible in the pack directory. */
export interface WrittenPack {
  /** Base name without extension: `pack-<checksum>`. */
  name: string;
  /** Absolute path of the `.pack` file. */
  packPath: string;
  /** Absolute path of the `.idx` file. */
  idxPath: string;
  /** Number of objects written. */
  objectCount: number;
}

/** Options for {@link writePack}. */
export interface WritePackOptions {
  /** zlib level for new entries; 1 (fastest) by default, 0 stores them uncompressed. */
  level?: number;
}

/** The variable-length type-and-size header that starts every pack entry. */
export function encodeEntryHeader(typeCode: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (typeCode << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** Largest stored deflate block. */
const STORED_BLOCK_BYTES = 65535;

/** Adler-32 of `data`, zlib's checksum. */
function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  let i = 0;
  const n = data.length;
  while (i < n) {
    // 3,800 steps cannot overflow b before the modulo (as zlib's NMAX, with a margin for doubles).
    const end = Math.min(i + 3800, n);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/**
 * A pack entry whose data is a zlib stream of stored (uncompressed) deflate
 * blocks, written here without zlib: what `deflate` at level 0 makes, any
 * zlib and git inflate it, and it costs a copy where compressing a small
 * object costs setting up a compressor (about 25 µs an object). Compaction
 * compresses these entries again in idle time.
 */
function storedEntry(header: Buffer, content: Uint8Array): Buffer {
  const blocks = Math.max(1, Math.ceil(content.byteLength / STORED_BLOCK_BYTES));
  const out = Buffer.allocUnsafe(header.byteLength + 2 + blocks * 5 + content.byteLength + 4);
  let o = header.copy(out, 0);
  // CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (no dictionary, "fastest"; the pair is a multiple of 31).
  out[o++] = 0x78;
  out[o++] = 0x01;
  for (let k = 0; k < blocks; k++) {
    const start = k * STORED_BLOCK_BYTES;
    const length = Math.min(STORED_BLOCK_BYTES, content.byteLength - start);
    out[o++] = k === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(length, o);
    out.writeUInt16LE(~length & 0xffff, o + 2);
    o += 4;
    out.set(content.subarray(start, start + length), o);
    o += length;
  }
  out.writeUInt32BE(adler32(content), o);
  return out;
}

async function encodeEntry(source: PackSource, level: number): Promise<Buffer> {
  if (source.kind === 'raw') return source.entry;
  const header = encodeEntryHeader(PACK_TYPE_CODE[source.type], source.content.byteLength);
  const size = source.content.byteLength;
  if (level === zlibConstants.Z_NO_COMPRESSION) return storedEntry(header, source.content);
  // zlib's default 16 KiB output chunk is allocated per call; sizing it to the
  // object makes small objects (the common case) about 2.5x faster to compress.
  const compressed =
    size >= ASYNC_DEFLATE_BYTES
      ? await deflateAsync(source.content, { level, chunkSize: 256 * 1024 })
      : deflateSync(source.content, { level, chunkSize: Math.max(64, Math.min(size + 64, 64 * 1024)) });
  return Buffer.concat([header, compressed]);
}

/**
 * Writes `count` objects from `sources` as one pack in `packDir` and returns
 * it once both files are durable and in place.
 */
export async function writePack(
  packDir: string,
  sources: Iterable<PackSource> | AsyncIterable<PackSource>,
  count: number,
  options: WritePackOptions = {},
): Promise<WrittenPack> {
  const level = options.level ?? zlibConstants.Z_BEST_SPEED;
  const suffix = randomBytes(6).toString('hex');
  const tmpPack = join(packDir, `tmp_pack_${suffix}`);
  const tmpIdx = join(packDir, `tmp_idx_${suffix}`);
  try {
    const { rows, checksum } = await writePackFile(tmpPack, sources, count, level);
    const idxHandle = await openPrivate(tmpIdx, 'wx');
    try {
      await idxHandle.writeFile(writePackIndex(rows, checksum));
      await idxHandle.sync();
    } finally {
      await idxHandle.close();
    }
    const name = `pack-${checksum.toString('hex')}`;
    const packPath = join(packDir, `${name}.pack`);
    const idxPath = join(packDir, `${name}.idx`);
    await rename(tmpPack, packPath);
    await rename(tmpIdx, idxPath);
    await fsyncDirectory(packDir);
    return { name, packPath, idxPath, objectCount: rows.length };
  } catch (error) {
    await rm(tmpPack, { force: true });
    await rm(tmpIdx, { force: true });
    throw error;
  }
}

async function writePackFile(
  path: string,
  sources: Iterable<PackSource> | AsyncIterable<PackSource>,
  count: number,
  level: number,
): Promise<{ rows: PackIndexRow[]; checksum: Buffer }> {
  const handle = await openPrivate(path, 'wx');
  try {
    const hash = createHash('sha1');
    const rows: PackIndexRow[] = [];
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let position = 0;
    const drain = async (): Promise<void> => {
      if (batch.length === 0) return;
      const chunk = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchBytes);
      batch = [];
      batchBytes = 0;
      await handle.write(chunk, 0, chunk.byteLength, null);
    };
    const emit = async (buf: Buffer): Promise<void> => {
      hash.update(buf);
      batch.push(buf);
      batchBytes += buf.byteLength;
      position += buf.byteLength;
      if (batchBytes >= WRITE_BATCH_BYTES) await drain();
    };
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(count, 8);
    await emit(header);
    for await (const source of sources) {
      const entry = await encodeEntry(source, level);
      rows.push({ oid: source.oid, offset: position, crc: crc32(entry) });
      await emit(entry);
    }
    if (rows.length !== count) throw new Error(`pack writer expected ${count} objects, got ${rows.length}`);
    const checksum = hash.digest();
    batch.push(checksum);
    batchBytes += checksum.byteLength;
    await drain();
    await handle.sync();
    return { rows, checksum };
  } finally {
    await handle.close();
  }
}
