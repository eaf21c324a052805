/**
 * git's xdl_change_compact: slides each group of changed lines over runs of
 * identical lines so that groups merge where they can, line up with a change
 * on the other side when possible, and otherwise sit where the indent
 * heuristic finds the most natural boundaries (a function added before a
 * blank line rather than after it). Sliding never changes which lines are
 * added or removed in number, only which of several equal lines is marked.
 */

const MAX_INDENT = 200;
const MAX_BLANKS = 20;
const MAX_SLIDING = 100;
const START_OF_FILE_PENALTY = 1;
const END_OF_FILE_PENALTY = 21;
const TOTAL_BLANK_WEIGHT = -30;
const POST_BLANK_WEIGHT = 6;
const RELATIVE_INDENT_PENALTY = -4;
const RELATIVE_INDENT_WITH_BLANK_PENALTY = 10;
const RELATIVE_OUTDENT_PENALTY = 24;
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17;
const RELATIVE_DEDENT_PENALTY = 23;
const RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17;
const INDENT_WEIGHT = 60;

/** One side of a diff as the compaction sees it. */
export interface CompactSide {
  /** Line ids (equal lines share an id). */
  ids: Int32Array;
  /** Changed marks, line `i` at index `i + 1`. */
  changed: Uint8Array;
  /** Indentation width of line `i` (-1 when blank), for the indent heuristic. */
  indentOf: (i: number) => number;
}

interface Group {
  start: number;
  end: number;
}

class GroupWalker {
  readonly n: number;
  constructor(readonly side: CompactSide) {
    this.n = side.ids.length;
  }
  isChanged(i: number): boolean {
    return this.side.changed[i + 1] === 1;
  }
  init(g: Group): void {
    g.start = g.end = 0;
    while (this.isChanged(g.end)) g.end++;
  }
  next(g: Group): boolean {
    if (g.end === this.n) return false;
    g.start = g.end + 1;
    for (g.end = g.start; this.isChanged(g.end); g.end++);
    return true;
  }
  previous(g: Group): boolean {
    if (g.start === 0) return false;
    g.end = g.start - 1;
    for (g.start = g.end; this.isChanged(g.start - 1); g.start--);
    return true;
  }
  slideDown(g: Group): boolean {
    const { ids, changed } = this.side;
    if (g.end < this.n && ids[g.start] === ids[g.end]) {
      changed[g.start + 1] = 0;
      g.start++;
      changed[g.end + 1] = 1;
      g.end++;
      while (this.isChanged(g.end)) g.end++;
      return true;
    }
    return false;
  }
  slideUp(g: Group): boolean {
    const { ids, changed } = this.side;
    if (g.start > 0 && ids[g.start - 1] === ids[g.end - 1]) {
      g.start--;
      changed[g.start + 1] = 1;
      g.end--;
      changed[g.end + 1] = 0;
      while (this.isChanged(g.start - 1)) g.start--;
      return true;
    }
    return false;
  }
}

function syncBroken(): never {
  throw new Error('diff compaction lost group sync (internal error)');
}

/** Compacts the changed groups of `side`, keeping `other`'s groups in step. */
export function compactChanges(side: CompactSide, other: CompactSide, indentHeuristic: boolean): void {
  const w = new GroupWalker(side);
  const wo = new GroupWalker(other);
  const g: Group = { start: 0, end: 0 };
  const go: Group = { start: 0, end: 0 };
  const indents = new Int16Array(w.n).fill(-2);
  const indentOf = (i: number): number => {
    let v = indents[i] as number;
    if (v === -2) {
      v = side.indentOf(i);
      indents[i] = v;
    }
    return v;
  };
  w.init(g);
  wo.init(go);

  for (;;) {
    if (g.end !== g.start) {
      let groupSize: number;
      let earliestEnd: number;
      let endMatchingOther: number;
      do {
        groupSize = g.end - g.start;
        endMatchingOther = -1;
        while (w.slideUp(g)) if (!wo.previous(go)) syncBroken();
        earliestEnd = g.end;
        if (go.end > go.start) endMatchingOther = g.end;
        for (;;) {
          if (!w.slideDown(g)) break;
          if (!wo.next(go)) syncBroken();
          if (go.end > go.start) endMatchingOther = g.end;
        }
      } while (groupSize !== g.end - g.start);

      if (g.end === earliestEnd) {
        // No sliding was possible.
      } else if (endMatchingOther !== -1) {
        while (go.end === go.start) {
          if (!w.slideUp(g)) syncBroken();
          if (!wo.previous(go)) syncBroken();
        }
      } else if (indentHeuristic) {
        let shift = earliestEnd;
        if (g.end - groupSize - 1 > shift) shift = g.end - groupSize - 1;
        if (g.end - MAX_SLIDING > shift) shift = g.end - MAX_SLIDING;
        let bestShift = -1;
        let bestIndent = 0;
        let bestPenalty = 0;
        for (; shift <= g.end; shift++) {
          const score = { indent: 0, penalty: 0 };
          addSplitScore(measureSplit(w.n, indentOf, shift), score);
          addSplitScore(measureSplit(w.n, indentOf, shift - groupSize), score);
          const cmp = INDENT_WEIGHT * (Number(score.indent > bestIndent) - Number(score.indent < bestIndent)) + (score.penalty - bestPenalty);
          if (bestShift === -1 || cmp <= 0) {
            bestIndent = score.indent;
            bestPenalty = score.penalty;
            bestShift = shift;
          }
        }
        while (g.end > bestShift) {
          if (!w.slideUp(g)) syncBroken();
          if (!wo.previous(go)) syncBroken();
        }
      }
    }
    if (!w.next(g)) break;
    if (!wo.next(go)) syncBroken();
  }
}

/** Indentation width of a line (tabs to multiples of 8), or -1 when it is blank. */
export function lineIndent(line: string): number {
  let ret = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x20) ret += 1;
    else if (c === 0x09) ret += 8 - (ret % 8);
    else if (c !== 0x0a && c !== 0x0d) return ret;
    if (ret >= MAX_INDENT) return MAX_INDENT;
  }
  return -1;
}

interface SplitMeasurement {
  endOfFile: boolean;
  indent: number;
  preBlank: number;
  preIndent: number;
  postBlank: number;
  postIndent: number;
}

function measureSplit(n: number, indentOf: (i: number) => number, split: number): SplitMeasurement {
  const m: SplitMeasurement = { endOfFile: false, indent: -1, preBlank: 0, preIndent: -1, postBlank: 0, postIndent: -1 };
  if (split >= n) m.endOfFile = true;
  else m.indent = indentOf(split);
  for (let i = split - 1; i >= 0; i--) {
    m.preIndent = indentOf(i);
    if (m.preIndent !== -1) break;
    m.preBlank++;
    if (m.preBlank === MAX_BLANKS) {
      m.preIndent = 0;
      break;
    }
  }
  for (let i = split + 1; i < n; i++) {
    m.postIndent = indentOf(i);
    if (m.postIndent !== -1) break;
    m.postBlank++;
    if (m.postBlank === MAX_BLANKS) {
      m.postIndent = 0;
      break;
    }
  }
  return m;
}

function addSplitScore(m: SplitMeasurement, s: { indent: number; penalty: number }): void {
  if (m.preIndent === -1 && m.preBlank === 0) s.penalty += START_OF_FILE_PENALTY;
  if (m.endOfFile) s.penalty += END_OF_FILE_PENALTY;
  const postBlank = m.indent === -1 ? 1 + m.postBlank : 0;
  const totalBlank = m.preBlank + postBlank;
  s.penalty += TOTAL_BLANK_WEIGHT * totalBlank;
  s.penalty += POST_BLANK_WEIGHT * postBlank;
  const indent = m.indent !== -1 ? m.indent : m.postIndent;
  const anyBlanks = totalBlank !== 0;
  s.indent += indent;
  if (indent === -1 || m.preIndent === -1) {
    // No adjustment.
  } else if (indent > m.preIndent) {
    s.penalty += anyBlanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY;
  } else if (indent === m.preIndent) {
    // No adjustment.
  } else if (m.postIndent !== -1 && m.postIndent > indent) {
    s.penalty += anyBlanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY;
  } else {
    s.penalty += anyBlanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY;
  }
}
