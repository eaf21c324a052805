/**
 * Content similarity as git scores renames (diffcore-delta.c): each side is
 * cut into spans that end at a newline or after 64 bytes, spans are hashed,
 * and the bytes of spans found on both sides count as shared. The score is
 * shared bytes over the larger size, so `similarity(a, b) >= 0.5` is git's
 * default rename threshold.
 */
import { isBinary } from './binary.js';

/** git's default minimum score for a rename (`-M50%`). */
export const RENAME_THRESHOLD = 0.5;

const HASH_BASE = 107927;
const MAX_SPAN = 64;

/** Bytes per span hash; git ignores a trailing span that has neither a newline nor 64 bytes. */
function spanBytes(data: Uint8Array): Map<number, number> {
  const counts = new Map<number, number>();
  const text = !isBinary(data);
  let n = 0;
  let accum1 = 0;
  let accum2 = 0;
  const size = data.length;
  for (let i = 0; i < size; i++) {
    const c = data[i] as number;
    // A CR before LF does not count in text, so CRLF and LF versions match.
    if (text && c === 0x0d && i + 1 < size && data[i + 1] === 0x0a) continue;
    const old1 = accum1;
    accum1 = ((accum1 << 7) ^ (accum2 >>> 25)) >>> 0;
    accum2 = ((accum2 << 7) ^ (old1 >>> 25)) >>> 0;
    accum1 = (accum1 + c) >>> 0;
    if (++n < MAX_SPAN && c !== 0x0a) continue;
    const hash = ((accum1 + Math.imul(accum2, 0x61)) >>> 0) % HASH_BASE;
    counts.set(hash, (counts.get(hash) ?? 0) + n);
    n = 0;
    accum1 = accum2 = 0;
  }
  return counts;
}

/** What similarity compares of one content, computed once per blob when many pairs are scored. */
export interface SpanSignature {
  /** Bytes per span hash. */
  readonly counts: Map<number, number>;
  /** Content size in bytes. */
  readonly size: number;
  /** The content itself, for the identical-content check. */
  readonly data: Uint8Array;
}

/** The span signature of a content (see {@link signatureSimilarity}). */
export function spanSignature(data: Uint8Array): SpanSignature {
  return { counts: spanBytes(data), size: data.length, data };
}

/** Similarity of two signatures: shared span bytes over the larger size, 1 only for identical content. */
export function signatureSimilarity(a: SpanSignature, b: SpanSignature): number {
  if (sameContent(a.data, b.data)) return 1;
  const maxSize = Math.max(a.size, b.size);
  if (Math.min(a.size, b.size) === 0) return 0;
  let shared = 0;
  for (const [hash, count] of a.counts) {
    const other = b.counts.get(hash);
    if (other !== undefined) shared += Math.min(count, other);
  }
  // Capped below 1: only identical content is a perfect match, as in git.
  return Math.min(shared / maxSize, 0.99999);
}

/** Similarity in [0, 1] of two file contents, approximating git's rename score (1 only for identical content). */
export function similarity(a: Uint8Array | string, b: Uint8Array | string): number {
  const x = typeof a === 'string' ? new TextEncoder().encode(a) : a;
  const y = typeof b === 'string' ? new TextEncoder().encode(b) : b;
  if (!(x instanceof Uint8Array) || !(y instanceof Uint8Array)) throw new TypeError('similarity: arguments must be strings or Uint8Arrays');
  if (sameContent(x, y)) return 1;
  return signatureSimilarity(spanSignature(x), spanSignature(y));
}

function sameContent(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
