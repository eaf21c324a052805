/**
 * Histogram's scan for its anchor (`findLcs` in `histogram.ts`) as a
 * WebAssembly function, written out instruction by instruction below like
 * Myers' rounds (`myers-wasm.ts`): the same loop over the same arrays, here
 * in the module's memory. The scan is where histogram spends its time, and
 * all of it on the files where its work allowance runs out (each anchor
 * splits off a sliver and the rest is scanned again), so it is the price of
 * finding out that Myers must run instead. Only Node compiles it; elsewhere,
 * or where it fails to compile, `histogram.ts` runs its JavaScript loop, with
 * the same results.
 */
import { name, section, sleb, uleb, vec } from './myers-wasm.js';

interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object) => { exports: unknown } } | undefined;
declare const process: { versions?: { node?: string } } | undefined;

/** The compiled scan and the memory it works on. */
export interface HistogramScan {
  memory: WasmMemory;
  /**
   * Scans new lines `[b0, b1)` against the index of old lines `[a0, a1)`.
   * The other arguments are byte offsets in `memory` of: the old and new
   * line ids, the index (`recordOf`, `recordCount`, `recordFirst`,
   * `nextSame`, `lineRecord`, as in `histogram.ts`), and where the result
   * goes: begin1, end1, begin2, end2, bestCount, hasCommon as int32, then
   * the work as a float64 (8-byte aligned).
   */
  findLcs(a0: number, a1: number, b0: number, b1: number, A: number, B: number, RO: number, RC: number, RF: number, NS: number, LR: number, OUT: number): void;
}

// Opcodes used below (WebAssembly 1.0).
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const SELECT = 0x1b;
const GET = 0x20;
const SET = 0x21;
const LOAD = 0x28;
const STORE = 0x36;
const F64_STORE = 0x39;
const CONST = 0x41;
const NE = 0x47;
const LT = 0x48;
const GT = 0x4a;
const LE = 0x4c;
const GE = 0x4e;
const ADD = 0x6a;
const SUB = 0x6b;
const OR = 0x72;
const SHL = 0x74;
const F64_ADD = 0xa0;
const F64_FROM_I32 = 0xb7;
const VOID = 0x40;
const I32 = 0x7f;
const F64 = 0x7c;

const get = (l: number): number[] => [GET, l];
const set = (l: number): number[] => [SET, l];
const k = (n: number): number[] => [CONST, ...sleb(n)];
/** `base[i]` (int32) where the instructions `i` leave the index on the stack. */
const at = (base: number, i: number[]): number[] => [...get(base), ...i, ...k(2), SHL, ADD];
const load = (base: number, i: number[]): number[] => [...at(base, i), LOAD, 2, 0];
const store = (base: number, i: number[], value: number[]): number[] => [...at(base, i), ...value, STORE, 2, 0];
/** A loop left by `br 1` and continued by `br 0`, around `body`. */
const loop = (body: number[]): number[] => [BLOCK, VOID, LOOP, VOID, ...body, END, END];

/** The scan's function body; the JavaScript it computes is `findLcs` in `histogram.ts`. */
function scanBody(): number[] {
  // Params.
  const [A0, A1, B0, B1, A, B, RO, RC, RF, NS, LR, OUT] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] as const;
  // Locals: int32 ones, then the work (float64).
  const [BEGIN1, END1, BEGIN2, END2, BEST, COMMON, LAST1, LAST2, BPTR, BNEXT, REC, AS, NP, BS, AE, BE, RCOUNT, T] = [
    12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
  ] as const;
  const WORK = 30;
  // rc = min(rc, recordCount[lineRecord[x]]) when 1 < rc
  const lowerCount = (x: number): number[] => [
    ...k(1),
    ...get(RCOUNT),
    LT,
    IF,
    VOID,
    ...load(RC, load(LR, get(x))),
    ...set(T),
    ...get(T),
    ...get(RCOUNT),
    ...get(T),
    ...get(RCOUNT),
    LT,
    SELECT,
    ...set(RCOUNT),
    END,
  ];
  const chain = [
    // np = nextSame[as]; bs = bPtr; ae = as; be = bs; rc = recordCount[rec]
    ...load(NS, get(AS)),
    ...set(NP),
    ...get(BPTR),
    ...set(BS),
    ...get(AS),
    ...set(AE),
    ...get(BPTR),
    ...set(BE),
    ...load(RC, get(REC)),
    ...set(RCOUNT),
    // while (a0 < as && b0 < bs && a[as - 1] === b[bs - 1]) { as--; bs--; lower rc }
    ...loop([
      ...get(A0),
      ...get(AS),
      GE,
      BR_IF,
      1,
      ...get(B0),
      ...get(BS),
      GE,
      BR_IF,
      1,
      ...load(A, [...get(AS), ...k(1), SUB]),
      ...load(B, [...get(BS), ...k(1), SUB]),
      NE,
      BR_IF,
      1,
      ...get(AS),
      ...k(1),
      SUB,
      ...set(AS),
      ...get(BS),
      ...k(1),
      SUB,
      ...set(BS),
      ...lowerCount(AS),
      BR,
      0,
    ]),
    // while (ae < last1 && be < last2 && a[ae + 1] === b[be + 1]) { ae++; be++; lower rc }
    ...loop([
      ...get(AE),
      ...get(LAST1),
      GE,
      BR_IF,
      1,
      ...get(BE),
      ...get(LAST2),
      GE,
      BR_IF,
      1,
      ...load(A, [...get(AE), ...k(1), ADD]),
      ...load(B, [...get(BE), ...k(1), ADD]),
      NE,
      BR_IF,
      1,
      ...get(AE),
      ...k(1),
      ADD,
      ...set(AE),
      ...get(BE),
      ...k(1),
      ADD,
      ...set(BE),
      ...lowerCount(AE),
      BR,
      0,
    ]),
    // work += ae - as
    ...get(WORK),
    ...get(AE),
    ...get(AS),
    SUB,
    F64_FROM_I32,
    F64_ADD,
    ...set(WORK),
    // if (bNext <= be) bNext = be + 1
    ...get(BNEXT),
    ...get(BE),
    LE,
    IF,
    VOID,
    ...get(BE),
    ...k(1),
    ADD,
    ...set(BNEXT),
    END,
    // if (end1 - begin1 < ae - as || rc < bestCount) take this run
    ...get(END1),
    ...get(BEGIN1),
    SUB,
    ...get(AE),
    ...get(AS),
    SUB,
    LT,
    ...get(RCOUNT),
    ...get(BEST),
    LT,
    OR,
    IF,
    VOID,
    ...get(AS),
    ...set(BEGIN1),
    ...get(BS),
    ...set(BEGIN2),
    ...get(AE),
    ...set(END1),
    ...get(BE),
    ...set(END2),
    ...get(RCOUNT),
    ...set(BEST),
    END,
    // if (np < 0) break; while (np >= 0 && np <= ae) np = nextSame[np]; if (np < 0) break; as = np
    ...get(NP),
    ...k(0),
    LT,
    BR_IF,
    1,
    ...loop([...get(NP), ...k(0), LT, BR_IF, 1, ...get(NP), ...get(AE), GT, BR_IF, 1, ...load(NS, get(NP)), ...set(NP), BR, 0]),
    ...get(NP),
    ...k(0),
    LT,
    BR_IF,
    1,
    ...get(NP),
    ...set(AS),
    BR,
    0,
  ];
  const body = [
    ...k(-1),
    ...set(BEGIN1),
    ...k(-1),
    ...set(END1),
    ...k(-1),
    ...set(BEGIN2),
    ...k(-1),
    ...set(END2),
    ...k(65), // MAX_CHAIN_LENGTH + 1
    ...set(BEST),
    ...get(A1),
    ...k(1),
    SUB,
    ...set(LAST1),
    ...get(B1),
    ...k(1),
    SUB,
    ...set(LAST2),
    // work = a1 - a0 + (b1 - b0)
    ...get(A1),
    ...get(A0),
    SUB,
    ...get(B1),
    ...get(B0),
    SUB,
    ADD,
    F64_FROM_I32,
    ...set(WORK),
    ...get(B0),
    ...set(BPTR),
    ...loop([
      ...get(BPTR),
      ...get(B1),
      GE,
      BR_IF,
      1,
      ...get(BPTR),
      ...k(1),
      ADD,
      ...set(BNEXT),
      // rec = recordOf[b[bPtr]]
      ...load(RO, load(B, get(BPTR))),
      ...set(REC),
      ...get(REC),
      ...k(0),
      GE,
      IF,
      VOID,
      ...k(1),
      ...set(COMMON),
      ...load(RC, get(REC)),
      ...get(BEST),
      LE,
      IF,
      VOID,
      ...load(RF, get(REC)),
      ...set(AS),
      ...loop(chain),
      END,
      END,
      ...get(BNEXT),
      ...set(BPTR),
      BR,
      0,
    ]),
    ...store(OUT, k(0), get(BEGIN1)),
    ...store(OUT, k(1), get(END1)),
    ...store(OUT, k(2), get(BEGIN2)),
    ...store(OUT, k(3), get(END2)),
    ...store(OUT, k(4), get(BEST)),
    ...store(OUT, k(5), get(COMMON)),
    ...at(OUT, k(6)),
    ...get(WORK),
    F64_STORE,
    3,
    0,
    END,
  ];
  const locals = vec([
    [...uleb(18), I32],
    [...uleb(1), F64],
  ]);
  return [...uleb(locals.length + body.length), ...locals, ...body];
}

function moduleBytes(): Uint8Array {
  const type = [0x60, ...uleb(12), ...Array<number>(12).fill(I32), 0];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([type])),
    ...section(3, vec([[0]])),
    ...section(5, vec([[0x00, 1]])),
    ...section(
      7,
      vec([
        [...name('findLcs'), 0x00, 0],
        [...name('memory'), 0x02, 0],
      ]),
    ),
    ...section(10, [...uleb(1), ...scanBody()]),
  ]);
}

let compiled: HistogramScan | null | undefined;
let enabled = true;

/** The compiled scan, or null where WebAssembly is not available (or not wanted: the browser); compiled once. */
export function histogramScan(): HistogramScan | null {
  if (!enabled) return null;
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    const node = typeof process === 'object' && process !== undefined && typeof process.versions?.node === 'string';
    if (node && typeof WebAssembly === 'object' && WebAssembly !== undefined) {
      compiled = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes())).exports as unknown as HistogramScan;
    }
  } catch {
    // A page may forbid compiling WebAssembly: the JavaScript scan is used.
  }
  return compiled;
}

/** For the tests and benchmarks: use the JavaScript scan (false) or WebAssembly's where available (true). */
export function useHistogramWasm(on: boolean): void {
  enabled = on;
}
