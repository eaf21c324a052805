/**
 * Makes a delta in git's format (what `applyDelta` in `delta.ts` reads):
 * the base and result sizes as varints, then copy-from-base and insert
 * instructions. The idea is git's `diff-delta.c`: the base is indexed by a
 * hash of each 16-byte block; the target is scanned with a rolling hash of
 * the same window, a hit is checked byte by byte and extended both ways, and
 * the longest match becomes a copy. Bytes no match covers are inserted.
 */

/** Bytes hashed per block; a match shorter than this is never looked for. */
const WINDOW = 16;
/** Candidates checked per hash bucket (the most recent blocks of the base win, as in git). */
const MAX_CANDIDATES = 16;
/** Largest copy one instruction may carry: git splits its copies at 64 KiB. */
const MAX_COPY = 0x10000;
/** Largest insert one instruction may carry. */
const MAX_INSERT = 0x7f;
/** Multiplier of the rolling hash. */
const PRIME = 0x01000193;

/** PRIME^(WINDOW-1) mod 2^32: the weight of the byte leaving the window. */
const OUT_WEIGHT = (() => {
  let w = 1;
  for (let i = 0; i < WINDOW - 1; i++) w = Math.imul(w, PRIME);
  return w;
})();

function hashAt(bytes: Uint8Array, at: number): number {
  let h = 0;
  for (let i = 0; i < WINDOW; i++) h = (Math.imul(h, PRIME) + bytes[at + i]!) | 0;
  return h;
}

/** A growable byte buffer for the instructions. */
class Output {
  bytes: Uint8Array;
  length = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(64, capacity));
  }
  reserve(n: number): void {
    if (this.length + n <= this.bytes.byteLength) return;
    const next = new Uint8Array(Math.max(this.bytes.byteLength * 2, this.length + n));
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
  }
  push(byte: number): void {
    this.reserve(1);
    this.bytes[this.length++] = byte;
  }
  varint(value: number): void {
    let v = value;
    for (;;) {
      const low = v % 128;
      v = Math.floor(v / 128);
      if (v === 0) {
        this.push(low);
        return;
      }
      this.push(low | 0x80);
    }
  }
}

/** The base's block index: hash bucket → block offsets, newest block first. */
interface BaseIndex {
  mask: number;
  heads: Int32Array;
  next: Int32Array;
}

function indexBase(base: Uint8Array): BaseIndex | undefined {
  const blocks = Math.floor(base.byteLength / WINDOW);
  if (blocks === 0) return undefined;
  let size = 1;
  while (size < blocks) size <<= 1;
  const heads = new Int32Array(size).fill(-1);
  const next = new Int32Array(blocks);
  const mask = size - 1;
  // Later blocks are pushed last and so are tried first, as git prefers them.
  for (let b = 0; b < blocks; b++) {
    const bucket = hashAt(base, b * WINDOW) & mask;
    next[b] = heads[bucket]!;
    heads[bucket] = b;
  }
  return { mask, heads, next };
}

/**
 * A delta that turns `base` into `target`, or undefined when it would not be
 * shorter than `maxSize` bytes (the caller then stores the target whole).
 */
export function createDelta(base: Uint8Array, target: Uint8Array, maxSize = Number.POSITIVE_INFINITY): Uint8Array | undefined {
  const out = new Output(Math.min(target.byteLength + 32, 4096));
  out.varint(base.byteLength);
  out.varint(target.byteLength);
  const index = indexBase(base);
  let insertFrom = 0;
  let j = 0;
  const limit = target.byteLength - WINDOW;

  const flushInsert = (end: number): void => {
    let at = insertFrom;
    while (at < end) {
      const n = Math.min(MAX_INSERT, end - at);
      out.reserve(n + 1);
      out.bytes[out.length++] = n;
      out.bytes.set(target.subarray(at, at + n), out.length);
      out.length += n;
      at += n;
    }
  };
  const emitCopy = (offset: number, size: number): void => {
    let from = offset;
    let left = size;
    while (left > 0) {
      const n = Math.min(MAX_COPY, left);
      out.reserve(8);
      const opAt = out.length++;
      let op = 0x80;
      for (let k = 0; k < 4; k++) {
        const byte = Math.floor(from / 2 ** (8 * k)) & 0xff;
        if (byte !== 0) {
          op |= 1 << k;
          out.bytes[out.length++] = byte;
        }
      }
      // A size of 0x10000 is written as no size bytes at all.
      if (n !== MAX_COPY) {
        for (let k = 0; k < 3; k++) {
          const byte = (n >> (8 * k)) & 0xff;
          if (byte !== 0) {
            op |= 0x10 << k;
            out.bytes[out.length++] = byte;
          }
        }
      }
      out.bytes[opAt] = op;
      from += n;
      left -= n;
    }
  };

  if (index && limit >= 0) {
    let h = hashAt(target, 0);
    while (j <= limit) {
      let bestLength = 0;
      let bestOffset = 0;
      let candidates = 0;
      for (let b = index.heads[h & index.mask]!; b >= 0 && candidates < MAX_CANDIDATES; b = index.next[b]!, candidates++) {
        const offset = b * WINDOW;
        let n = 0;
        const most = Math.min(base.byteLength - offset, target.byteLength - j);
        while (n < most && base[offset + n] === target[j + n]) n++;
        if (n > bestLength) {
          bestLength = n;
          bestOffset = offset;
        }
      }
      if (bestLength >= WINDOW) {
        // Extend backwards over bytes that were waiting to be inserted.
        let back = 0;
        while (back < j - insertFrom && back < bestOffset && base[bestOffset - back - 1] === target[j - back - 1]) back++;
        flushInsert(j - back);
        emitCopy(bestOffset - back, bestLength + back);
        j += bestLength;
        insertFrom = j;
        if (out.length >= maxSize) return undefined;
        if (j <= limit) h = hashAt(target, j);
        continue;
      }
      if (j === limit) {
        j++;
        break;
      }
      h = (Math.imul(h - Math.imul(target[j]!, OUT_WEIGHT), PRIME) + target[j + WINDOW]!) | 0;
      j++;
      if (j - insertFrom > 4096 && out.length + (j - insertFrom) >= maxSize) return undefined;
    }
  }
  flushInsert(target.byteLength);
  insertFrom = target.byteLength;
  if (out.length >= maxSize) return undefined;
  return out.bytes.subarray(0, out.length);
}
