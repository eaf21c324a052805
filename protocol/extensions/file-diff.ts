/**
 * This server's file diffs (`changesetFileDiff`): what a client gets for one
 * file of a changeset. Not part of AHP; clients that do not call the method
 * lose nothing.
 */

/** Params of `changesetFileDiff`. */
export interface ChangesetFileDiffParams {
  /** The changeset URI. */
  channel: string;
  /** The `id` of one of the changeset's files. */
  fileId: string;
  /** Lines of context around each change; 3 when omitted. */
  context?: number;
  /**
   * The diff from the version of the file that was ticked "Viewed" to its
   * content now, instead of the changeset's own diff: for a file whose
   * `_meta.changedSinceViewed` is set (-32602 otherwise).
   */
  sinceViewed?: boolean;
}

/** How line bytes become strings: UTF-8 when the file is valid UTF-8, else one char per byte. */
export type LineEncoding = 'utf-8' | 'latin1';

/**
 * One hunk, in the shape jsdiff's `structuredPatch` produces (so jsdiff's
 * `formatPatch` and `applyPatch` accept it).
 */
export interface DiffHunk {
  /** 1-based number of the first old line the hunk covers; when `oldLines` is 0 it is the line the insertion precedes (the unified header prints one less, as git does). */
  oldStart: number;
  /** Number of old lines the hunk covers (context and removed). */
  oldLines: number;
  /** 1-based number of the first new line the hunk covers, with the same convention as `oldStart`. */
  newStart: number;
  /** Number of new lines the hunk covers (context and added). */
  newLines: number;
  /** Lines prefixed by ' ', '-' or '+', without terminators; the line `\ No newline at end of file` follows a line that has none. */
  lines: string[];
  /**
   * Today's file no longer holds this hunk's change: a Revert of it would
   * write nothing (it was reverted, or its lines were edited back). Only
   * on changes recorded in the past (turn, step, since, an ended
   * session's), as of when the diff was asked for.
   */
  reverted?: true;
}

/** The diff of one file, shaped like the DeepSeek workspace-changes plugin's `WorkspaceFileDiff`. */
export type WorkspaceFileDiff = TextFileDiff | BinaryFileDiff | OversizedFileDiff;

/** A file diffed line by line. */
export interface TextFileDiff {
  /** Discriminant. */
  kind: 'text';
  /** Whether the file exists in the old version. */
  before: boolean;
  /** Whether the file exists in the new version. */
  after: boolean;
  /** True only when a safety bound replaced the whole file instead of diffing it (never for files up to 1 MiB). */
  coarse: boolean;
  /** Lines added; equals `git diff --numstat` unless `coarse`. */
  added: number;
  /** Lines removed; equals `git diff --numstat` unless `coarse`. */
  removed: number;
  /** Unified hunks with the requested context, in file order. */
  hunks: DiffHunk[];
  /** How line bytes were decoded: UTF-8, or one char per byte when either side is not valid UTF-8. */
  encoding: LineEncoding;
}

/** A file with a NUL byte near its start on either side; no hunks. */
export interface BinaryFileDiff {
  /** Discriminant. */
  kind: 'binary';
  /** Whether the file exists in the old version. */
  before: boolean;
  /** Whether the file exists in the new version. */
  after: boolean;
  /** Old size in bytes, when the file exists in the old version. */
  beforeSize?: number;
  /** New size in bytes, when the file exists in the new version. */
  afterSize?: number;
}

/** A file larger than the configured limit on either side; no hunks. */
export interface OversizedFileDiff {
  /** Discriminant. */
  kind: 'oversized';
  /** Whether the file exists in the old version. */
  before: boolean;
  /** Whether the file exists in the new version. */
  after: boolean;
  /** Old size in bytes, when the file exists in the old version. */
  beforeSize?: number;
  /** New size in bytes, when the file exists in the new version. */
  afterSize?: number;
  /** The size limit in bytes that was exceeded. */
  limit: number;
}
