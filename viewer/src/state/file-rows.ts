/**
 * The open changeset's files as the list and the review page show them:
 * sorted, grouped and filtered rows, built once per files array and filter
 * (the reducers keep the array immutable, so a new one means a change), and
 * the neighbour that takes the selection when the selected file leaves the
 * changeset (reverted, discarded).
 */
import type { ChangesetFile } from '../../../protocol/index.js';
import { fileRow, groupRows, sortFiles, type FileRow, type Row } from '../files-model.js';
import { NO_FILTER, passes, type FileFilter } from '../review/filter.js';

/** Memoised rows, and the rows last drawn. */
export class FileRows {
  private cache: { files: readonly ChangesetFile[]; filter: FileFilter; rows: Row[] } | undefined;
  private drawn: Row[] = [];
  /**
   * The last files in list order: their ids in the order given, the
   * position of each in list order, and each one's row and lower-cased path
   * (in list order). The same ids in the same order (a review tick, a
   * count: new objects, same files) keep the order and every row whose file
   * is the same object, so 50,000 files are not sorted again for one tick.
   */
  private order: { ids: string[]; at: number[]; rows: FileRow[]; lowered: (string | undefined)[] } | undefined;

  /** The rows of `files` that pass `filter`. */
  of(files: readonly ChangesetFile[], filter: FileFilter): Row[] {
    if (this.cache?.files !== files || this.cache.filter !== filter) {
      const order = this.ordered(files);
      let shown = order.rows;
      if (filter !== NO_FILTER) {
        const text = filter.text.toLowerCase();
        const rest: FileFilter = { ...filter, text: '' };
        shown = order.rows.filter((row, k) => {
          if (text && !(order.lowered[k] ??= row.path.toLowerCase()).includes(text)) return false;
          return passes(row.file, rest);
        });
      }
      this.cache = { files, filter, rows: groupRows(shown) };
    }
    return this.cache.rows;
  }

  private ordered(files: readonly ChangesetFile[]): NonNullable<FileRows['order']> {
    const last = this.order;
    if (last && last.ids.length === files.length && files.every((f, i) => f.id === last.ids[i])) {
      for (let k = 0; k < last.at.length; k++) {
        const file = files[last.at[k]!]!;
        if (last.rows[k]!.file !== file) last.rows[k] = fileRow(file);
      }
      return last;
    }
    const at = new Map(files.map((f, i) => [f, i]));
    const sorted = sortFiles(files);
    this.order = { ids: files.map((f) => f.id), at: sorted.map((f) => at.get(f)!), rows: sorted.map(fileRow), lowered: [] };
    return this.order;
  }

  /** Remembers the rows last drawn, to pick a neighbour when the selected file disappears. */
  note(rows: Row[]): void {
    this.drawn = rows;
  }

  /** The file after `id` in the rows last drawn that is still in `files`, else the one before; undefined when none is. */
  neighbourOf(id: string, files: readonly ChangesetFile[]): string | undefined {
    const old = this.drawn.filter((r) => r.type === 'file').map((r) => r.file.id);
    const at = old.indexOf(id);
    const present = new Set(files.map((f) => f.id));
    return (
      old.slice(at + 1).find((f) => present.has(f)) ??
      old
        .slice(0, Math.max(0, at))
        .reverse()
        .find((f) => present.has(f))
    );
  }
}
