/**
 * The text of one diff line as DOM: syntax tokens (when the highlighter has
 * run) with the changed words wrapped in `ins` / `del` marks on top, both
 * built from text nodes only.
 */
import type { CharRange } from '../../diff/word-diff.js';
import { h } from './dom.js';

/** A run of a line's text with the highlighter's class for it (empty: plain). */
export interface Token {
  /** Start offset in the line (UTF-16 code units). */
  start: number;
  /** End offset (exclusive). */
  end: number;
  /** CSS classes, e.g. `hljs-keyword`. */
  className: string;
}

function piece(text: string, className: string): Node {
  return className ? h('span', { class: className }, text) : document.createTextNode(text);
}

/**
 * The nodes of a line (or of its characters `from`–`to`, one part of a
 * wrapped line): tokens split at word-mark edges, marked runs grouped in one
 * `ins` / `del` each.
 */
export function codeNodes(
  text: string,
  words: readonly CharRange[] | undefined,
  kind: 'context' | 'add' | 'del',
  tokens: readonly Token[] | undefined,
  from = 0,
  to = text.length,
): Node[] {
  if ((!tokens || tokens.length === 0) && (!words || words.length === 0))
    return [document.createTextNode(from === 0 && to === text.length ? text : text.slice(from, to))];
  const runs = tokens && tokens.length > 0 ? tokens : [{ start: 0, end: text.length, className: '' }];
  const slice = (start: number, end: number): Node[] => {
    const out: Node[] = [];
    for (const t of runs) {
      const a = Math.max(start, t.start);
      const b = Math.min(end, t.end);
      if (a < b) out.push(piece(text.slice(a, b), t.className));
    }
    return out;
  };
  if (!words || words.length === 0) return slice(from, to);
  const out: Node[] = [];
  let at = from;
  for (const r of words) {
    const start = Math.max(r.start, from);
    const end = Math.min(r.end, to);
    if (start >= end) continue;
    if (start > at) out.push(...slice(at, start));
    out.push(h(kind === 'del' ? 'del' : 'ins', { class: 'word' }, slice(start, end)));
    at = end;
  }
  if (at < to) out.push(...slice(at, to));
  return out;
}
