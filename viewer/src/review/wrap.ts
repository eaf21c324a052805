/**
 * Long lines on the review page, wrapped into rows one line tall. The page
 * places files by counting rows, so the browser cannot be left to wrap a
 * line into a taller row: a line wider than the code column is cut here,
 * by display columns of the monospace font, into parts that each fit.
 * A tab is counted as the most it can advance (8 columns), East Asian wide
 * characters and emoji as two, combining marks as none, so a part is never
 * wider than its column; a surrogate pair is never split. A part ends after
 * the last space in its second half when there is one, so words stay whole.
 */

/** Columns between tab stops (CSS `tab-size` default): the most a tab advances. */
const TAB = 8;

/** Characters that may take more (or less) than one column: tabs, and everything from Hangul Jamo up, surrogates included. */
const MAYBE_WIDE = /[\t\u1100-\uffff]/;

/** Where one part of a wrapped line starts and ends, in UTF-16 code units. */
export interface LinePart {
  from: number;
  to: number;
}

/** Display columns of a code point in a monospace font. */
function widthOf(cp: number): number {
  if (cp >= 0x300 && cp <= 0x36f) return 0;
  if (cp === 0x200b || cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (cp < 0x1100) return 1;
  if (
    cp <= 0x115f ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Cuts `text` into parts of at most `columns` display columns (at least a tab's); a line that fits is one part. */
export function wrapLine(text: string, columns: number): LinePart[] {
  const limit = Math.max(TAB, Math.floor(columns));
  // Most lines fit: no wider than the column, with no tab and nothing wider than one column (or a surrogate).
  if (text.length <= limit && !MAYBE_WIDE.test(text)) return [{ from: 0, to: text.length }];
  const parts: LinePart[] = [];
  let from = 0;
  let col = 0;
  /** Just after the last space in the current part, and the column there. */
  let space = -1;
  let spaceCol = 0;
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    const width = cp === 9 ? TAB : widthOf(cp);
    if (col + width > limit && i > from) {
      // Break after the last space if it is past the middle of the part, else here.
      const at = space > from && spaceCol * 2 >= limit ? space : i;
      parts.push({ from, to: at });
      col = at === i ? 0 : col - spaceCol;
      from = at;
      space = -1;
      continue;
    }
    col += width;
    i += units;
    if (cp === 32 || cp === 9) {
      space = i;
      spaceCol = col;
    }
  }
  parts.push({ from, to: text.length });
  return parts;
}
