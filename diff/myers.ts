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
import { myersRounds } from './myers-wasm.js';

const MAX_EQ_LIMIT = 1024;
const SIMILAR_SCAN_WINDOW = 100;
const KEEP_DISCARD_RUN = 4;
const SNAKE_COUNT = 20;
const HEURISTIC_MIN_COST = 256;
const MAX_COST_MIN = 256;
const K_HEURISTIC = 4;
const LINE_MAX = 0x7fffffff;
/** Searches larger than this (in array cells; 64 MiB) use the JavaScript rounds, so the WebAssembly memory, which never shrinks, stays bounded. */
const MAX_WASM_INTS = 16 << 20;

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

/**
 * The state of one Myers search. Both sides' kept lines and both path
 * vectors live in one typed array, `m`, so the hot loops touch a single
 * array (V8 re-checks every typed array a loop reads on each iteration):
 * side 1's line `i` is `m[i]`, side 2's line `j` is `m[b2 + j]`, the
 * furthest forward path on diagonal `d` is `m[F + d]` and the backward one
 * `m[B + d]`. A split found by `findSplit` is left in `i1`, `i2`, `minLow`
 * and `minHigh`. The rounds are WebAssembly's (`myers-wasm.ts`, with `m` in
 * its memory) where it runs, else the JavaScript ones below.
 */
interface Search {
  m: Int32Array;
  forward: (kHigh: number, kLow: number, lim1: number, l2k: number, g: number) => number;
  forwardMeet: (kHigh: number, kLow: number, lim1: number, l2k: number, g: number, cmin: number, cmax: number, other: number) => number;
  backward: (kHigh: number, kLow: number, off1: number, o2k: number, g: number) => number;
  backwardMeet: (kHigh: number, kLow: number, off1: number, o2k: number, g: number, cmin: number, cmax: number, other: number) => number;
  b2: number;
  F: number;
  B: number;
  maxCost: number;
  i1: number;
  i2: number;
  minLow: boolean;
  minHigh: boolean;
}

/** xdl_recs_cmp with an explicit stack instead of recursion (deep splits would overflow the JS stack). */
function compareRecords(k1: KeptLines, k2: KeptLines, ctx: DiffContext, minimal: boolean): void {
  const n1 = k1.ids.length;
  const n2 = k2.ids.length;
  const diagonals = n1 + n2 + 3;
  const size = n1 + n2 + 2 * diagonals + 2;
  const wasm = myersRounds();
  let m: Int32Array;
  let rounds: Pick<Search, 'forward' | 'forwardMeet' | 'backward' | 'backwardMeet'>;
  if (wasm && size <= MAX_WASM_INTS) {
    const bytes = 4 * size;
    const have = wasm.memory.buffer.byteLength;
    if (have < bytes) wasm.memory.grow(Math.ceil((bytes - have) / 65536));
    m = new Int32Array(wasm.memory.buffer, 0, size).fill(0);
    rounds = wasm;
  } else {
    const js = new Int32Array(size);
    m = js;
    rounds = {
      forward: (kHigh, kLow, lim1, l2k, g) => forward(js, kHigh, kLow, lim1, l2k, g),
      forwardMeet: (kHigh, kLow, lim1, l2k, g, cmin, cmax, other) => forwardMeet(js, kHigh, kLow, lim1, l2k, g, cmin, cmax, other),
      backward: (kHigh, kLow, off1, o2k, g) => backward(js, kHigh, kLow, off1, o2k, g),
      backwardMeet: (kHigh, kLow, off1, o2k, g, cmin, cmax, other) => backwardMeet(js, kHigh, kLow, off1, o2k, g, cmin, cmax, other),
    };
  }
  m.set(k1.ids, 0);
  m.set(k2.ids, n1);
  const b2 = n1;
  const s: Search = {
    m,
    forward: rounds.forward,
    forwardMeet: rounds.forwardMeet,
    backward: rounds.backward,
    backwardMeet: rounds.backwardMeet,
    b2,
    F: n1 + n2 + n2 + 1,
    B: n1 + n2 + diagonals + n2 + 1,
    maxCost: Math.max(roughSqrt(diagonals), MAX_COST_MIN),
    i1: 0,
    i2: 0,
    minLow: false,
    minHigh: false,
  };

  const stack: number[] = [0, n1, 0, n2, minimal ? 1 : 0];
  while (stack.length > 0) {
    const needMin = stack.pop() === 1;
    let lim2 = stack.pop() as number;
    let off2 = stack.pop() as number;
    let lim1 = stack.pop() as number;
    let off1 = stack.pop() as number;
    while (off1 < lim1 && off2 < lim2 && m[off1] === m[b2 + off2]) {
      off1++;
      off2++;
    }
    while (off1 < lim1 && off2 < lim2 && m[lim1 - 1] === m[b2 + lim2 - 1]) {
      lim1--;
      lim2--;
    }
    if (off1 === lim1) {
      for (; off2 < lim2; off2++) ctx.changedB[(k2.index[off2] as number) + 1] = 1;
    } else if (off2 === lim2) {
      for (; off1 < lim1; off1++) ctx.changedA[(k1.index[off1] as number) + 1] = 1;
    } else {
      findSplit(s, off1, lim1, off2, lim2, needMin);
      const { i1, i2 } = s;
      stack.push(i1, lim1, i2, lim2, s.minHigh ? 1 : 0);
      stack.push(off1, i1, off2, i2, s.minLow ? 1 : 0);
    }
  }
}

/** xdl_split: finds where to bisect the box, exactly or (past the cost bound) heuristically. */
function findSplit(s: Search, off1: number, lim1: number, off2: number, lim2: number, needMin: boolean): void {
  const { m, b2, F, B, maxCost } = s;
  const dmin = off1 - lim2;
  const dmax = lim1 - off2;
  const fmid = off1 - off2;
  const bmid = lim1 - lim2;
  const odd = ((fmid - bmid) & 1) !== 0;
  let fmin = fmid;
  let fmax = fmid;
  let bmin = bmid;
  let bmax = bmid;
  m[F + fmid] = off1;
  m[B + bmid] = lim1;

  for (let ec = 1; ; ec++) {
    if (fmin > dmin) m[F + --fmin - 1] = -1;
    else ++fmin;
    if (fmax < dmax) m[F + ++fmax + 1] = -1;
    else --fmax;

    // With an odd difference between the middles, forward paths are the ones that can meet backward ones.
    let gotSnake: boolean;
    if (odd) {
      const k = s.forwardMeet(F + fmax, F + fmin, lim1, lim2 - F, b2 + F, F + bmin, F + bmax, B - F);
      if (k >= 0) {
        s.i1 = m[k] as number;
        s.i2 = (s.i1 - (k - F)) | 0;
        s.minLow = s.minHigh = true;
        return;
      }
      gotSnake = k === SNAKE;
    } else {
      gotSnake = s.forward(F + fmax, F + fmin, lim1, lim2 - F, b2 + F) !== 0;
    }

    if (bmin > dmin) m[B + --bmin - 1] = LINE_MAX;
    else ++bmin;
    if (bmax < dmax) m[B + ++bmax + 1] = LINE_MAX;
    else --bmax;

    if (!odd) {
      const k = s.backwardMeet(B + bmax, B + bmin, off1, off2 - B, b2 + B, B + fmin, B + fmax, F - B);
      if (k >= 0) {
        s.i1 = m[k] as number;
        s.i2 = (s.i1 - (k - B)) | 0;
        s.minLow = s.minHigh = true;
        return;
      }
      if (k === SNAKE) gotSnake = true;
    } else if (s.backward(B + bmax, B + bmin, off1, off2 - B, b2 + B) !== 0) {
      gotSnake = true;
    }

    if (needMin) continue;

    // A long enough snake far from the corner is "interesting": split there.
    if (gotSnake && ec > HEURISTIC_MIN_COST) {
      let best = 0;
      for (let d = fmax; d >= fmin; d -= 2) {
        const dd = d > fmid ? d - fmid : fmid - d;
        const i1 = m[F + d] as number;
        const i2 = i1 - d;
        const v = i1 - off1 + (i2 - off2) - dd;
        if (v > K_HEURISTIC * ec && v > best && off1 + SNAKE_COUNT <= i1 && i1 < lim1 && off2 + SNAKE_COUNT <= i2 && i2 < lim2) {
          for (let k = 1; m[i1 - k] === m[b2 + i2 - k]; k++) {
            if (k === SNAKE_COUNT) {
              best = v;
              s.i1 = i1;
              s.i2 = i2;
              break;
            }
          }
        }
      }
      if (best > 0) {
        s.minLow = true;
        s.minHigh = false;
        return;
      }
      best = 0;
      for (let d = bmax; d >= bmin; d -= 2) {
        const dd = d > bmid ? d - bmid : bmid - d;
        const i1 = m[B + d] as number;
        const i2 = i1 - d;
        const v = lim1 - i1 + (lim2 - i2) - dd;
        if (v > K_HEURISTIC * ec && v > best && off1 < i1 && i1 <= lim1 - SNAKE_COUNT && off2 < i2 && i2 <= lim2 - SNAKE_COUNT) {
          for (let k = 0; m[i1 + k] === m[b2 + i2 + k]; k++) {
            if (k === SNAKE_COUNT - 1) {
              best = v;
              s.i1 = i1;
              s.i2 = i2;
              break;
            }
          }
        }
      }
      if (best > 0) {
        s.minLow = false;
        s.minHigh = true;
        return;
      }
    }

    // Past the cost bound: take the furthest-reaching path found so far.
    if (ec >= maxCost) {
      let fbest = -1;
      let fbest1 = -1;
      for (let d = fmax; d >= fmin; d -= 2) {
        let i1 = Math.min(m[F + d] as number, lim1);
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
        let i1 = Math.max(off1, m[B + d] as number);
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
        s.i1 = fbest1;
        s.i2 = fbest - fbest1;
        s.minLow = true;
        s.minHigh = false;
      } else {
        s.i1 = bbest1;
        s.i2 = bbest - bbest1;
        s.minLow = false;
        s.minHigh = true;
      }
      return;
    }
  }
}

/*
 * One round of the search in one direction. Each pass walks the diagonals
 * from the highest to the lowest, step 2, by their index `k` in `m` (the
 * diagonal is `k - F`, or `k - B` backward): it extends the furthest path of
 * each by one edit, then along its snake of equal lines. Diagonal d reads the
 * paths of d - 1 and d + 1, and the next diagonal (d - 2) reads d - 1 again,
 * so that value is carried over rather than read twice. Side 2's line on
 * diagonal k at side-1 line i is `m[i + g - k]` (`g` is `b2 + F`, or
 * `b2 + B`). The numbers are made int32 once at the top (`| 0`), and the
 * constants are written out, so the loops convert and load nothing per
 * diagonal: these few lines are where a Myers diff spends its time.
 * Hence four copies (each direction, with and without the meeting test)
 * rather than one loop with flags: a flag tested on every diagonal is the
 * cost they are written to avoid.
 *
 * `forward` and `backward` return 1 when a snake was longer than
 * SNAKE_COUNT, else 0. The `Meet` variants also stop at the first diagonal in
 * `[cmin, cmax]` (as indices of `m`) whose path reaches the other
 * direction's path on the same diagonal (`m[k + other]`): they return that
 * `k`, or else SNAKE or NO_SNAKE.
 */

/** What a `Meet` pass returns when it saw a snake longer than SNAKE_COUNT and no meeting (NO_SNAKE, -1, when neither). */
const SNAKE = -2;

/** Forward round; `l2k` is `lim2 - F`, so that `i2 < lim2` is `i1 < l2k + k`. */
function forward(m: Int32Array, kHigh: number, kLow: number, lim1: number, l2k: number, g: number): number {
  const lim = lim1 | 0;
  const l2 = l2k | 0;
  const gk = g | 0;
  const low = kLow | 0;
  let snake = 0;
  let hi = m[kHigh + 1] as number;
  for (let k = kHigh | 0; k >= low; k = (k - 2) | 0) {
    const lo = m[(k - 1) | 0] as number;
    // max(lo + 1, hi) without a branch: which one wins is a coin toss on changed text.
    let i1 = lo >= hi ? (lo + 1) | 0 : hi;
    hi = lo;
    const l2k = (l2 + k) | 0;
    const stop = Math.min(lim, l2k);
    const e = (gk - k) | 0;
    if (i1 < stop && m[i1] === m[(i1 + e) | 0]) {
      const from = i1;
      do i1 = (i1 + 1) | 0;
      while (i1 < stop && m[i1] === m[(i1 + e) | 0]);
      if (i1 - from > 20) snake = 1; // SNAKE_COUNT
    }
    m[k] = i1;
  }
  return snake;
}

function forwardMeet(m: Int32Array, kHigh: number, kLow: number, lim1: number, l2k: number, g: number, cmin: number, cmax: number, other: number): number {
  const lim = lim1 | 0;
  const l2 = l2k | 0;
  const gk = g | 0;
  const low = kLow | 0;
  const c0 = cmin | 0;
  const c1 = cmax | 0;
  const o = other | 0;
  let got = -1; // NO_SNAKE
  let hi = m[kHigh + 1] as number;
  for (let k = kHigh | 0; k >= low; k = (k - 2) | 0) {
    const lo = m[(k - 1) | 0] as number;
    // max(lo + 1, hi) without a branch: which one wins is a coin toss on changed text.
    let i1 = lo >= hi ? (lo + 1) | 0 : hi;
    hi = lo;
    const l2k = (l2 + k) | 0;
    const stop = Math.min(lim, l2k);
    const e = (gk - k) | 0;
    if (i1 < stop && m[i1] === m[(i1 + e) | 0]) {
      const from = i1;
      do i1 = (i1 + 1) | 0;
      while (i1 < stop && m[i1] === m[(i1 + e) | 0]);
      if (i1 - from > 20) got = -2; // SNAKE_COUNT, SNAKE
    }
    m[k] = i1;
    // The comparison first: it rarely holds, and the cell it reads is in the array even outside [c0, c1].
    if ((m[k + o] as number) <= i1 && k <= c1 && k >= c0) return k;
  }
  return got;
}

/** Backward round; `o2k` is `off2 - B`, so that `i2 > off2` is `i1 > o2k + k`. */
function backward(m: Int32Array, kHigh: number, kLow: number, off1: number, o2k: number, g: number): number {
  const off = off1 | 0;
  const o2 = o2k | 0;
  const gk = g | 0;
  const low = kLow | 0;
  let snake = 0;
  let hi = m[kHigh + 1] as number;
  for (let k = kHigh | 0; k >= low; k = (k - 2) | 0) {
    const lo = m[(k - 1) | 0] as number;
    // min(lo, hi - 1) without a branch.
    let i1 = lo < hi ? lo : (hi - 1) | 0;
    hi = lo;
    const o2k = (o2 + k) | 0;
    const stop = Math.max(off, o2k);
    const e = (gk - k - 1) | 0;
    if (i1 > stop && m[(i1 - 1) | 0] === m[(i1 + e) | 0]) {
      const from = i1;
      do i1 = (i1 - 1) | 0;
      while (i1 > stop && m[(i1 - 1) | 0] === m[(i1 + e) | 0]);
      if (from - i1 > 20) snake = 1; // SNAKE_COUNT
    }
    m[k] = i1;
  }
  return snake;
}

function backwardMeet(m: Int32Array, kHigh: number, kLow: number, off1: number, o2k: number, g: number, cmin: number, cmax: number, other: number): number {
  const off = off1 | 0;
  const o2 = o2k | 0;
  const gk = g | 0;
  const low = kLow | 0;
  const c0 = cmin | 0;
  const c1 = cmax | 0;
  const o = other | 0;
  let got = -1; // NO_SNAKE
  let hi = m[kHigh + 1] as number;
  for (let k = kHigh | 0; k >= low; k = (k - 2) | 0) {
    const lo = m[(k - 1) | 0] as number;
    // min(lo, hi - 1) without a branch.
    let i1 = lo < hi ? lo : (hi - 1) | 0;
    hi = lo;
    const o2k = (o2 + k) | 0;
    const stop = Math.max(off, o2k);
    const e = (gk - k - 1) | 0;
    if (i1 > stop && m[(i1 - 1) | 0] === m[(i1 + e) | 0]) {
      const from = i1;
      do i1 = (i1 - 1) | 0;
      while (i1 > stop && m[(i1 - 1) | 0] === m[(i1 + e) | 0]);
      if (from - i1 > 20) got = -2; // SNAKE_COUNT, SNAKE
    }
    m[k] = i1;
    if (i1 <= (m[k + o] as number) && k <= c1 && k >= c0) return k;
  }
  return got;
}
