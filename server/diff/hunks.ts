/**
 * Unified-diff hunks from an edit script, grouped exactly as git groups them:
 * a change keeps `context` lines on each side, and two changes separated by
 * at most `2 * context` equal lines share one hunk.
 */
import type { DiffHunk } from '../../protocol/extensions/file-diff.js';
import { ByteLines } from '../../diff/byte-lines.js';
import type { LineChange, LineSource } from '../../diff/line-diff.js';
import { hasNewline } from '../../diff/lines.js';

/** The marker git prints after a line that has no trailing newline. */
export type { DiffHunk };

export const NO_NEWLINE_MARKER = '\\ No newline at end of file';

/** Builds the hunks of an edit script with `context` lines of context (default 3, as git). */
export function buildHunks(oldLines: LineSource, newLines: LineSource, changes: readonly LineChange[], context = 3): DiffHunk[] {
  if (!Number.isInteger(context) || context < 0) throw new RangeError(`context must be a non-negative integer, got ${context}`);
  const hunks: DiffHunk[] = [];
  const maxGap = 2 * context;
  let k = 0;
  while (k < changes.length) {
    const first = changes[k] as LineChange;
    let last = first;
    let end = k + 1;
    while (end < changes.length) {
      const next = changes[end] as LineChange;
      if (next.oldStart - last.oldEnd > maxGap) break;
      last = next;
      end++;
    }
    const s1 = Math.max(first.oldStart - context, 0);
    const s2 = Math.max(first.newStart - context, 0);
    const e1 = Math.min(last.oldEnd + context, oldLines.length);
    const e2 = Math.min(last.newEnd + context, newLines.length);
    const lines: string[] = [];
    const emit = (prefix: string, line: string): void => {
      if (hasNewline(line)) lines.push(prefix + line.slice(0, -1));
      else lines.push(prefix + line, NO_NEWLINE_MARKER);
    };
    const oldText = textsOf(oldLines, first.oldStart, last.oldEnd);
    const newText = textsOf(newLines, s2, e2);
    let j = s2;
    for (let c = k; c < end; c++) {
      const ch = changes[c] as LineChange;
      // Context comes from the new side, as git prints it.
      for (; j < ch.newStart; j++) emit(' ', newText[j - s2] as string);
      for (let i = ch.oldStart; i < ch.oldEnd; i++) emit('-', oldText[i - first.oldStart] as string);
      for (; j < ch.newEnd; j++) emit('+', newText[j - s2] as string);
    }
    for (; j < e2; j++) emit(' ', newText[j - s2] as string);
    hunks.push({ oldStart: s1 + 1, oldLines: e1 - s1, newStart: s2 + 1, newLines: e2 - s2, lines });
    k = end;
  }
  return hunks;
}

/** Texts of lines `[from, to)`, decoding byte lines once per hunk. */
function textsOf(source: LineSource, from: number, to: number): readonly string[] {
  return source instanceof ByteLines ? source.texts(from, to) : source.slice(from, to);
}

/** The `@@ -a,b +c,d @@` line of a hunk, printed as git prints it (",1" omitted). */
export function formatHunkHeader(h: DiffHunk): string {
  const range = (start: number, count: number): string => {
    const shown = count === 0 ? start - 1 : start;
    return count === 1 ? `${shown}` : `${shown},${count}`;
  };
  return `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`;
}

/** Added and removed line counts of a set of hunks; equals `git diff --numstat` for the same diff. */
export function countHunkLines(hunks: readonly DiffHunk[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const h of hunks) {
    for (const line of h.lines) {
      const c = line.charCodeAt(0);
      if (c === 0x2b) added++;
      else if (c === 0x2d) removed++;
    }
  }
  return { added, removed };
}
