/**
 * Histogram diff as git runs it (xhistogram.c, after JGit): in each region,
 * index the old side's lines by occurrence count, then take the longest
 * common run anchored on the rarest line shared by both sides; recurse left
 * and right of it. A region whose shared lines are all too frequent falls
 * back to git's Myers. Unique lines make good anchors, so moved blocks and
 * large rewrites stay readable and the cost stays near linear on real files.
 */
import { type DiffContext, markChanged } from './diff-context.js';
import { histogramScan, type HistogramScan } from './histogram-wasm.js';
import { myersDiff } from './myers.js';

/** Lines occurring more often than this in a region never serve as anchors. */
const MAX_CHAIN_LENGTH = 64;

/**
 * Work allowance per input line. Histogram diff rescans a region for every
 * anchor it takes, which is quadratic when anchors are dense and each one
 * splits off a sliver (every other line changed: git needs seconds on 50,000
 * lines). Real edits, rewrites included, take 3 to 40 units per line; past
 * the allowance the caller diffs the whole file with Myers instead, whose
 * cost is bounded.
 */
const WORK_PER_LINE = 64;
const WORK_MIN = 1 << 16;
/** Diffs whose lines and index take more than this (in int32 cells; 64 MiB) scan in JavaScript, so the WebAssembly memory, which never shrinks, stays bounded. */
const MAX_WASM_INTS = 16 << 20;

/** Per-diff scratch space for the region index; sized once, reused by every region. */
interface HistogramScratch {
  /** Record number of each line id in the current region, or -1. */
  recordOf: Int32Array;
  /** First occurrence (old-side index) of each record. */
  recordFirst: Int32Array;
  /** Occurrence count of each record in the region. */
  recordCount: Int32Array;
  /** Next occurrence of the same line after an old-side index, or -1. */
  nextSame: Int32Array;
  /** Record number of each old-side line in the region. */
  lineRecord: Int32Array;
  /** First old-side line of the region the index holds (its end is the region's), or -1 when empty. */
  from: number;
  /** Scan and extension steps spent so far. */
  work: number;
  /** The WebAssembly scan, with the line ids and the arrays above in its memory, or undefined to scan in JavaScript. */
  wasm:
    | {
        scan: HistogramScan;
        a: number;
        b: number;
        recordOf: number;
        recordCount: number;
        recordFirst: number;
        nextSame: number;
        lineRecord: number;
        out: number;
        ints: Int32Array;
        work: Float64Array;
      }
    | undefined;
}

/**
 * Marks the changed lines of the whole of both sides in the context. Returns
 * whether it finished (false, with the marks incomplete, when the work
 * allowance ran out) and the work it counted.
 */
export function histogramDiff(ctx: DiffContext): { done: boolean; work: number } {
  const n1 = ctx.a.length;
  const scratch = createScratch(ctx);
  const budget = WORK_MIN + WORK_PER_LINE * (n1 + ctx.b.length);
  const lcs = { begin1: -1, end1: -1, begin2: -1, end2: -1 };
  const stack: number[] = [0, n1, 0, ctx.b.length];
  while (stack.length > 0) {
    const b1 = stack.pop() as number;
    let b0 = stack.pop() as number;
    const a1 = stack.pop() as number;
    let a0 = stack.pop() as number;
    // The right part of a region keeps the region's index, minus the lines left of it, until the loop leaves it.
    for (;;) {
      if (a0 >= a1 && b0 >= b1) break;
      if (a0 >= a1) {
        markChanged(ctx.changedB, b0, b1);
        break;
      }
      if (b0 >= b1) {
        markChanged(ctx.changedA, a0, a1);
        break;
      }
      if (scratch.work > budget) return { done: false, work: scratch.work };
      if (scratch.from < 0) indexRegion(ctx.a, scratch, a0, a1);
      else dropFront(ctx.a, scratch, a0);
      const found = findLcs(ctx, scratch, a0, a1, b0, b1, lcs);
      if (found === 'fallback') {
        myersDiff(ctx, a0, a1, b0, b1);
        break;
      }
      if (found === 'none') {
        markChanged(ctx.changedA, a0, a1);
        markChanged(ctx.changedB, b0, b1);
        break;
      }
      stack.push(a0, lcs.begin1, b0, lcs.begin2);
      a0 = lcs.end1 + 1;
      b0 = lcs.end2 + 1;
    }
    if (scratch.from >= 0) clearIndex(ctx.a, scratch, a1);
  }
  return { done: true, work: scratch.work };
}

function createScratch(ctx: DiffContext): HistogramScratch {
  const n1 = ctx.a.length;
  const n2 = ctx.b.length;
  const ids = ctx.countA.length;
  const scan = histogramScan();
  // In the module's memory, one after the other: old and new line ids, recordOf, the four arrays of n1, the result (8 cells).
  const ints = n1 + n2 + ids + 4 * n1 + 8;
  if (!scan || ints > MAX_WASM_INTS) {
    return {
      recordOf: new Int32Array(ids).fill(-1),
      recordFirst: new Int32Array(n1),
      recordCount: new Int32Array(n1),
      nextSame: new Int32Array(n1),
      lineRecord: new Int32Array(n1),
      from: -1,
      work: 0,
      wasm: undefined,
    };
  }
  const bytes = 4 * ints;
  const have = scan.memory.buffer.byteLength;
  if (have < bytes) scan.memory.grow(Math.ceil((bytes - have) / 65536));
  const buffer = scan.memory.buffer;
  let at = 0;
  const take = (n: number): { view: Int32Array; offset: number } => {
    const offset = at;
    at += 4 * n;
    return { view: new Int32Array(buffer, offset, n), offset };
  };
  const a = take(n1);
  const b = take(n2);
  a.view.set(ctx.a);
  b.view.set(ctx.b);
  const recordOf = take(ids);
  recordOf.view.fill(-1);
  const recordFirst = take(n1);
  const recordCount = take(n1);
  const nextSame = take(n1);
  const lineRecord = take(n1);
  // The result: six int32s, then the work as a float64 at an 8-byte boundary.
  if (at % 8 !== 0) at += 4;
  const out = take(6);
  const work = new Float64Array(buffer, at, 1);
  return {
    recordOf: recordOf.view,
    recordFirst: recordFirst.view,
    recordCount: recordCount.view,
    nextSame: nextSame.view,
    lineRecord: lineRecord.view,
    from: -1,
    work: 0,
    wasm: {
      scan,
      a: a.offset,
      b: b.offset,
      recordOf: recordOf.offset,
      recordCount: recordCount.offset,
      recordFirst: recordFirst.offset,
      nextSame: nextSame.offset,
      lineRecord: lineRecord.offset,
      out: out.offset,
      ints: out.view,
      work,
    },
  };
}

/** Indexes old lines `[a0, a1)`, from the end so each record ends up at its first occurrence. */
function indexRegion(a: Int32Array, s: HistogramScratch, a0: number, a1: number): void {
  const { recordOf, recordFirst, recordCount, nextSame, lineRecord } = s;
  let records = 0;
  for (let ptr = a1 - 1; ptr >= a0; ptr--) {
    const id = a[ptr] as number;
    let rec = recordOf[id] as number;
    if (rec >= 0) {
      nextSame[ptr] = recordFirst[rec] as number;
      recordFirst[rec] = ptr;
      recordCount[rec]!++;
    } else {
      rec = records++;
      recordOf[id] = rec;
      recordFirst[rec] = ptr;
      recordCount[rec] = 1;
      nextSame[ptr] = -1;
    }
    lineRecord[ptr] = rec;
  }
  s.from = a0;
}

/**
 * Takes the indexed region's lines before `a0` out of the index: what is
 * left is exactly the index of the region from `a0` (each removed line was
 * its record's first occurrence, so the next one becomes first).
 */
function dropFront(a: Int32Array, s: HistogramScratch, a0: number): void {
  const { recordOf, recordFirst, recordCount, nextSame, lineRecord } = s;
  for (let ptr = s.from; ptr < a0; ptr++) {
    const rec = lineRecord[ptr] as number;
    recordFirst[rec] = nextSame[ptr] as number;
    if (--recordCount[rec]! === 0) recordOf[a[ptr] as number] = -1;
  }
  s.from = a0;
}

/** Empties the index of the region `[s.from, a1)`. */
function clearIndex(a: Int32Array, s: HistogramScratch, a1: number): void {
  for (let ptr = s.from; ptr < a1; ptr++) s.recordOf[a[ptr] as number] = -1;
  s.from = -1;
}

interface Lcs {
  begin1: number;
  end1: number;
  begin2: number;
  end2: number;
}

/** find_lcs + try_lcs: the anchor run for one region (inclusive ends), or why there is none; the scratch holds the region's index. */
function findLcs(ctx: DiffContext, s: HistogramScratch, a0: number, a1: number, b0: number, b1: number, lcs: Lcs): 'lcs' | 'none' | 'fallback' {
  const w = s.wasm;
  if (w) {
    w.scan.findLcs(a0, a1, b0, b1, w.a, w.b, w.recordOf, w.recordCount, w.recordFirst, w.nextSame, w.lineRecord, w.out);
    const out = w.ints;
    lcs.begin1 = out[0] as number;
    lcs.end1 = out[1] as number;
    lcs.begin2 = out[2] as number;
    lcs.end2 = out[3] as number;
    s.work += w.work[0] as number;
    if (out[5] === 1 && MAX_CHAIN_LENGTH < (out[4] as number)) return 'fallback';
    return lcs.begin1 < 0 ? 'none' : 'lcs';
  }
  const { a, b } = ctx;
  const { recordOf, recordFirst, recordCount, nextSame, lineRecord } = s;

  // The best run so far, in locals (not the result object) while the loop runs.
  let begin1 = -1;
  let end1 = -1;
  let begin2 = -1;
  let end2 = -1;
  let bestCount = MAX_CHAIN_LENGTH + 1;
  let hasCommon = false;
  const last1 = a1 - 1;
  const last2 = b1 - 1;
  let work = a1 - a0 + (b1 - b0);

  for (let bPtr = b0; bPtr < b1; ) {
    let bNext = bPtr + 1;
    const rec = recordOf[b[bPtr] as number] as number;
    if (rec >= 0) {
      hasCommon = true;
      if ((recordCount[rec] as number) <= bestCount) {
        let as = recordFirst[rec] as number;
        for (;;) {
          let np = nextSame[as] as number;
          let bs = bPtr;
          let ae = as;
          let be = bs;
          let rc = recordCount[rec] as number;
          while (a0 < as && b0 < bs && a[as - 1] === b[bs - 1]) {
            as--;
            bs--;
            if (1 < rc) rc = Math.min(rc, recordCount[lineRecord[as] as number] as number);
          }
          while (ae < last1 && be < last2 && a[ae + 1] === b[be + 1]) {
            ae++;
            be++;
            if (1 < rc) rc = Math.min(rc, recordCount[lineRecord[ae] as number] as number);
          }
          work += ae - as;
          if (bNext <= be) bNext = be + 1;
          if (end1 - begin1 < ae - as || rc < bestCount) {
            begin1 = as;
            begin2 = bs;
            end1 = ae;
            end2 = be;
            bestCount = rc;
          }
          if (np < 0) break;
          while (np >= 0 && np <= ae) np = nextSame[np] as number;
          if (np < 0) break;
          as = np;
        }
      }
    }
    bPtr = bNext;
  }

  s.work += work;
  lcs.begin1 = begin1;
  lcs.end1 = end1;
  lcs.begin2 = begin2;
  lcs.end2 = end2;

  if (hasCommon && MAX_CHAIN_LENGTH < bestCount) return 'fallback';
  return begin1 < 0 ? 'none' : 'lcs';
}
