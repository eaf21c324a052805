import type { TextRange } from '../../protocol/index.js';
import type { GitMode } from '../changes/file-change.js';
import { buildHunks } from '../diff/hunks.js';
import { applyLineChanges, diffTextLines, type LineChange } from '../../diff/line-diff.js';
import { merge3 } from '../diff/merge3.js';
import { hashObject } from '../snapshot/index.js';
import type { DiskFile } from '../disk/workspace-file.js';

/** What the merge needs of the file on disk: its content, mode and blob id. */
export type CurrentFile = Pick<NonNullable<DiskFile>, 'content' | 'mode' | 'oid'> | undefined;

/** Content with its mode; `undefined` means the file does not exist. */
export type Version = { content: Uint8Array; mode: GitMode } | undefined;

/** What to write to one path, or why it cannot be done. */
export type PathOutcome = { kind: 'write'; next: Version } | { kind: 'unchanged' } | { kind: 'conflict'; reason: string };

/** Lines of a file a range target selects, and which side they count on. */
export interface RangeSelection {
  range: TextRange;
  side: 'before' | 'after';
}

/**
 * Undoes one change to one path in today's file: `before` is what the path
 * should go back to, `after` what the change produced, `current` what is on
 * disk. When the file still holds `after`, `before` is written as is;
 * otherwise a three-way merge (base `after`, ours `current`, theirs
 * `before`) keeps later edits to other lines. Anything it cannot merge is a
 * conflict. With a range, only the hunks it intersects are undone.
 */
export function reverseMerge(before: Version, after: Version, current: CurrentFile, selection?: RangeSelection): PathOutcome {
  let target = before;
  if (selection) {
    const partial = partialTarget(before, after, selection);
    if (partial.kind !== 'write') return partial;
    target = partial.next;
  }
  if (same(current, after)) return same(current, target) ? { kind: 'unchanged' } : { kind: 'write', next: target };
  if (same(current, target)) return { kind: 'unchanged' };
  if (!current) return { kind: 'conflict', reason: after ? 'deleted since the change' : 'missing' };
  if (!after) return { kind: 'conflict', reason: 'created by the change and edited since' };
  if (!target) return { kind: 'conflict', reason: 'edited since the change, which created it' };
  if (isBinary(after.content) || isBinary(current.content) || isBinary(target.content)) {
    return { kind: 'conflict', reason: 'binary file changed since' };
  }
  if (current.mode !== after.mode) return { kind: 'conflict', reason: 'mode changed since' };
  const merged = merge3(latin1(after.content), latin1(current.content), latin1(target.content));
  if (!merged.clean || merged.result === undefined) return { kind: 'conflict', reason: 'edited since on the same lines' };
  // A mode the change set is put back too; a mode changed later stays.
  const next = Buffer.from(merged.result, 'latin1');
  // Today's file already lacks the change (reverted, or edited back) and holds later work: nothing to write.
  if (next.equals(current.content) && current.mode === target.mode) return { kind: 'unchanged' };
  return { kind: 'write', next: { content: next, mode: target.mode } };
}

/**
 * The content the file should have once the selected hunks of the change
 * are undone: `after` with those hunks replaced by their `before` lines.
 */
function partialTarget(before: Version, after: Version, selection: RangeSelection): PathOutcome {
  const oldText = before ? latin1(before.content) : '';
  const newText = after ? latin1(after.content) : '';
  if ((before && isBinary(before.content)) || (after && isBinary(after.content))) {
    return { kind: 'conflict', reason: 'binary files have no lines to select' };
  }
  const diff = diffTextLines(oldText, newText);
  const sideLines = selection.side === 'before' ? diff.oldLines.length : diff.newLines.length;
  const { start, end } = selection.range;
  if (start.line >= Math.max(sideLines, 1) || end.line >= Math.max(sideLines, 1)) {
    throw new RangeError(`range lines ${start.line}-${end.line} are outside the file's ${sideLines} lines (${selection.side})`);
  }
  const hunks = buildHunks(diff.oldLines, diff.newLines, diff.changes, 3);
  const selected = new Set<LineChange>();
  for (const hunk of hunks) {
    const oldFirst = sideStart(hunk.oldStart);
    const newFirst = sideStart(hunk.newStart);
    const first = selection.side === 'before' ? oldFirst : newFirst;
    const count = selection.side === 'before' ? hunk.oldLines : hunk.newLines;
    if (end.line < first || start.line > first + Math.max(count, 1) - 1) continue;
    for (const c of diff.changes) {
      const inside = c.oldStart >= oldFirst && c.oldEnd <= oldFirst + hunk.oldLines && c.newStart >= newFirst && c.newEnd <= newFirst + hunk.newLines;
      if (inside) selected.add(c);
    }
  }
  if (selected.size === 0) return { kind: 'unchanged' };
  // A file the change created is one hunk: a range takes back only its lines, so reverting line 2 keeps the file.
  const chosen = diff.changes
    .filter((c) => selected.has(c))
    .map((c) => {
      if (before || selection.side !== 'after' || c.oldStart !== c.oldEnd) return c;
      const newStart = Math.max(c.newStart, start.line);
      const newEnd = Math.min(c.newEnd, end.line + 1);
      return newStart === c.newStart && newEnd === c.newEnd ? c : { ...c, newStart, newEnd };
    })
    .filter((c) => c.newEnd > c.newStart || c.oldEnd > c.oldStart);
  const clipped = chosen.some((c) => !selected.has(c));
  if (chosen.length === 0) return { kind: 'unchanged' };
  if (selected.size === diff.changes.length && !clipped) return { kind: 'write', next: before };
  const reversed = chosen.map((c) => ({ oldStart: c.newStart, oldEnd: c.newEnd, newStart: c.oldStart, newEnd: c.oldEnd }));
  const text = applyLineChanges(diff.newLines, diff.oldLines, reversed).join('');
  return { kind: 'write', next: { content: Buffer.from(text, 'latin1'), mode: after?.mode ?? before!.mode } };
}

/** 0-based first line of a hunk side (hunks number lines from 1, also for an empty side). */
function sideStart(start: number): number {
  return start - 1;
}

function same(disk: CurrentFile | Version, version: Version): boolean {
  if (!disk || !version) return !disk && !version;
  const oid = 'oid' in disk ? disk.oid : hashObject('blob', disk.content);
  return oid === hashObject('blob', version.content) && disk.mode === version.mode;
}

// One character per byte, so line splitting and merging keep any encoding's bytes exactly.
function latin1(content: Uint8Array): string {
  return Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1');
}

function isBinary(content: Uint8Array): boolean {
  return content.subarray(0, 8000).includes(0);
}
