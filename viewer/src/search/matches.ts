/**
 * Finding text in a file's diff: every occurrence of the search text in its
 * added, removed and context lines (those the diff shows: its hunks), with
 * the line each is on, in the order the lines are drawn. Case-insensitive
 * unless asked; occurrences on one line do not overlap.
 */
import type { DiffHunk } from '../../../protocol/extensions/file-diff.js';

/** A line's kind as the diff draws it. */
export type LineKind = 'add' | 'del' | 'context';

/** What to look for. */
export interface SearchQuery {
  /** The text (empty: nothing is searched). */
  text: string;
  /** The kinds of lines searched. */
  kinds: ReadonlySet<LineKind>;
  /** Upper and lower case differ. */
  matchCase: boolean;
}

/** One occurrence of the text. */
export interface LineMatch {
  /** The kind of line it is on. */
  kind: LineKind;
  /** The line as links name it: `R<n>` (added and context lines), `L<n>` (removed lines). */
  key: string;
  /** A context line's old-side name (`L<n>`), under which the old side of a side-by-side row shows it. */
  oldKey?: string;
  /** Where it starts and ends in the line's text (UTF-16 code units). */
  start: number;
  end: number;
}

/** A file's occurrences, in drawing order, and by the names of their lines. */
export interface FileMatches {
  matches: LineMatch[];
  /** Occurrences by `key` (and a context line's `oldKey` too). */
  byLine: Map<string, LineMatch[]>;
}

const SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

/** A pattern finding `text` literally; null for empty text. */
export function patternOf(query: SearchQuery): RegExp | null {
  if (query.text === '') return null;
  return new RegExp(query.text.replace(SYNTAX, '\\$&'), query.matchCase ? 'gu' : 'giu');
}

/** Where `pattern` occurs in `text`, as [start, end) pairs. */
export function occurrences(text: string, pattern: RegExp): [number, number][] {
  const out: [number, number][] = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    out.push([m.index, m.index + m[0].length]);
    if (m[0].length === 0) pattern.lastIndex++;
  }
  return out;
}

/** Every occurrence of the query in a diff's hunks (as the server sends them: lines prefixed `+`, `-`, ` `). */
export function matchHunks(hunks: readonly DiffHunk[], query: SearchQuery, pattern = patternOf(query)): FileMatches {
  const matches: LineMatch[] = [];
  const byLine = new Map<string, LineMatch[]>();
  if (!pattern) return { matches, byLine };
  for (const hunk of hunks) {
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    for (const raw of hunk.lines) {
      const prefix = raw[0];
      if (prefix === '\\') continue;
      const kind: LineKind = prefix === '+' ? 'add' : prefix === '-' ? 'del' : 'context';
      const key = kind === 'del' ? `L${oldNo}` : `R${newNo}`;
      const oldKey = kind === 'context' ? `L${oldNo}` : undefined;
      if (kind !== 'add') oldNo++;
      if (kind !== 'del') newNo++;
      if (!query.kinds.has(kind)) continue;
      const found = occurrences(raw.slice(1), pattern);
      if (found.length === 0) continue;
      const line = found.map(([start, end]): LineMatch => ({ kind, key, ...(oldKey ? { oldKey } : {}), start, end }));
      matches.push(...line);
      byLine.set(key, line);
      if (oldKey) byLine.set(oldKey, line);
    }
  }
  return { matches, byLine };
}
