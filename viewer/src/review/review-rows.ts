/**
 * The fixed-height rows one file contributes to the review page: hunk
 * headers, lines (unified) or line pairs (side by side), collapsed or
 * expanded unchanged gaps, and one-line notes (binary, too large, loading).
 * Every row is one line tall, which is what lets the page compute any
 * file's offset without drawing it; a line wider than the code column
 * takes one row per part it wraps into.
 */
import type { ChangesetFile } from '../../../protocol/index.js';
import type { DiffMode } from '../state/display.js';
import { gapLines, gapsOf, type DiffLine, type Gap, type HunkModel } from '../diff-model.js';
import type { FileDiffEntry } from './diff-store.js';
import { wrapLine } from './wrap.js';
import type { Placed } from '../comments/comment-store.js';
import type { ChangesetFileMeta } from '../../../protocol/extensions/changeset-file.js';
import { filterNote, NO_LINE_CHANGES, noTextNote } from '../diff-notes.js';

/** The part of a wrapped line a row shows; `first` carries the line's numbers and sign. */
export interface RowPart {
  from: number;
  to: number;
  first: boolean;
}

/**
 * One drawn row of a file's body. A line's `part` is absent when the line
 * fits on one row; a side of a pair whose line has no more parts than the
 * other side's is `null` (drawn blank).
 */
export type BodyRow =
  | { type: 'hunk'; hunk: HunkModel; index: number }
  | { type: 'line'; line: DiffLine; part?: RowPart }
  | { type: 'pair'; left: DiffLine | undefined; right: DiffLine | undefined; leftPart?: RowPart | null; rightPart?: RowPart | null }
  | { type: 'gap'; gap: Gap; index: number }
  | { type: 'note'; text: string; tone?: 'error' }
  /** A review comment under its lines (or the box to write one): `span` rows tall, drawn whole by its `part` 0. */
  | { type: 'comment'; placed: Placed; part: number; span: number }
  | { type: 'composer'; part: number; span: number };

/** Unchanged lines assumed around each change before a diff arrives (the server's default context, both sides). */
const ESTIMATED_CONTEXT = 6;

/** How many rows a file will take before its diff is known (so the scrollbar is about right from the start). */
export function estimateRows(file: ChangesetFile): number {
  const diff = file.edit.diff;
  if (!diff) return 1;
  const changed = (diff.added ?? 0) + (diff.removed ?? 0);
  const notes = (file._meta as Partial<ChangesetFileMeta> | undefined)?.filterNotRun !== undefined ? 1 : 0;
  return notes + (changed === 0 ? 1 : changed + ESTIMATED_CONTEXT + 1);
}

/**
 * Whether a file's end can hide unchanged lines after the last hunk: not for
 * an added or deleted file (its one hunk is the whole file), nor when the
 * last hunk reaches a line without a newline (the file's last line), nor
 * when it ends with fewer unchanged lines than the context asked for (the
 * diff ran out of file).
 */
export function hasTail(file: ChangesetFile, hunks: readonly HunkModel[], context: number): boolean {
  if (!file.edit.before || !file.edit.after) return false;
  const last = hunks[hunks.length - 1];
  if (!last) return true;
  if (last.lines.some((l) => l.noNewline && l.kind !== 'del')) return false;
  let trailing = 0;
  for (let i = last.lines.length - 1; i >= 0 && last.lines[i]!.kind === 'context'; i--) trailing++;
  return trailing >= context;
}

/** The rows of a file's body for a layout whose code column holds `columns` characters; a note about the file comes first. */
export function bodyRows(file: ChangesetFile, entry: FileDiffEntry | undefined, mode: DiffMode, context: number, columns: number): BodyRow[] {
  const rows = diffRows(file, entry, mode, context, columns);
  const note = filterNote((file._meta as Partial<ChangesetFileMeta> | undefined)?.filterNotRun);
  return note === undefined ? rows : [{ type: 'note', text: note }, ...rows];
}

function diffRows(file: ChangesetFile, entry: FileDiffEntry | undefined, mode: DiffMode, context: number, columns: number): BodyRow[] {
  if (!entry || (!entry.diff && !entry.error)) return [{ type: 'note', text: 'Loading diff…' }];
  if (entry.error) return [{ type: 'note', text: `Could not load the diff: ${entry.error}`, tone: 'error' }];
  const diff = entry.diff!;
  if (diff.kind !== 'text') return [{ type: 'note', text: noTextNote(diff) }];
  const hunks = entry.hunks ?? [];
  if (hunks.length === 0) return [{ type: 'note', text: NO_LINE_CHANGES }];
  const gaps = gapsOf(diff.hunks, entry.text?.length);
  const canExpand = file.edit.before !== undefined && file.edit.after !== undefined;
  const rows: BodyRow[] = [];
  const line = (l: DiffLine): void => {
    const parts = wrapLine(l.text, columns);
    if (parts.length === 1) rows.push({ type: 'line', line: l });
    else {
      parts.forEach((p, k) => {
        rows.push({ type: 'line', line: l, part: { ...p, first: k === 0 } });
      });
    }
  };
  const pair = (left: DiffLine | undefined, right: DiffLine | undefined): void => {
    const l = left && wrapLine(left.text, columns);
    const r = right && wrapLine(right.text, columns);
    const count = Math.max(l?.length ?? 1, r?.length ?? 1);
    if (count === 1) {
      rows.push({ type: 'pair', left, right });
      return;
    }
    const partOf = (parts: { from: number; to: number }[] | undefined, k: number): RowPart | null | undefined =>
      parts === undefined ? undefined : k < parts.length ? { ...parts[k]!, first: k === 0 } : null;
    for (let k = 0; k < count; k++) rows.push({ type: 'pair', left, right, leftPart: partOf(l, k), rightPart: partOf(r, k) });
  };
  const gapRows = (index: number): void => {
    const gap = gaps[index]!;
    if (gap.count === 0 || !canExpand) return;
    if (index === hunks.length && !hasTail(file, hunks, context)) return;
    if (entry.expanded.has(index) && entry.text) {
      for (const l of gapLines(gap, entry.text)) {
        if (mode === 'split') pair(l, l);
        else line(l);
      }
    } else rows.push({ type: 'gap', gap, index });
  };
  hunks.forEach((hunk, index) => {
    gapRows(index);
    rows.push({ type: 'hunk', hunk, index });
    if (mode === 'split') for (const r of hunk.rows) pair(r.left, r.right);
    else for (const l of hunk.lines) line(l);
  });
  gapRows(hunks.length);
  return rows;
}

/** The index of the (first) row showing a linked line (`L<n>` old side, `R<n>` new side), or -1. */
export function rowOfLine(rows: readonly BodyRow[], link: string): number {
  const side = link[0];
  const n = Number(link.slice(1));
  const matches = (line: DiffLine | undefined, part: RowPart | null | undefined): boolean =>
    line !== undefined && part !== null && (part === undefined || part.first) && (side === 'L' ? line.oldNo === n : line.newNo === n);
  return rows.findIndex((r) =>
    r.type === 'line' ? matches(r.line, r.part) : r.type === 'pair' ? (side === 'L' ? matches(r.left, r.leftPart) : matches(r.right, r.rightPart)) : false,
  );
}
