/** Syntax tokens of diff lines (filled in by the highlighter). */
import type { Token } from '../code-cell.js';
import type { DiffLine } from '../diff-model.js';

/** The tokens of a line, once highlighted. */
export function tokensOf(_line: DiffLine): readonly Token[] | undefined {
  return undefined;
}
