/**
 * Turns `changesetFileDiff` hunks into the lines the diff view draws:
 * numbered lines, changed-word ranges for each removed line paired with its
 * added counterpart, side-by-side rows, and the unchanged gaps between hunks
 * that the reader can expand.
 */
import type { DiffHunk } from '../../protocol/extensions/file-diff.js';
import { wordDiff, type CharRange } from '../../diff/word-diff.js';

/** One drawn line. */
export interface DiffLine {
  /** Unchanged, added or removed. */
  kind: 'context' | 'add' | 'del';
  /** 1-based line number in the old version (context and removed lines). */
  oldNo?: number;
  /** 1-based line number in the new version (context and added lines). */
  newNo?: number;
  /** The line's text without its prefix or terminator. */
  text: string;
  /** Changed-word ranges within `text`, for lines paired with a counterpart. */
  words?: CharRange[];
  /** The line has no trailing newline. */
  noNewline?: boolean;
}

/** One row of the side-by-side view. */
export interface SplitRow {
  /** The old side, or undefined for a pure addition. */
  left?: DiffLine;
  /** The new side, or undefined for a pure removal. */
  right?: DiffLine;
}

/** A hunk ready to draw. */
export interface HunkModel {
  /** The hunk as the server sent it. */
  hunk: DiffHunk;
  /** Lines in unified order. */
  lines: DiffLine[];
  /** Rows of the side-by-side view. */
  rows: SplitRow[];
}

/** Unchanged lines not shown between (or around) hunks. */
export interface Gap {
  /** First hidden old line (1-based). */
  oldFrom: number;
  /** First hidden new line (1-based). */
  newFrom: number;
  /** Number of hidden lines; undefined for the tail of the file until its length is known. */
  count: number | undefined;
}

/** Lines a changed block of at most this many lines per side get word highlighting (bounding the work). */
const MAX_WORD_PAIRS = 400;

/** Builds the drawable model of one hunk. */
export function buildHunk(hunk: DiffHunk): HunkModel {
  const lines: DiffLine[] = [];
  let oldNo = hunk.oldStart;
  let newNo = hunk.newStart;
  for (const raw of hunk.lines) {
    const prefix = raw[0];
    const text = raw.slice(1);
    if (prefix === '\\') {
      const last = lines[lines.length - 1];
      if (last) last.noNewline = true;
    } else if (prefix === '+') lines.push({ kind: 'add', newNo: newNo++, text });
    else if (prefix === '-') lines.push({ kind: 'del', oldNo: oldNo++, text });
    else lines.push({ kind: 'context', oldNo: oldNo++, newNo: newNo++, text });
  }
  const rows: SplitRow[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    if (line.kind === 'context') {
      rows.push({ left: line, right: line });
      i++;
      continue;
    }
    // A change block: removed lines, then added lines; the n-th removed pairs with the n-th added.
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < lines.length && lines[i]!.kind === 'del') dels.push(lines[i++]!);
    while (i < lines.length && lines[i]!.kind === 'add') adds.push(lines[i++]!);
    const pairs = Math.min(dels.length, adds.length);
    if (pairs <= MAX_WORD_PAIRS) {
      for (let k = 0; k < pairs; k++) {
        const d = wordDiff(dels[k]!.text, adds[k]!.text);
        // A line that changed entirely gets no word marks: the line colour already says it.
        if (!coversAll(d.before, dels[k]!.text)) dels[k]!.words = d.before;
        if (!coversAll(d.after, adds[k]!.text)) adds[k]!.words = d.after;
      }
    }
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const row: SplitRow = {};
      if (dels[k]) row.left = dels[k];
      if (adds[k]) row.right = adds[k];
      rows.push(row);
    }
  }
  return { hunk, lines, rows };
}

function coversAll(ranges: CharRange[], text: string): boolean {
  return ranges.length === 1 && ranges[0]!.start === 0 && ranges[0]!.end === text.length;
}

/** The line after a hunk on each side (a hunk with no lines on a side starts at the line it precedes). */
function hunkEnd(h: DiffHunk): { old: number; new: number } {
  return { old: h.oldStart + h.oldLines, new: h.newStart + h.newLines };
}

/**
 * The unchanged gaps around `hunks`: `gaps[i]` precedes hunk `i`, and the
 * last entry is the tail after the final hunk (its size is unknown until the
 * file's length is, so it is undefined; `totalNewLines` fills it in).
 */
export function gapsOf(hunks: readonly DiffHunk[], totalNewLines?: number): Gap[] {
  const gaps: Gap[] = [];
  let next = { old: 1, new: 1 };
  for (const h of hunks) {
    gaps.push({ oldFrom: next.old, newFrom: next.new, count: h.newStart - next.new });
    next = hunkEnd(h);
  }
  gaps.push({ oldFrom: next.old, newFrom: next.new, count: totalNewLines === undefined ? undefined : Math.max(0, totalNewLines - next.new + 1) });
  return gaps;
}

/** Context lines for an expanded gap, numbered on both sides, from the new version's lines. */
export function gapLines(gap: Gap, newLines: readonly string[]): DiffLine[] {
  const count = gap.count ?? Math.max(0, newLines.length - gap.newFrom + 1);
  const out: DiffLine[] = [];
  for (let k = 0; k < count; k++) {
    const text = newLines[gap.newFrom - 1 + k];
    if (text === undefined) break;
    out.push({ kind: 'context', oldNo: gap.oldFrom + k, newNo: gap.newFrom + k, text });
  }
  return out;
}

/** A file's text split into lines without terminators (a final newline does not start another line). */
export function splitText(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/**
 * The zero-based new-side line range of a hunk, as an operation target
 * (`TextRange`): from the start of its first new line to the end of its
 * last, both lines inclusive. A hunk with no new lines (a file emptied
 * entirely) is the empty range where the removed lines were.
 */
export function hunkRange(h: DiffHunk): { start: { line: number; character: number }; end: { line: number; character: number } } {
  const first = Math.max(0, h.newStart - 1);
  if (h.newLines === 0) return { start: { line: first, character: 0 }, end: { line: first, character: 0 } };
  const newSide = h.lines.filter((l) => l[0] === ' ' || l[0] === '+');
  const last = newSide[newSide.length - 1] ?? ' ';
  return { start: { line: first, character: 0 }, end: { line: first + h.newLines - 1, character: last.length - 1 } };
}
