/**
 * Intraline highlighting: which parts of a removed line and its added
 * counterpart differ, at word granularity. Runs in the browser as well as on
 * the server, so it imports nothing from Node.
 */
import { diffLines } from './line-diff.js';

/** A range of UTF-16 code units `[start, end)` within a line. */
export interface CharRange {
  /** Offset of the first changed code unit. */
  start: number;
  /** Offset one past the last changed code unit. */
  end: number;
}

/** The changed ranges of both lines of a pair. */
export interface WordDiff {
  /** Ranges of the old line that were removed or replaced. */
  before: CharRange[];
  /** Ranges of the new line that were added or replacements. */
  after: CharRange[];
}

/** Options of `wordDiff`. */
export interface WordDiffOptions {
  /** Lines longer than this are marked changed as a whole instead of diffed (default 10,000). */
  maxLength?: number;
}

// Words (letters, digits, underscore), whitespace runs, or any other single character.
const TOKEN = /[\p{L}\p{N}_]+|\s+|[\s\S]/gu;

function tokenize(line: string): { tokens: string[]; offsets: number[] } {
  const tokens: string[] = [];
  const offsets: number[] = [];
  for (const m of line.matchAll(TOKEN)) {
    tokens.push(m[0]);
    offsets.push(m.index);
  }
  offsets.push(line.length);
  return { tokens, offsets };
}

/** The changed word ranges between an old and a new version of one line. */
export function wordDiff(before: string, after: string, options: WordDiffOptions = {}): WordDiff {
  if (typeof before !== 'string' || typeof after !== 'string') throw new TypeError('wordDiff: lines must be strings');
  const maxLength = options.maxLength ?? 10_000;
  if (before === after) return { before: [], after: [] };
  const whole = (s: string): CharRange[] => (s.length > 0 ? [{ start: 0, end: s.length }] : []);
  if (before.length > maxLength || after.length > maxLength) return { before: whole(before), after: whole(after) };

  const a = tokenize(before);
  const b = tokenize(after);
  const changes = diffLines(a.tokens, b.tokens, { indentHeuristic: false });
  const out: WordDiff = { before: [], after: [] };
  for (const c of changes) {
    addRange(out.before, a.offsets[c.oldStart] as number, a.offsets[c.oldEnd] as number, before);
    addRange(out.after, b.offsets[c.newStart] as number, b.offsets[c.newEnd] as number, after);
  }
  return out;
}

/** Appends a range, joining it to the previous one when only whitespace separates them. */
function addRange(ranges: CharRange[], start: number, end: number, line: string): void {
  if (start === end) return;
  const last = ranges[ranges.length - 1];
  if (last && line.slice(last.end, start).trim() === '') last.end = end;
  else ranges.push({ start, end });
}
