/**
 * The file list as the viewer shows it: files sorted by display path and
 * grouped under directory headers, flattened into rows so a virtual list can
 * render any slice of them.
 */
import type { ChangesetFile, ChangesetState } from '../../protocol/index.js';
import type { ChangesetFileMeta } from '../../protocol/extensions/changeset-file.js';

/** What the viewer reads from `ChangesetFile._meta`; every field may be missing from other servers. */
export type FileMeta = Partial<ChangesetFileMeta>;

/** A directory header row. */
export interface DirRow {
  /** Discriminant. */
  type: 'dir';
  /** Directory path (`''` for top-level files). */
  dir: string;
  /** Files listed under it. */
  count: number;
}

/** A file row. */
export interface FileRow {
  /** Discriminant. */
  type: 'file';
  /** The changeset file. */
  file: ChangesetFile;
  /** Its display path. */
  path: string;
  /** The last path segment. */
  name: string;
  /** Its change kind (added, modified, …). */
  kind: string;
  /** Lines added, when known. */
  added: number | undefined;
  /** Lines removed, when known. */
  removed: number | undefined;
  /** The server's `_meta`. */
  meta: FileMeta;
}

/** One row of the file list. */
export type Row = DirRow | FileRow;

/** The display path of a file: `_meta.path`, else derived from its URI. */
export function displayPathOf(file: ChangesetFile): string {
  const meta = (file._meta ?? {}) as FileMeta;
  if (typeof meta.path === 'string' && meta.path.length > 0) return meta.path;
  try {
    return decodeURIComponent(new URL(file.id).pathname);
  } catch {
    return file.id;
  }
}

/** The change kind of a file: `_meta.kind`, else inferred from which sides exist. */
export function kindOf(file: ChangesetFile): string {
  const meta = (file._meta ?? {}) as FileMeta;
  if (typeof meta.kind === 'string') return meta.kind;
  if (!file.edit.before) return 'added';
  if (!file.edit.after) return 'deleted';
  return file.edit.before.uri !== file.edit.after.uri ? 'renamed' : 'modified';
}

function splitPath(path: string): { dir: string; name: string } {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? { dir: '', name: path } : { dir: path.slice(0, slash), name: path.slice(slash + 1) };
}

// Code-unit order, as the server sorts display paths (so the viewer agrees with summaries).
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A file row of `file`: its display path split, its kind and counts. */
export function fileRow(file: ChangesetFile): FileRow {
  const path = displayPathOf(file);
  return {
    type: 'file',
    file,
    path,
    name: splitPath(path).name,
    kind: kindOf(file),
    added: file.edit.diff?.added,
    removed: file.edit.diff?.removed,
    meta: (file._meta ?? {}) as FileMeta,
  };
}

/** Files in list order: by directory, then name. */
export function sortFiles(files: readonly ChangesetFile[]): ChangesetFile[] {
  const entries = files.map((file) => ({ file, ...splitPath(displayPathOf(file)) }));
  entries.sort((x, y) => compare(x.dir, y.dir) || compare(x.name, y.name));
  return entries.map((e) => e.file);
}

/** Grouped rows of file rows already in list order. */
export function groupRows(sorted: readonly FileRow[]): Row[] {
  const rows: Row[] = [];
  let header: DirRow | undefined;
  for (const row of sorted) {
    const dir = row.path.slice(0, Math.max(0, row.path.length - row.name.length - 1));
    if (!header || header.dir !== dir) {
      header = { type: 'dir', dir, count: 0 };
      rows.push(header);
    }
    header.count += 1;
    rows.push(row);
  }
  return rows;
}

/** Sorted, grouped rows of a changeset's files. */
export function buildRows(files: readonly ChangesetFile[]): Row[] {
  return groupRows(sortFiles(files).map(fileRow));
}

/** File, addition and deletion totals of a changeset, including files the server left out of a truncated list. */
export interface Counts {
  /** Changed files. */
  files: number;
  /** Lines added. */
  additions: number;
  /** Lines deleted. */
  deletions: number;
  /** The state lists fewer files than `files`. */
  truncated: boolean;
}

/** Totals of a changeset state. */
export function countsOf(state: ChangesetState): Counts {
  const meta = (state._meta ?? {}) as { totalFiles?: unknown; additions?: unknown; deletions?: unknown; truncated?: unknown };
  let additions = 0;
  let deletions = 0;
  for (const f of state.files) {
    additions += f.edit.diff?.added ?? 0;
    deletions += f.edit.diff?.removed ?? 0;
  }
  return {
    files: typeof meta.totalFiles === 'number' ? meta.totalFiles : state.files.length,
    additions: typeof meta.additions === 'number' ? meta.additions : additions,
    deletions: typeof meta.deletions === 'number' ? meta.deletions : deletions,
    truncated: meta.truncated === true && typeof meta.totalFiles === 'number' && state.files.length < meta.totalFiles,
  };
}
