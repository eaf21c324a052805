/**
 * Line splitting and interning. Lines keep their terminator, so a last line
 * without a trailing newline never equals the same text with one (git prints
 * `\ No newline at end of file` for exactly that difference), and joining the
 * lines gives back the input unchanged.
 */

/** Splits text into lines that keep their `\n` (and any `\r` before it). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    lines.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** Two line sequences mapped to small integers: equal lines share one id. */
export interface InternedLines {
  /** Ids of the old side's lines, in order. */
  a: Int32Array;
  /** Ids of the new side's lines, in order. */
  b: Int32Array;
  /** Number of distinct ids; every id is below this. */
  idCount: number;
}

/** Maps each distinct line to an integer so the algorithms compare numbers, not strings. */
export function internLines(a: readonly string[], b: readonly string[]): InternedLines {
  const ids = new Map<string, number>();
  const map = (lines: readonly string[]): Int32Array => {
    const out = new Int32Array(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      let id = ids.get(line);
      if (id === undefined) {
        id = ids.size;
        ids.set(line, id);
      }
      out[i] = id;
    }
    return out;
  };
  const ia = map(a);
  const ib = map(b);
  return { a: ia, b: ib, idCount: ids.size };
}

/** Whether a line ends with a newline (only the last line of a file may not). */
export function hasNewline(line: string): boolean {
  return line.endsWith('\n');
}
