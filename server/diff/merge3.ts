/**
 * Line-based three-way merge with the verdicts of `git merge-file`: changes
 * from both sides combine when they touch different base lines (with at least
 * one untouched line between them), identical changes are taken once, and
 * anything else is a conflict unless re-diffing the two versions shows they
 * agree. Reverting a turn is `merge3(turnAfter, current, turnBefore)`.
 */
import { diffLines, type LineChange } from '../../diff/line-diff.js';
import { splitLines } from '../../diff/lines.js';

/** A range of lines `[start, end)`, 0-based. */
export interface LineRange {
  /** First line of the range (0-based). */
  start: number;
  /** One past the last line; equals `start` for an empty range. */
  end: number;
}

/** Where two sides disagree. */
export interface MergeConflict {
  /** The disputed lines in `ours`. */
  oursRange: LineRange;
  /** The disputed lines in `theirs`. */
  theirsRange: LineRange;
}

/** The outcome of a three-way merge. */
export interface Merge3Result {
  /** True when every change could be combined without conflict. */
  clean: boolean;
  /** The merged text; present only when `clean`. */
  result?: string;
  /** The conflicts in order; empty when `clean`. */
  conflicts: MergeConflict[];
}

/** Merge entry: 0 conflict, 1 ours, 2 theirs, 4 both sides identical. Positions as in xdiff's xdmerge_t. */
interface MergeEntry {
  mode: 0 | 1 | 2 | 4;
  i0: number;
  chg0: number;
  i1: number;
  chg1: number;
  i2: number;
  chg2: number;
}

// git merge-file diffs with Myers and without the indent heuristic.
const MERGE_DIFF = { algorithm: 'myers', indentHeuristic: false } as const;

/** Merges the changes `base → ours` and `base → theirs`. */
export function merge3(base: string, ours: string, theirs: string): Merge3Result {
  for (const [name, value] of [
    ['base', base],
    ['ours', ours],
    ['theirs', theirs],
  ] as const) {
    if (typeof value !== 'string') throw new TypeError(`merge3: ${name} must be a string`);
  }
  const b = splitLines(base);
  const o = splitLines(ours);
  const t = splitLines(theirs);
  const script1 = diffLines(b, o, MERGE_DIFF);
  const script2 = diffLines(b, t, MERGE_DIFF);
  if (script1.length === 0) return { clean: true, result: theirs, conflicts: [] };
  if (script2.length === 0) return { clean: true, result: ours, conflicts: [] };

  const merges = combine(script1, script2, b.length, o.length, t.length, o, t);
  refineConflicts(merges, o, t);
  const simplified = simplifyConflicts(merges, o);
  const conflicts = simplified
    .filter((m) => m.mode === 0)
    .map((m) => ({ oursRange: { start: m.i1, end: m.i1 + m.chg1 }, theirsRange: { start: m.i2, end: m.i2 + m.chg2 } }));
  if (conflicts.length > 0) return { clean: false, conflicts };
  return { clean: true, result: assemble(simplified, o, t), conflicts: [] };
}

/** xdl_do_merge's walk over both edit scripts. */
function combine(
  s1: readonly LineChange[],
  s2: readonly LineChange[],
  nBase: number,
  nOurs: number,
  nTheirs: number,
  o: readonly string[],
  t: readonly string[],
): MergeEntry[] {
  const merges: MergeEntry[] = [];
  const append = (mode: 0 | 1 | 2, i0: number, chg0: number, i1: number, chg1: number, i2: number, chg2: number): void => {
    const m = merges[merges.length - 1];
    if (m && (i1 <= m.i1 + m.chg1 || i2 <= m.i2 + m.chg2)) {
      if (mode !== m.mode) m.mode = 0;
      m.chg0 = i0 + chg0 - m.i0;
      m.chg1 = i1 + chg1 - m.i1;
      m.chg2 = i2 + chg2 - m.i2;
    } else {
      merges.push({ mode, i0, chg0, i1, chg1, i2, chg2 });
    }
  };
  let k1 = 0;
  let k2 = 0;
  while (k1 < s1.length && k2 < s2.length) {
    const x1 = s1[k1] as LineChange;
    const x2 = s2[k2] as LineChange;
    const a1 = x1.oldStart;
    const c1 = x1.oldEnd - x1.oldStart;
    const a2 = x2.oldStart;
    const c2 = x2.oldEnd - x2.oldStart;
    if (a1 + c1 < a2) {
      append(1, a1, c1, x1.newStart, x1.newEnd - x1.newStart, x2.newStart - a2 + a1, c1);
      k1++;
      continue;
    }
    if (a2 + c2 < a1) {
      append(2, a2, c2, x1.newStart - a1 + a2, c2, x2.newStart, x2.newEnd - x2.newStart);
      k2++;
      continue;
    }
    const n1 = x1.newEnd - x1.newStart;
    const n2 = x2.newEnd - x2.newStart;
    if (a1 !== a2 || c1 !== c2 || n1 !== n2 || !sameLines(o, x1.newStart, t, x2.newStart, n1)) {
      const off = a1 - a2;
      const ffo = off + c1 - c2;
      let i0 = a1;
      let i1 = x1.newStart;
      let i2 = x2.newStart;
      if (off > 0) {
        i0 -= off;
        i1 -= off;
      } else {
        i2 += off;
      }
      let chg0 = a1 + c1 - i0;
      let chg1 = x1.newStart + n1 - i1;
      let chg2 = x2.newStart + n2 - i2;
      if (ffo < 0) {
        chg0 -= ffo;
        chg1 -= ffo;
      } else {
        chg2 += ffo;
      }
      append(0, i0, chg0, i1, chg1, i2, chg2);
    }
    const end1 = a1 + c1;
    const end2 = a2 + c2;
    if (end1 >= end2) k2++;
    if (end2 >= end1) k1++;
  }
  for (; k1 < s1.length; k1++) {
    const x1 = s1[k1] as LineChange;
    const c1 = x1.oldEnd - x1.oldStart;
    append(1, x1.oldStart, c1, x1.newStart, x1.newEnd - x1.newStart, x1.oldStart + nTheirs - nBase, c1);
  }
  for (; k2 < s2.length; k2++) {
    const x2 = s2[k2] as LineChange;
    const c2 = x2.oldEnd - x2.oldStart;
    append(2, x2.oldStart, c2, x2.oldStart + nOurs - nBase, c2, x2.newStart, x2.newEnd - x2.newStart);
  }
  return merges;
}

function sameLines(a: readonly string[], i: number, b: readonly string[], j: number, n: number): boolean {
  for (let k = 0; k < n; k++) if (a[i + k] !== b[j + k]) return false;
  return true;
}

/** xdl_refine_conflicts: re-diff each conflict's two versions; identical ones resolve, others shrink to their real differences. */
function refineConflicts(merges: MergeEntry[], o: readonly string[], t: readonly string[]): void {
  for (let k = 0; k < merges.length; k++) {
    const m = merges[k] as MergeEntry;
    if (m.mode !== 0 || m.chg1 === 0 || m.chg2 === 0) continue;
    const ours = o.slice(m.i1, m.i1 + m.chg1);
    const theirs = t.slice(m.i2, m.i2 + m.chg2);
    const script = diffLines(ours, theirs, MERGE_DIFF);
    if (script.length === 0) {
      m.mode = 4;
      continue;
    }
    const i1 = m.i1;
    const i2 = m.i2;
    const parts = script.map(
      (x): MergeEntry => ({
        mode: 0,
        // The base range is only meaningful for diff3-style output, which we do not produce.
        i0: m.i0,
        chg0: m.chg0,
        i1: x.oldStart + i1,
        chg1: x.oldEnd - x.oldStart,
        i2: x.newStart + i2,
        chg2: x.newEnd - x.newStart,
      }),
    );
    merges.splice(k, 1, ...parts);
    k += parts.length - 1;
  }
}

/** xdl_simplify_non_conflicts (zealous-alnum): neighbouring conflicts separated by little or no real text become one. */
function simplifyConflicts(merges: MergeEntry[], o: readonly string[]): MergeEntry[] {
  const out: MergeEntry[] = [];
  for (const next of merges) {
    const m = out[out.length - 1];
    if (m && m.mode === 0 && next.mode === 0) {
      const begin = m.i1 + m.chg1;
      const end = next.i1;
      if (!(end - begin > 3 && containsAlnum(o, begin, end))) {
        m.chg0 = next.i0 + next.chg0 - m.i0;
        m.chg1 = next.i1 + next.chg1 - m.i1;
        m.chg2 = next.i2 + next.chg2 - m.i2;
        continue;
      }
    }
    out.push({ ...next });
  }
  return out;
}

function containsAlnum(lines: readonly string[], begin: number, end: number): boolean {
  for (let i = begin; i < end; i++) if (/[A-Za-z0-9]/.test(lines[i] as string)) return true;
  return false;
}

/** Builds the clean result: ours everywhere except where only theirs changed. */
function assemble(merges: readonly MergeEntry[], o: readonly string[], t: readonly string[]): string {
  const parts: string[] = [];
  let i = 0;
  for (const m of merges) {
    if (m.mode !== 1 && m.mode !== 2) continue;
    for (; i < m.i1; i++) parts.push(o[i] as string);
    if (m.mode === 1) for (let k = m.i1; k < m.i1 + m.chg1; k++) parts.push(o[k] as string);
    else for (let k = m.i2; k < m.i2 + m.chg2; k++) parts.push(t[k] as string);
    i = m.i1 + m.chg1;
  }
  for (; i < o.length; i++) parts.push(o[i] as string);
  return parts.join('');
}
