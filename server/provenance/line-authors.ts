/**
 * Carrying each line's author from one version of a file to the next with
 * the project's line diff: a line the diff keeps keeps its author, a line
 * it inserts gets the author of the change. This is what `git blame`
 * computes over a linear history, forwards; and the diff is the one
 * `git blame` runs (git's Myers diff with the indent heuristic, whatever
 * `diff.algorithm` says), so the answers are git blame's on the same
 * versions.
 */
import type { ByteLines } from '../../diff/byte-lines.js';
import { diffLines, type LineChange } from '../../diff/line-diff.js';

/** The line diff `git blame` runs between two versions. */
export function blameDiff(a: ByteLines, b: ByteLines): LineChange[] {
  return diffLines(a, b, { algorithm: 'myers' });
}
import type { LineAuthor } from '../../protocol/extensions/provenance.js';

/** A version's lines and who last wrote each. */
export interface BlamedLines {
  lines: ByteLines;
  /** Index into the {@link AuthorTable} for each line. */
  authors: Int32Array;
  /** 1 where an operation put the line back (its author is who wrote it before). */
  restored: Uint8Array;
}

/** Every author a file's lines name, each once. */
export class AuthorTable {
  readonly list: LineAuthor[] = [];
  private readonly index = new Map<string, number>();

  /** The author's index, added when new. */
  of(author: LineAuthor): number {
    const key = JSON.stringify(author);
    let found = this.index.get(key);
    if (found === undefined) {
      found = this.list.length;
      this.list.push(author);
      this.index.set(key, found);
    }
    return found;
  }
}

/** Lines of a version all written by one author (the first version, or after a version without lines). */
export function allBy(lines: ByteLines, author: number): BlamedLines {
  return { lines, authors: new Int32Array(lines.length).fill(author), restored: new Uint8Array(lines.length) };
}

/**
 * The next version's lines: kept lines keep their author and restored mark,
 * inserted lines get `author`. `inserted` marks which lines the change wrote.
 */
export function carry(prev: BlamedLines | undefined, next: ByteLines, author: number): { blamed: BlamedLines; inserted: Uint8Array } {
  const blamed = allBy(next, author);
  const inserted = new Uint8Array(next.length).fill(1);
  if (!prev || prev.lines.length === 0 || next.length === 0) return { blamed, inserted };
  let i = 0;
  let j = 0;
  const keep = (until: number): void => {
    for (; i < until; i++, j++) {
      blamed.authors[j] = prev.authors[i]!;
      blamed.restored[j] = prev.restored[i]!;
      inserted[j] = 0;
    }
  };
  for (const c of blameDiff(prev.lines, next)) {
    keep(c.oldStart);
    i = c.oldEnd;
    j = c.newEnd;
  }
  keep(prev.lines.length);
  return { blamed, inserted };
}

/**
 * Lines an operation wrote that an earlier version (`source`) held in the
 * same order take that version's authors, marked restored: the operation
 * put them back, it did not write them.
 */
export function restoreFrom(target: BlamedLines, inserted: Uint8Array, source: BlamedLines): void {
  if (source.lines.length === 0 || target.lines.length === 0) return;
  let i = 0;
  let j = 0;
  const take = (until: number): void => {
    for (; i < until; i++, j++) {
      if (inserted[j] !== 1) continue;
      target.authors[j] = source.authors[i]!;
      target.restored[j] = 1;
      inserted[j] = 0;
    }
  };
  for (const c of blameDiff(source.lines, target.lines)) {
    take(c.oldStart);
    i = c.oldEnd;
    j = c.newEnd;
  }
  take(source.lines.length);
}
