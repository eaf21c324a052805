/**
 * Search occurrences marked where the diff is drawn, in both layouts: the
 * code cells on screen are walked after every draw and each occurrence
 * becomes a range of the CSS Custom Highlight API (`::highlight(search-match)`,
 * the current one `::highlight(search-current)`), painted over the line
 * colours without touching the page's elements. A line wrapped over several
 * rows of the review page is followed from row to row, so an occurrence
 * across the cut is marked on both.
 */
import type { FileMatches, LineMatch } from './matches.js';

/** The highlight registry, where the browser has one. */
function registry(): HighlightRegistry | undefined {
  return typeof CSS !== 'undefined' && 'highlights' in CSS ? CSS.highlights : undefined;
}

/** Takes every search mark off the page. */
export function clearMarks(): void {
  const reg = registry();
  reg?.delete('search-match');
  reg?.delete('search-current');
}

/** The text nodes of a code cell that hold the line's text (not its +/− sign or the no-newline mark), with their lengths. */
function textNodes(cell: Element): { nodes: Text[]; length: number } {
  const nodes: Text[] = [];
  let length = 0;
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent?.closest('.sign, .no-newline')) continue;
    nodes.push(node as Text);
    length += (node as Text).data.length;
  }
  return { nodes, length };
}

/** A range over characters `from`–`to` of a cell's text nodes. */
function rangeOf(nodes: readonly Text[], from: number, to: number): Range | undefined {
  const range = document.createRange();
  let at = 0;
  let started = false;
  for (const node of nodes) {
    const end = at + node.data.length;
    if (!started && from < end) {
      range.setStart(node, from - at);
      started = true;
    }
    if (started && to <= end) {
      range.setEnd(node, to - at);
      return range;
    }
    at = end;
  }
  return undefined;
}

/**
 * The code cells of one drawn file, each with the line it shows and where
 * in that line its text starts. `rows` are the file's drawn rows in order:
 * a cell after a numbered one in the same column continues its line.
 */
function* cellsOf(rows: Iterable<Element>): Generator<{ cell: Element; key: string; offset: number; nodes: Text[]; length: number }> {
  /** Per column of code cells in a row (0, or 1 for the new side of a side-by-side row): the line and how far into it. */
  const column: ({ key: string; offset: number } | undefined)[] = [];
  for (const row of rows) {
    let nums: Element[] = [];
    let col = 0;
    let any = false;
    for (const cell of row.children) {
      if (cell.classList.contains('num')) {
        nums.push(cell);
        continue;
      }
      if (!cell.classList.contains('code')) continue;
      any = true;
      const kind = cell.classList.contains('del') ? 'L' : 'R';
      const numbered = nums.filter((n) => n.hasAttribute('data-line'));
      const num = numbered.find((n) => n.getAttribute('data-line')![0] === kind) ?? numbered[0];
      nums = [];
      if (num) column[col] = { key: num.getAttribute('data-line')!, offset: 0 };
      const line = cell.classList.contains('empty') ? undefined : column[col];
      col++;
      if (!line) continue;
      const { nodes, length } = textNodes(cell);
      yield { cell, key: line.key, offset: line.offset, nodes, length };
      line.offset += length;
    }
    // Hunk headers, gaps and notes end whatever line came before.
    if (!any) column.length = 0;
  }
}

/**
 * Marks the occurrences in the drawn rows of one file; returns the element
 * of the row that shows the current occurrence, when it is drawn.
 */
export function markFile(
  rows: Iterable<Element>,
  found: FileMatches,
  current: LineMatch | undefined,
  into: { all: Range[]; current: Range[] },
): Element | undefined {
  let currentRow: Element | undefined;
  for (const { cell, key, offset, nodes, length } of cellsOf(rows)) {
    const line = found.byLine.get(key);
    if (!line) continue;
    for (const m of line) {
      const from = Math.max(m.start, offset) - offset;
      const to = Math.min(m.end, offset + length) - offset;
      if (from >= to) continue;
      const range = rangeOf(nodes, from, to);
      if (!range) continue;
      if (m === current) {
        into.current.push(range);
        currentRow ??= cell.parentElement ?? undefined;
      } else into.all.push(range);
    }
  }
  return currentRow;
}

/** Puts the ranges on the page as the two highlights. */
export function paintMarks(ranges: { all: Range[]; current: Range[] }): void {
  const reg = registry();
  if (!reg) return;
  reg.set('search-match', new Highlight(...ranges.all));
  reg.set('search-current', new Highlight(...ranges.current));
}
