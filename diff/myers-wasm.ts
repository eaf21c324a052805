/**
 * The four search rounds of `myers.ts` (`forward`, `forwardMeet`,
 * `backward`, `backwardMeet`) as a WebAssembly module, written out
 * instruction by instruction below. They are the same loops, over the same
 * array (`m`, an `Int32Array` view of the module's memory): in WebAssembly a
 * load is one machine instruction, where V8's JavaScript re-checks the array
 * and the bounds of each access, and these loops are where a Myers diff
 * spends its time. Only Node compiles it (the viewer's page forbids
 * WebAssembly in its Content-Security-Policy); elsewhere, or where it fails
 * to compile, `myers.ts` runs its JavaScript loops, with the same results.
 */

/** The little of the WebAssembly API used here (the code also runs in browsers, so no Node or DOM types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object) => { exports: unknown } } | undefined;
declare const process: { versions?: { node?: string } } | undefined;

/** The compiled rounds and the memory they work on. */
export interface MyersRounds {
  memory: WasmMemory;
  forward(kHigh: number, kLow: number, lim1: number, l2k: number, g: number): number;
  forwardMeet(kHigh: number, kLow: number, lim1: number, l2k: number, g: number, cmin: number, cmax: number, other: number): number;
  backward(kHigh: number, kLow: number, off1: number, o2k: number, g: number): number;
  backwardMeet(kHigh: number, kLow: number, off1: number, o2k: number, g: number, cmin: number, cmax: number, other: number): number;
}

// Opcodes used below (WebAssembly 1.0).
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const RETURN = 0x0f;
const SELECT = 0x1b;
const GET = 0x20;
const SET = 0x21;
const TEE = 0x22;
const LOAD = 0x28;
const STORE = 0x36;
const CONST = 0x41;
const NE = 0x47;
const LT = 0x48;
const GT = 0x4a;
const LE = 0x4c;
const GE = 0x4e;
const ADD = 0x6a;
const SUB = 0x6b;
const SHL = 0x74;
const VOID = 0x40;
const I32 = 0x7f;

/** Signed LEB128 of a small constant. */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** Unsigned LEB128. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** A WebAssembly vector: its length, then the items. */
export const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
/** A module section. */
export const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
/** A name in a module (ASCII). */
export const name = (s: string): number[] => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];

/** `m[x]` where the instructions `x` leave the index on the stack. */
const load = (x: number[]): number[] => [...x, ...[CONST, 2, SHL], LOAD, 2, 0];
const get = (l: number): number[] => [GET, l];
const set = (l: number): number[] => [SET, l];
const k = (n: number): number[] => [CONST, ...sleb(n)];

/*
 * One round, forward or backward, with or without the meeting test. Params:
 * 0 kHigh, 1 kLow, 2 lim1 (off1 backward), 3 l2k (o2k backward), 4 g, and
 * with the test 5 cmin, 6 cmax, 7 other. Locals after them: the diagonal's
 * index `k`, `hi`, `lo`, `i1`, `stop`, `e`, `from`, and the result `got`.
 * The comments give the JavaScript each part computes (see `myers.ts`).
 */
function round(backward: boolean, meet: boolean): number[] {
  const params = meet ? 8 : 5;
  const [K, HI, LO, I1, STOP, E, FROM, GOT] = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => params + i) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const body: number[] = [];
  // got = meet ? NO_SNAKE (-1) : false (0); hi = m[kHigh + 1]; k = kHigh
  body.push(...k(meet ? -1 : 0), ...set(GOT));
  body.push(...load([...get(0), ...k(1), ADD]), ...set(HI));
  body.push(...get(0), ...set(K));
  body.push(BLOCK, VOID, LOOP, VOID);
  // while (k >= kLow)
  body.push(...get(K), ...get(1), LT, BR_IF, 1);
  // lo = m[k - 1]
  body.push(...load([...get(K), ...k(1), SUB]), ...set(LO));
  if (!backward) {
    // i1 = lo >= hi ? lo + 1 : hi
    body.push(...get(LO), ...k(1), ADD, ...get(HI), ...get(LO), ...get(HI), GE, SELECT, ...set(I1));
    // stop = min(lim1, l2k + k)
    body.push(...get(2), ...get(3), ...get(K), ADD, TEE, STOP, ...get(2), ...get(STOP), LT, SELECT, ...set(STOP));
    // e = g - k
    body.push(...get(4), ...get(K), SUB, ...set(E));
  } else {
    // i1 = lo < hi ? lo : hi - 1
    body.push(...get(LO), ...get(HI), ...k(1), SUB, ...get(LO), ...get(HI), LT, SELECT, ...set(I1));
    // stop = max(off1, o2k + k)
    body.push(...get(2), ...get(3), ...get(K), ADD, TEE, STOP, ...get(2), ...get(STOP), GT, SELECT, ...set(STOP));
    // e = g - k - 1
    body.push(...get(4), ...get(K), SUB, ...k(1), SUB, ...set(E));
  }
  // hi = lo; from = i1
  body.push(...get(LO), ...set(HI), ...get(I1), ...set(FROM));
  // The snake: while (i1 < stop && m[i1] === m[i1 + e]) i1++ (backward: i1 > stop, m[i1 - 1], i1--).
  body.push(BLOCK, VOID, LOOP, VOID);
  body.push(...get(I1), ...get(STOP), backward ? LE : GE, BR_IF, 1);
  if (!backward) body.push(...load(get(I1)), ...load([...get(I1), ...get(E), ADD]), NE, BR_IF, 1);
  else body.push(...load([...get(I1), ...k(1), SUB]), ...load([...get(I1), ...get(E), ADD]), NE, BR_IF, 1);
  body.push(...get(I1), ...k(backward ? -1 : 1), ADD, ...set(I1), BR, 0, END, END);
  // if (|i1 - from| > SNAKE_COUNT) got = meet ? SNAKE (-2) : true (1)
  if (!backward) body.push(...get(I1), ...get(FROM), SUB);
  else body.push(...get(FROM), ...get(I1), SUB);
  body.push(...k(20), GT, IF, VOID, ...k(meet ? -2 : 1), ...set(GOT), END);
  // m[k] = i1
  body.push(...get(K), ...k(2), SHL, ...get(I1), STORE, 2, 0);
  if (meet) {
    // if (m[k + other] <= i1 (backward: i1 <= m[k + other]) && k <= cmax && k >= cmin) return k
    const other = load([...get(K), ...get(7), ADD]);
    if (!backward) body.push(...other, ...get(I1), LE);
    else body.push(...get(I1), ...other, LE);
    body.push(IF, VOID, ...get(K), ...get(6), LE, IF, VOID, ...get(K), ...get(5), GE, IF, VOID, ...get(K), RETURN, END, END, END);
  }
  // k -= 2
  body.push(...get(K), ...k(2), SUB, ...set(K), BR, 0, END, END);
  body.push(...get(GOT), END);
  const locals = vec([[...uleb(8), I32]]);
  return [...uleb(locals.length + body.length), ...locals, ...body];
}

/** The module's bytes: four functions and one exported memory. */
function moduleBytes(): Uint8Array {
  const plain = [0x60, ...uleb(5), ...Array<number>(5).fill(I32), 1, I32];
  const withMeet = [0x60, ...uleb(8), ...Array<number>(8).fill(I32), 1, I32];
  const exports = [
    [...name('forward'), 0x00, 0],
    [...name('forwardMeet'), 0x00, 1],
    [...name('backward'), 0x00, 2],
    [...name('backwardMeet'), 0x00, 3],
    [...name('memory'), 0x02, 0],
  ];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([plain, withMeet])),
    ...section(3, vec([[0], [1], [0], [1]])),
    ...section(5, vec([[0x00, 1]])),
    ...section(7, vec(exports)),
    ...section(10, [...uleb(4), ...round(false, false), ...round(false, true), ...round(true, false), ...round(true, true)]),
  ]);
}

let compiled: MyersRounds | null | undefined;

/**
 * The compiled rounds, or null where WebAssembly is not available; compiled
 * once. Only under Node: the viewer's page forbids compiling WebAssembly
 * (its Content-Security-Policy), and a browser logs each refusal as an error.
 */
export function myersRounds(): MyersRounds | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    const node = typeof process === 'object' && process !== undefined && typeof process.versions?.node === 'string';
    if (node && typeof WebAssembly === 'object' && WebAssembly !== undefined) {
      const instance = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
      compiled = instance.exports as unknown as MyersRounds;
    }
  } catch {
    // A page may forbid compiling WebAssembly: the JavaScript rounds are used.
  }
  return compiled;
}

/** For the tests: use the JavaScript rounds (false) or WebAssembly's where available (true). */
export function useMyersWasm(on: boolean): void {
  compiled = on ? undefined : null;
}
