/**
 * Line diff: the edit script between two line sequences, computed the way
 * `git diff --histogram` computes it (histogram anchors, git's Myers for
 * regions without anchors, then git's change compaction with the indent
 * heuristic), so our hunks are the hunks git prints. When histogram's work
 * allowance runs out (dense anchors make it quadratic) the whole file is
 * diffed with git's Myers instead, which is what plain `git diff` prints.
 */
import { ByteLines, internByteLines } from './byte-lines.js';
import { compactChanges, lineIndent } from './compact.js';
import { createDiffContext } from './diff-context.js';
import { histogramDiff } from './histogram.js';
import { internLines, splitLines } from './lines.js';
import { myersDiff } from './myers.js';

/** Which core algorithm to run. */
export type DiffAlgorithm = 'histogram' | 'myers';

/** Options of a line diff. */
export interface LineDiffOptions {
  /** Core algorithm; `histogram` (the default) is what reviews use, `myers` is what `git merge-file` uses. */
  algorithm?: DiffAlgorithm;
  /** Slide changes to the boundaries git's indent heuristic prefers (default true, as in `git diff`). */
  indentHeuristic?: boolean;
}

/**
 * One changed region: old lines `[oldStart, oldEnd)` are replaced by new
 * lines `[newStart, newEnd)` (0-based). Lines between consecutive changes are
 * equal on both sides and pair up in order.
 */
export interface LineChange {
  /** First old line of the region (0-based). */
  oldStart: number;
  /** One past the last old line; equals `oldStart` for a pure insertion. */
  oldEnd: number;
  /** First new line of the region (0-based). */
  newStart: number;
  /** One past the last new line; equals `newStart` for a pure deletion. */
  newEnd: number;
}

/** Two texts split into lines and the edit script between them. */
export interface TextLineDiff {
  /** Lines of the old text, each with its terminator. */
  oldLines: string[];
  /** Lines of the new text, each with its terminator. */
  newLines: string[];
  /** Changed regions in order. */
  changes: LineChange[];
}

/** Lines to diff: strings as produced by `splitLines`, or a file's byte lines. */
export type LineSource = readonly string[] | ByteLines;

/** Diffs two line sequences; both must be of the same kind. */
export function diffLines(a: LineSource, b: LineSource, options: LineDiffOptions = {}): LineChange[] {
  let interned: { a: Int32Array; b: Int32Array; idCount: number };
  let indentA: (i: number) => number;
  let indentB: (i: number) => number;
  if (a instanceof ByteLines && b instanceof ByteLines) {
    interned = internByteLines(a, b);
    indentA = (i) => a.indent(i);
    indentB = (i) => b.indent(i);
  } else if (!(a instanceof ByteLines) && !(b instanceof ByteLines)) {
    interned = internLines(a, b);
    indentA = (i) => lineIndent(a[i] as string);
    indentB = (i) => lineIndent(b[i] as string);
  } else {
    throw new TypeError('diffLines needs two string arrays or two ByteLines, not a mix');
  }
  const ctx = createDiffContext(interned.a, interned.b, interned.idCount);
  const histogram = (options.algorithm ?? 'histogram') === 'histogram';
  if (!histogram || !histogramDiff(ctx).done) {
    // Myers alone, or after histogram ran out of its work allowance: start over so the result is git's Myers diff exactly.
    ctx.changedA.fill(0);
    ctx.changedB.fill(0);
    myersDiff(ctx, 0, a.length, 0, b.length);
  }
  const indent = options.indentHeuristic ?? true;
  const sideA = { ids: ctx.a, changed: ctx.changedA, indentOf: indentA };
  const sideB = { ids: ctx.b, changed: ctx.changedB, indentOf: indentB };
  compactChanges(sideA, sideB, indent);
  compactChanges(sideB, sideA, indent);
  return collectChanges(ctx.changedA, a.length, ctx.changedB, b.length);
}

/** Splits both texts into lines and diffs them. */
export function diffTextLines(before: string, after: string, options: LineDiffOptions = {}): TextLineDiff {
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  return { oldLines, newLines, changes: diffLines(oldLines, newLines, options) };
}

/** Turns per-line marks into regions; unmarked lines pair up in order. */
function collectChanges(changedA: Uint8Array, n1: number, changedB: Uint8Array, n2: number): LineChange[] {
  const changes: LineChange[] = [];
  let i1 = 0;
  let i2 = 0;
  while (i1 < n1 || i2 < n2) {
    if (changedA[i1 + 1] === 1 || changedB[i2 + 1] === 1) {
      const oldStart = i1;
      const newStart = i2;
      while (changedA[i1 + 1] === 1) i1++;
      while (changedB[i2 + 1] === 1) i2++;
      changes.push({ oldStart, oldEnd: i1, newStart, newEnd: i2 });
    } else {
      i1++;
      i2++;
    }
  }
  return changes;
}

/** Rebuilds the new side from the old side and an edit script; inserted lines come from `b`. */
export function applyLineChanges(a: readonly string[], b: readonly string[], changes: readonly LineChange[]): string[] {
  const out: string[] = [];
  let i = 0;
  for (const c of changes) {
    for (; i < c.oldStart; i++) out.push(a[i] as string);
    for (let j = c.newStart; j < c.newEnd; j++) out.push(b[j] as string);
    i = c.oldEnd;
  }
  for (; i < a.length; i++) out.push(a[i] as string);
  return out;
}

/** Lines added and removed by an edit script (what `git diff --numstat` prints). */
export function countLineChanges(changes: readonly LineChange[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const c of changes) {
    added += c.newEnd - c.newStart;
    removed += c.oldEnd - c.oldStart;
  }
  return { added, removed };
}
