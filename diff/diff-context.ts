/**
 * Shared state of one line diff: the interned lines of both sides and the
 * per-line "changed" marks every algorithm writes into.
 */

/** The working state of one diff between two interned line sequences. */
export interface DiffContext {
  /** Line ids of the old side. */
  readonly a: Int32Array;
  /** Line ids of the new side. */
  readonly b: Int32Array;
  /** Changed marks for the old side; line `i` lives at index `i + 1` so indices 0 and n+1 are always-zero sentinels. */
  readonly changedA: Uint8Array;
  /** Changed marks for the new side, laid out like `changedA`. */
  readonly changedB: Uint8Array;
  /** Scratch counters indexed by line id; all zero between uses. */
  readonly countA: Int32Array;
  /** Scratch counters indexed by line id; all zero between uses. */
  readonly countB: Int32Array;
}

export function createDiffContext(a: Int32Array, b: Int32Array, idCount: number): DiffContext {
  return {
    a,
    b,
    changedA: new Uint8Array(a.length + 2),
    changedB: new Uint8Array(b.length + 2),
    countA: new Int32Array(idCount),
    countB: new Int32Array(idCount),
  };
}

/** Marks lines `[start, end)` of one side as changed. */
export function markChanged(changed: Uint8Array, start: number, end: number): void {
  changed.fill(1, start + 1, end + 1);
}
