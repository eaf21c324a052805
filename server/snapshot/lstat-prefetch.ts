/**
 * The first snapshot of a repository makes one `lstat` per file, and in
 * Node each costs a few microseconds of binding overhead on top of the
 * system call: at 100,000 files they are half the snapshot. Git spreads the
 * same calls over threads (`core.preloadIndex`). Here a worker thread
 * stats the index's paths from the last one backwards while the walk goes
 * forwards; the walk takes a result the worker already has and stats the
 * rest itself, so the two meet in the middle and no path waits on the
 * other thread.
 */
import { Worker } from 'node:worker_threads';
import type { IndexSeed } from './index-file.js';
import { usingRawLstat, type LiteStat } from './fast-lstat.js';

/** Below this many index entries a thread costs more to start than it saves. */
export const PREFETCH_MIN_ENTRIES = 4096;

// Per-entry states shared with the worker.
const PENDING = 0;
const TAKEN = 1;
const DONE = 2;
const BUSY = 3;
const FAILED = 4;
const FIELDS = 5;

// Plain JavaScript, evaluated as the worker's script: it must not depend on how this module was loaded.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { lstatSync } = require('node:fs');
const { root, bytes, starts, ends, state, values, stop, raw } = workerData;
const names = Buffer.from(bytes);
const startAt = new Uint32Array(starts);
const endAt = new Uint32Array(ends);
const st = new Int32Array(state);
const out = new Float64Array(values);
const halt = new Int32Array(stop);
let rawLstat;
if (raw) {
  try { const b = process.binding('fs'); rawLstat = b.lstat.bind(b); } catch { rawLstat = undefined; }
}
const prefix = Buffer.from(root.endsWith('/') ? root : root + '/');
for (let i = st.length - 1; i >= 0; i--) {
  if ((i & 255) === 0 && Atomics.load(halt, 0) !== 0) break;
  if (Atomics.compareExchange(st, i, ${PENDING}, ${BUSY}) !== ${PENDING}) continue;
  const path = Buffer.concat([prefix, names.subarray(startAt[i], endAt[i])]);
  try {
    const o = i * ${FIELDS};
    if (rawLstat) {
      const v = rawLstat(path, false, undefined, false);
      if (v === undefined) { Atomics.store(st, i, ${FAILED}); continue; }
      out[o] = v[1]; out[o + 1] = v[8]; out[o + 2] = v[7];
      out[o + 3] = v[12] * 1e3 + v[13] / 1e6; out[o + 4] = v[14] * 1e3 + v[15] / 1e6;
    } else {
      const s = lstatSync(path, { throwIfNoEntry: false });
      if (s === undefined) { Atomics.store(st, i, ${FAILED}); continue; }
      out[o] = s.mode; out[o + 1] = s.size; out[o + 2] = s.ino; out[o + 3] = s.mtimeMs; out[o + 4] = s.ctimeMs;
    }
    Atomics.store(st, i, ${DONE});
  } catch {
    Atomics.store(st, i, ${FAILED});
  }
}
`;

/** lstat results for the index's paths, computed ahead of the walk on a second thread. */
export class LstatPrefetch {
  private readonly state: Int32Array;
  private readonly values: Float64Array;
  private readonly stopFlag: Int32Array;
  private readonly worker: Worker;
  /** Resolves when the worker has stopped: every path done, stopped, or failed to start. */
  readonly finished: Promise<void>;

  private constructor(workTree: string, seed: IndexSeed) {
    const { bytes, starts, ends } = seed.paths();
    const shared = (length: number) => new SharedArrayBuffer(Math.max(8, length));
    const bytesShared = shared(bytes.length);
    bytes.copy(Buffer.from(bytesShared));
    const startsShared = shared(starts.byteLength);
    new Uint32Array(startsShared).set(starts);
    const endsShared = shared(ends.byteLength);
    new Uint32Array(endsShared).set(ends);
    const stateShared = shared(ends.length * 4);
    const valuesShared = shared(ends.length * FIELDS * 8);
    const stopShared = shared(4);
    this.state = new Int32Array(stateShared, 0, ends.length);
    this.values = new Float64Array(valuesShared, 0, ends.length * FIELDS);
    this.stopFlag = new Int32Array(stopShared, 0, 1);
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { root: workTree, bytes: bytesShared, starts: startsShared, ends: endsShared, state: stateShared, values: valuesShared, stop: stopShared, raw: usingRawLstat },
      // The worker only stats: it needs neither the parent's stdin nor much heap.
      stdin: false,
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
    });
    this.worker.unref();
    // A worker that fails to start just leaves every path to the walk.
    this.worker.on('error', () => Atomics.store(this.stopFlag, 0, 1));
    this.finished = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** Starts prefetching when the index is large enough to gain from it and a second CPU is there to run it. */
  static start(workTree: string, seed: IndexSeed | undefined, cpus: number): LstatPrefetch | undefined {
    if (!seed || seed.entries < PREFETCH_MIN_ENTRIES || cpus < 2) return undefined;
    try {
      return new LstatPrefetch(workTree, seed);
    } catch {
      return undefined;
    }
  }

  /**
   * The worker's lstat of seed entry `i` when it has one; otherwise the
   * entry is claimed (the worker will skip it) and the caller stats it.
   */
  take(i: number): LiteStat | undefined {
    const s = Atomics.load(this.state, i);
    if (s === DONE) {
      const o = i * FIELDS;
      const v = this.values;
      return { mode: v[o]!, size: v[o + 1]!, ino: v[o + 2]!, mtimeMs: v[o + 3]!, ctimeMs: v[o + 4]! };
    }
    if (s === PENDING) Atomics.compareExchange(this.state, i, PENDING, TAKEN);
    return undefined;
  }

  /** Ends the worker (the walk is over). */
  stop(): void {
    Atomics.store(this.stopFlag, 0, 1);
    void this.worker.terminate();
  }
}
