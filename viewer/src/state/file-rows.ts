/**
 * The open changeset's files as the list and the review page show them:
 * sorted, grouped and filtered rows, built once per files array and filter
 * (the reducers keep the array immutable, so a new one means a change), and
 * the neighbour that takes the selection when the selected file leaves the
 * changeset (reverted, discarded).
 */
import type { ChangesetFile } from '../../../protocol/index.js';
import { buildRows, type Row } from '../files-model.js';
import { NO_FILTER, passes, type FileFilter } from '../review/filter.js';

/** Memoised rows, and the rows last drawn. */
export class FileRows {
  private cache: { files: readonly ChangesetFile[]; filter: FileFilter; rows: Row[] } | undefined;
  private drawn: Row[] = [];

  /** The rows of `files` that pass `filter`. */
  of(files: readonly ChangesetFile[], filter: FileFilter): Row[] {
    if (this.cache?.files !== files || this.cache.filter !== filter) {
      this.cache = { files, filter, rows: buildRows(filter === NO_FILTER ? files : files.filter((f) => passes(f, filter))) };
    }
    return this.cache.rows;
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
