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

/**
 * Offsets where each line starts, plus the content length at the end. One
 * pass, four bytes at a time where the content is word-aligned: a word with
 * no `\n` byte is skipped with one test (the zero-byte test on word ^ 0x0a0a0a0a
 * has no false negatives; a hit checks its four bytes).
 */
function lineStarts(bytes: Uint8Array): Int32Array {
  const len = bytes.length;
  let starts = new Int32Array((len >> 5) + 16);
  let n = 1;
  const grow = (): void => {
    const next = new Int32Array(starts.length * 2);
    next.set(starts);
    starts = next;
  };
  let p = 0;
  const aligned = (4 - (bytes.byteOffset & 3)) & 3;
  const head = Math.min(aligned, len);
  for (; p < head; p++) {
    if (bytes[p] === 10) starts[n++] = p + 1;
  }
  const words = p === aligned ? new Int32Array(bytes.buffer, bytes.byteOffset + p, (len - p) >> 2) : new Int32Array(0);
  const count = words.length;
  for (let w = 0; w < count; w++) {
    const x = (words[w] as number) ^ 0x0a0a0a0a;
    if (((x - 0x01010101) & ~x & 0x80808080) !== 0) {
      if (n + 4 >= starts.length) grow();
      const q = p + 4 * w;
      if (bytes[q] === 10) starts[n++] = q + 1;
      if (bytes[q + 1] === 10) starts[n++] = q + 2;
      if (bytes[q + 2] === 10) starts[n++] = q + 3;
      if (bytes[q + 3] === 10) starts[n++] = q + 4;
    }
  }
  for (p += 4 * count; p < len; p++) {
    if (bytes[p] === 10) {
      if (n + 1 >= starts.length) grow();
      starts[n++] = p + 1;
    }
  }
  // A last line without a newline still counts.
  if (len > 0 && bytes[len - 1] !== 10) {
    if (n + 1 >= starts.length) grow();
    starts[n++] = len;
  }
  return starts.subarray(0, n);
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
    const starts = lineStarts(bytes);
    this.length = starts.length - 1;
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
  const table = new LineTable(a, b);
  const ia = new Int32Array(a.length);
  table.intern(a, 0, 0, a.length, ia);
  // Lines of the common prefix and suffix are byte-identical to the old side's: copy their ids instead of hashing them.
  const { prefix, suffix } = commonLines(a, b);
  const ib = new Int32Array(b.length);
  ib.set(ia.subarray(0, prefix), 0);
  ib.set(ia.subarray(a.length - suffix), b.length - suffix);
  table.internFollowing(b, prefix, b.length - suffix, ia, ib);
  return { a: ia, b: ib, idCount: table.ids };
}

/**
 * The open-address hash table that gives each distinct line its id. A slot
 * holds [id, hash]; the first line seen with an id (its bytes in `a` or `b`)
 * is what later lines are compared with, byte for byte, so a hash collision
 * never merges two different lines.
 */
class LineTable {
  readonly slots: Int32Array;
  readonly mask: number;
  /** The first line seen with each id: its side (0 for `a`, 1 for `b`), start and end offsets. */
  readonly repSide: Uint8Array;
  readonly repStart: Int32Array;
  readonly repEnd: Int32Array;
  /** For ids first seen in `a`: that line's index there. */
  readonly repLine: Int32Array;
  ids = 0;

  constructor(
    readonly a: ByteLines,
    readonly b: ByteLines,
  ) {
    const total = a.length + b.length;
    let size = 16;
    while (size < total * 2) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(2 * size).fill(-1);
    this.repSide = new Uint8Array(total);
    this.repStart = new Int32Array(total);
    this.repEnd = new Int32Array(total);
    this.repLine = new Int32Array(total);
  }

  /** Ids of `file`'s lines `[from, to)` into `out`. */
  intern(file: ByteLines, side: number, from: number, to: number, out: Int32Array): void {
    const { starts } = file;
    for (let i = from; i < to; i++) out[i] = this.idOf(file, side, starts[i] as number, starts[i + 1] as number, i);
  }

  /**
   * Ids of `b`'s lines `[from, to)` into `ib`, where most lines are `a`'s in
   * order with a few inserted or removed: each line is first compared with
   * the line of `a` on the current diagonal (a sequential read of both
   * files) and takes its id when equal; only other lines are hashed, and a
   * hashed line found in `a` moves the diagonal to its first occurrence there.
   * The ids are the same as hashing every line: equality is always byte for byte.
   */
  internFollowing(b: ByteLines, from: number, to: number, ia: Int32Array, ib: Int32Array): void {
    const a = this.a;
    const na = a.length;
    const aStarts = a.starts;
    const bStarts = b.starts;
    let shift = 0;
    for (let j = from; j < to; j++) {
      const s = bStarts[j] as number;
      const e = bStarts[j + 1] as number;
      const i = j + shift;
      if (i >= 0 && i < na) {
        const as = aStarts[i] as number;
        if ((aStarts[i + 1] as number) - as === e - s && sameRange(a, as, b, s, e - s)) {
          ib[j] = ia[i] as number;
          continue;
        }
      }
      const id = this.idOf(b, 1, s, e, -1);
      ib[j] = id;
      if (this.repSide[id] === 0) shift = (this.repLine[id] as number) - j;
    }
  }

  /** The id of the line `file.bytes[s, e)`, a new one when no line seen so far is equal. */
  idOf(file: ByteLines, side: number, s: number, e: number, line: number): number {
    const { bytes, view } = file;
    let h = 0x811c9dc5 ^ (e - s);
    let p = s;
    // Four bytes per step; the mix only has to spread bits, equality is checked byte by byte.
    for (; p + 4 <= e; p += 4) {
      h = Math.imul(h ^ view.getInt32(p, true), 0x01000193);
      h ^= h >>> 15;
    }
    for (; p < e; p++) h = Math.imul(h ^ (bytes[p] as number), 0x01000193);
    h ^= h >>> 13;
    const slots = this.slots;
    const mask = this.mask;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const id = slots[2 * slot] as number;
      if (id < 0) {
        const fresh = this.ids++;
        slots[2 * slot] = fresh;
        slots[2 * slot + 1] = h;
        this.repSide[fresh] = side;
        this.repStart[fresh] = s;
        this.repEnd[fresh] = e;
        this.repLine[fresh] = line;
        return fresh;
      }
      if (slots[2 * slot + 1] === h) {
        const rs = this.repStart[id] as number;
        if ((this.repEnd[id] as number) - rs === e - s && sameRange(this.repSide[id] === 0 ? this.a : this.b, rs, file, s, e - s)) return id;
      }
    }
  }
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

/** Whether `n` bytes of `x` from `xs` equal those of `y` from `ys`. */
function sameRange(x: ByteLines, xs: number, y: ByteLines, ys: number, n: number): boolean {
  const xv = x.view;
  const yv = y.view;
  let k = 0;
  for (; k + 4 <= n; k += 4) if (xv.getInt32(xs + k, true) !== yv.getInt32(ys + k, true)) return false;
  const xb = x.bytes;
  const yb = y.bytes;
  for (; k < n; k++) if (xb[xs + k] !== yb[ys + k]) return false;
  return true;
}
