/**
 * Myers' O(ND) diff as git's xdiff runs it (xdiffi.c / xprepare.c): trim the
 * common ends, set aside lines with no match on the other side (and runs of
 * very frequent lines), then bisect along the middle snake. Past a cost bound
 * the bisection takes the furthest-reaching diagonal instead of the optimal
 * one, which keeps the worst case near O(N·sqrt(N)) while every result is
 * still a correct edit script. Following git step by step makes our hunks the
 * ones `git diff` prints.
 */
import type { DiffContext } from './diff-context.js';

const MAX_EQ_LIMIT = 1024;
const SIMILAR_SCAN_WINDOW = 100;
const KEEP_DISCARD_RUN = 4;
const SNAKE_COUNT = 20;
const HEURISTIC_MIN_COST = 256;
const MAX_COST_MIN = 256;
const K_HEURISTIC = 4;
const LINE_MAX = 0x7fffffff;

/** git's xdl_bogosqrt: a power of two near sqrt(n). */
function roughSqrt(n: number): number {
  let i = 1;
  for (; n > 0; n = Math.floor(n / 4)) i *= 2;
  return i;
}

/**
 * Diffs old lines `[a0, a1)` against new lines `[b0, b1)` and marks the
 * changed ones in the context. `minimal` disables the cost heuristics.
 */
export function myersDiff(ctx: DiffContext, a0: number, a1: number, b0: number, b1: number, minimal = false): void {
  const { a, b, countA, countB } = ctx;
  const n1 = a1 - a0;
  const n2 = b1 - b0;
  for (let i = a0; i < a1; i++) countA[a[i] as number]!++;
  for (let i = b0; i < b1; i++) countB[b[i] as number]!++;

  // Trim the common prefix and suffix.
  const lim = Math.min(n1, n2);
  let pre = 0;
  while (pre < lim && a[a0 + pre] === b[b0 + pre]) pre++;
  let suf = 0;
  while (suf < lim - pre && a[a1 - 1 - suf] === b[b1 - 1 - suf]) suf++;
  const s1 = a0 + pre;
  const e1 = a1 - suf;
  const s2 = b0 + pre;
  const e2 = b1 - suf;

  const kept1 = keepMatchable(a, s1, e1, countB, Math.min(roughSqrt(n1), MAX_EQ_LIMIT), ctx.changedA);
  const kept2 = keepMatchable(b, s2, e2, countA, Math.min(roughSqrt(n2), MAX_EQ_LIMIT), ctx.changedB);

  for (let i = a0; i < a1; i++) countA[a[i] as number] = 0;
  for (let i = b0; i < b1; i++) countB[b[i] as number] = 0;

  compareRecords(kept1, kept2, ctx, minimal);
}

/** The lines of one side that take part in the search, with their original positions. */
interface KeptLines {
  ids: Int32Array;
  index: Int32Array;
}

/**
 * xdl_cleanup_records: lines absent from the other side are changed for
 * sure; lines that occur very often on the other side are set aside when they
 * sit inside runs of such lines. Set-aside lines are marked changed directly.
 */
function keepMatchable(lines: Int32Array, start: number, end: number, otherCount: Int32Array, eqLimit: number, changed: Uint8Array): KeptLines {
  const n = end - start;
  const kind = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const matches = otherCount[lines[start + i] as number] as number;
    kind[i] = matches === 0 ? 0 : matches >= eqLimit ? 2 : 1;
  }
  const ids = new Int32Array(n);
  const index = new Int32Array(n);
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const k = kind[i];
    if (k === 1 || (k === 2 && !isDiscardableMultiMatch(kind, i, 0, n - 1))) {
      ids[kept] = lines[start + i] as number;
      index[kept] = start + i;
      kept++;
    } else {
      changed[start + i + 1] = 1;
    }
  }
  return { ids: ids.subarray(0, kept), index: index.subarray(0, kept) };
}

/** xdl_clean_mmatch: a frequent line is discarded when it sits in a run dominated by unmatched lines. */
function isDiscardableMultiMatch(kind: Uint8Array, i: number, s: number, e: number): boolean {
  if (i - s > SIMILAR_SCAN_WINDOW) s = i - SIMILAR_SCAN_WINDOW;
  if (e - i > SIMILAR_SCAN_WINDOW) e = i + SIMILAR_SCAN_WINDOW;
  let noMatchBefore = 0;
  let multiBefore = 1;
  for (let r = 1; i - r >= s; r++) {
    const k = kind[i - r];
    if (k === 0) noMatchBefore++;
    else if (k === 2) multiBefore++;
    else break;
  }
  if (noMatchBefore === 0) return false;
  let noMatchAfter = 0;
  let multiAfter = 1;
  for (let r = 1; i + r <= e; r++) {
    const k = kind[i + r];
    if (k === 0) noMatchAfter++;
    else if (k === 2) multiAfter++;
    else break;
  }
  if (noMatchAfter === 0) return false;
  const noMatch = noMatchAfter + noMatchBefore;
  const multi = multiAfter + multiBefore;
  return multi * KEEP_DISCARD_RUN < multi + noMatch;
}

interface Split {
  i1: number;
  i2: number;
  minLow: boolean;
  minHigh: boolean;
}

/** xdl_recs_cmp with an explicit stack instead of recursion (deep splits would overflow the JS stack). */
function compareRecords(k1: KeptLines, k2: KeptLines, ctx: DiffContext, minimal: boolean): void {
  const ha1 = k1.ids;
  const ha2 = k2.ids;
  const n1 = ha1.length;
  const n2 = ha2.length;
  const diagonals = n1 + n2 + 3;
  const kv = new Int32Array(2 * diagonals + 2);
  const fwd = n2 + 1;
  const bwd = diagonals + n2 + 1;
  const maxCost = Math.max(roughSqrt(diagonals), MAX_COST_MIN);
  const split: Split = { i1: 0, i2: 0, minLow: false, minHigh: false };

  const stack: number[] = [0, n1, 0, n2, minimal ? 1 : 0];
  while (stack.length > 0) {
    const needMin = stack.pop() === 1;
    let lim2 = stack.pop() as number;
    let off2 = stack.pop() as number;
    let lim1 = stack.pop() as number;
    let off1 = stack.pop() as number;
    while (off1 < lim1 && off2 < lim2 && ha1[off1] === ha2[off2]) {
      off1++;
      off2++;
    }
    while (off1 < lim1 && off2 < lim2 && ha1[lim1 - 1] === ha2[lim2 - 1]) {
      lim1--;
      lim2--;
    }
    if (off1 === lim1) {
      for (; off2 < lim2; off2++) ctx.changedB[(k2.index[off2] as number) + 1] = 1;
    } else if (off2 === lim2) {
      for (; off1 < lim1; off1++) ctx.changedA[(k1.index[off1] as number) + 1] = 1;
    } else {
      findSplit(ha1, off1, lim1, ha2, off2, lim2, kv, fwd, bwd, needMin, maxCost, split);
      const { i1, i2, minLow, minHigh } = split;
      stack.push(i1, lim1, i2, lim2, minHigh ? 1 : 0);
      stack.push(off1, i1, off2, i2, minLow ? 1 : 0);
    }
  }
}

/** xdl_split: finds where to bisect the box, exactly or (past the cost bound) heuristically. */
function findSplit(
  ha1: Int32Array,
  off1: number,
  lim1: number,
  ha2: Int32Array,
  off2: number,
  lim2: number,
  kv: Int32Array,
  F: number,
  B: number,
  needMin: boolean,
  maxCost: number,
  spl: Split,
): void {
  const dmin = off1 - lim2;
  const dmax = lim1 - off2;
  const fmid = off1 - off2;
  const bmid = lim1 - lim2;
  const odd = ((fmid - bmid) & 1) !== 0;
  let fmin = fmid;
  let fmax = fmid;
  let bmin = bmid;
  let bmax = bmid;
  kv[F + fmid] = off1;
  kv[B + bmid] = lim1;

  for (let ec = 1; ; ec++) {
    let gotSnake = false;

    if (fmin > dmin) kv[F + --fmin - 1] = -1;
    else ++fmin;
    if (fmax < dmax) kv[F + ++fmax + 1] = -1;
    else --fmax;

    for (let d = fmax; d >= fmin; d -= 2) {
      let i1: number;
      const lo = kv[F + d - 1] as number;
      const hi = kv[F + d + 1] as number;
      if (lo >= hi) i1 = lo + 1;
      else i1 = hi;
      const prev1 = i1;
      let i2 = i1 - d;
      while (i1 < lim1 && i2 < lim2 && ha1[i1] === ha2[i2]) {
        i1++;
        i2++;
      }
      if (i1 - prev1 > SNAKE_COUNT) gotSnake = true;
      kv[F + d] = i1;
      if (odd && bmin <= d && d <= bmax && (kv[B + d] as number) <= i1) {
        spl.i1 = i1;
        spl.i2 = i2;
        spl.minLow = spl.minHigh = true;
        return;
      }
    }

    if (bmin > dmin) kv[B + --bmin - 1] = LINE_MAX;
    else ++bmin;
    if (bmax < dmax) kv[B + ++bmax + 1] = LINE_MAX;
    else --bmax;

    for (let d = bmax; d >= bmin; d -= 2) {
      let i1: number;
      const lo = kv[B + d - 1] as number;
      const hi = kv[B + d + 1] as number;
      if (lo < hi) i1 = lo;
      else i1 = hi - 1;
      const prev1 = i1;
      let i2 = i1 - d;
      while (i1 > off1 && i2 > off2 && ha1[i1 - 1] === ha2[i2 - 1]) {
        i1--;
        i2--;
      }
      if (prev1 - i1 > SNAKE_COUNT) gotSnake = true;
      kv[B + d] = i1;
      if (!odd && fmin <= d && d <= fmax && i1 <= (kv[F + d] as number)) {
        spl.i1 = i1;
        spl.i2 = i2;
        spl.minLow = spl.minHigh = true;
        return;
      }
    }

    if (needMin) continue;

    // A long enough snake far from the corner is "interesting": split there.
    if (gotSnake && ec > HEURISTIC_MIN_COST) {
      let best = 0;
      for (let d = fmax; d >= fmin; d -= 2) {
        const dd = d > fmid ? d - fmid : fmid - d;
        const i1 = kv[F + d] as number;
        const i2 = i1 - d;
        const v = i1 - off1 + (i2 - off2) - dd;
        if (v > K_HEURISTIC * ec && v > best && off1 + SNAKE_COUNT <= i1 && i1 < lim1 && off2 + SNAKE_COUNT <= i2 && i2 < lim2) {
          for (let k = 1; ha1[i1 - k] === ha2[i2 - k]; k++) {
            if (k === SNAKE_COUNT) {
              best = v;
              spl.i1 = i1;
              spl.i2 = i2;
              break;
            }
          }
        }
      }
      if (best > 0) {
        spl.minLow = true;
        spl.minHigh = false;
        return;
      }
      best = 0;
      for (let d = bmax; d >= bmin; d -= 2) {
        const dd = d > bmid ? d - bmid : bmid - d;
        const i1 = kv[B + d] as number;
        const i2 = i1 - d;
        const v = lim1 - i1 + (lim2 - i2) - dd;
        if (v > K_HEURISTIC * ec && v > best && off1 < i1 && i1 <= lim1 - SNAKE_COUNT && off2 < i2 && i2 <= lim2 - SNAKE_COUNT) {
          for (let k = 0; ha1[i1 + k] === ha2[i2 + k]; k++) {
            if (k === SNAKE_COUNT - 1) {
              best = v;
              spl.i1 = i1;
              spl.i2 = i2;
              break;
            }
          }
        }
      }
      if (best > 0) {
        spl.minLow = false;
        spl.minHigh = true;
        return;
      }
    }

    // Past the cost bound: take the furthest-reaching path found so far.
    if (ec >= maxCost) {
      let fbest = -1;
      let fbest1 = -1;
      for (let d = fmax; d >= fmin; d -= 2) {
        let i1 = Math.min(kv[F + d] as number, lim1);
        let i2 = i1 - d;
        if (lim2 < i2) {
          i1 = lim2 + d;
          i2 = lim2;
        }
        if (fbest < i1 + i2) {
          fbest = i1 + i2;
          fbest1 = i1;
        }
      }
      let bbest = LINE_MAX;
      let bbest1 = LINE_MAX;
      for (let d = bmax; d >= bmin; d -= 2) {
        let i1 = Math.max(off1, kv[B + d] as number);
        let i2 = i1 - d;
        if (i2 < off2) {
          i1 = off2 + d;
          i2 = off2;
        }
        if (i1 + i2 < bbest) {
          bbest = i1 + i2;
          bbest1 = i1;
        }
      }
      if (lim1 + lim2 - bbest < fbest - (off1 + off2)) {
        spl.i1 = fbest1;
        spl.i2 = fbest - fbest1;
        spl.minLow = true;
        spl.minHigh = false;
      } else {
        spl.i1 = bbest1;
        spl.i2 = bbest - bbest1;
        spl.minLow = false;
        spl.minHigh = true;
      }
      return;
    }
  }
}
