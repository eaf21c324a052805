/**
 * A file's lines as byte ranges of its content, so large files are split,
 * hashed and compared without building a string per line. Only the lines a
 * hunk prints are ever decoded.
 */

import type { LineEncoding } from '../protocol/extensions/file-diff.js';
export type { LineEncoding };

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** ISO-8859-1: byte n becomes U+00nn (TextDecoder's 'latin1' is windows-1252, which is not reversible). */
function decodeLatin1(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return out;
}

/** The lines of one file; line `i` is `bytes[starts[i], starts[i + 1])` including its `\n`. */
export class ByteLines {
  /** Number of lines; a final line without `\n` counts, an empty file has none. */
  readonly length: number;
  /** Start offset of every line, plus the content length at the end. */
  readonly starts: Int32Array;
  /** Word-wise access to the content, for hashing and comparing lines. */
  readonly view: DataView;

  constructor(
    /** The file content. */
    readonly bytes: Uint8Array,
    /** How to decode lines for display. */
    readonly encoding: LineEncoding = 'utf-8',
  ) {
    let count = 0;
    for (let p = bytes.indexOf(10); p >= 0; p = bytes.indexOf(10, p + 1)) count++;
    const total = bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? count + 1 : count;
    const starts = new Int32Array(total + 1);
    let i = 1;
    for (let p = bytes.indexOf(10); p >= 0; p = bytes.indexOf(10, p + 1)) starts[i++] = p + 1;
    starts[total] = bytes.length;
    this.length = total;
    this.starts = starts;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Whether line `i` ends with a newline (only the last line may not). */
  hasNewline(i: number): boolean {
    return this.bytes[(this.starts[i + 1] as number) - 1] === 10;
  }

  /** Indentation width of line `i` as git's indent heuristic measures it, or -1 when blank. */
  indent(i: number): number {
    const { bytes } = this;
    const end = this.starts[i + 1] as number;
    let ret = 0;
    for (let p = this.starts[i] as number; p < end; p++) {
      const c = bytes[p];
      if (c === 0x20) ret += 1;
      else if (c === 0x09) ret += 8 - (ret % 8);
      else if (c !== 0x0a && c !== 0x0d) return ret;
      if (ret >= 200) return 200;
    }
    return -1;
  }

  /** Decoded texts of lines `[from, to)`, each with its terminator. */
  texts(from: number, to: number): string[] {
    if (from >= to) return [];
    const chunk = this.bytes.subarray(this.starts[from], this.starts[to]);
    const text = this.encoding === 'utf-8' ? utf8.decode(chunk) : decodeLatin1(chunk);
    const out: string[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      out.push(text.slice(start, nl + 1));
      start = nl + 1;
    }
    if (start < text.length) out.push(text.slice(start));
    return out;
  }
}

/** Hashes and compares byte lines of two files into shared integer ids. */
export function internByteLines(a: ByteLines, b: ByteLines): { a: Int32Array; b: Int32Array; idCount: number } {
  const total = a.length + b.length;
  let size = 16;
  while (size < total * 2) size *= 2;
  const mask = size - 1;
  // Slot k holds [id, hash] at 2k, 2k+1: one cache line per probe.
  const slots = new Int32Array(2 * size).fill(-1);
  // The first line seen with each id, as (side, line): side 0 is `a`, 1 is `b`.
  const repSide = new Uint8Array(total);
  const repLine = new Int32Array(total);
  let ids = 0;

  const intern = (file: ByteLines, side: number, from: number, to: number): Int32Array => {
    const out = new Int32Array(file.length);
    const { bytes, starts } = file;
    const view = file.view;
    for (let i = from; i < to; i++) {
      const s = starts[i] as number;
      const e = starts[i + 1] as number;
      let h = 0x811c9dc5 ^ (e - s);
      let p = s;
      // Four bytes per step; the mix only has to spread bits, equality is checked byte by byte.
      for (; p + 4 <= e; p += 4) {
        h = Math.imul(h ^ view.getInt32(p, true), 0x01000193);
        h ^= h >>> 15;
      }
      for (; p < e; p++) h = Math.imul(h ^ (bytes[p] as number), 0x01000193);
      h ^= h >>> 13;
      let slot = h & mask;
      for (;;) {
        const id = slots[2 * slot] as number;
        if (id < 0) {
          slots[2 * slot] = ids;
          slots[2 * slot + 1] = h;
          repSide[ids] = side;
          repLine[ids] = i;
          out[i] = ids++;
          break;
        }
        if (slots[2 * slot + 1] === h && sameBytes(repSide[id] === 0 ? a : b, repLine[id] as number, file, s, e)) {
          out[i] = id;
          break;
        }
        slot = (slot + 1) & mask;
      }
    }
    return out;
  };
  const ia = intern(a, 0, 0, a.length);
  // Lines of the common prefix and suffix are byte-identical to the old side's: copy their ids instead of hashing them.
  const { prefix, suffix } = commonLines(a, b);
  const ib = intern(b, 1, prefix, b.length - suffix);
  ib.set(ia.subarray(0, prefix), 0);
  ib.set(ia.subarray(a.length - suffix), b.length - suffix);
  return { a: ia, b: ib, idCount: ids };
}

/** Number of whole lines equal at the start and at the end of both files (not overlapping). */
function commonLines(a: ByteLines, b: ByteLines): { prefix: number; suffix: number } {
  const x = a.bytes;
  const y = b.bytes;
  const lim = Math.min(x.length, y.length);
  let d = 0;
  while (d + 4 <= lim && a.view.getInt32(d) === b.view.getInt32(d)) d += 4;
  while (d < lim && x[d] === y[d]) d++;
  const maxLines = Math.min(a.length, b.length);
  let prefix = 0;
  while (prefix < maxLines && (a.starts[prefix + 1] as number) <= d && a.starts[prefix + 1] === b.starts[prefix + 1]) prefix++;
  let e = 0;
  const lim2 = lim - (a.starts[prefix] as number);
  while (e + 4 <= lim2 && a.view.getInt32(x.length - e - 4) === b.view.getInt32(y.length - e - 4)) e += 4;
  while (e < lim2 && x[x.length - 1 - e] === y[y.length - 1 - e]) e++;
  const shift = y.length - x.length;
  let suffix = 0;
  while (suffix < maxLines - prefix) {
    const i = a.length - 1 - suffix;
    const start = a.starts[i] as number;
    if (x.length - start > e || (b.starts[b.length - 1 - suffix] as number) !== start + shift) break;
    suffix++;
  }
  return { prefix, suffix };
}

function sameBytes(file: ByteLines, line: number, other: ByteLines, s: number, e: number): boolean {
  const fs = file.starts[line] as number;
  const n = e - s;
  if ((file.starts[line + 1] as number) - fs !== n) return false;
  const fb = file.bytes;
  const bytes = other.bytes;
  const fv = file.view;
  const bv = other.view;
  let k = 0;
  for (; k + 4 <= n; k += 4) if (fv.getInt32(fs + k) !== bv.getInt32(s + k)) return false;
  for (; k < n; k++) if (fb[fs + k] !== bytes[s + k]) return false;
  return true;
}
