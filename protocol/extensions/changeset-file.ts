/**
 * What this server puts in `ChangesetFile._meta` for each file of a
 * changeset. Clients that do not read it lose nothing: AHP's own fields
 * carry the file, its URIs and its line counts.
 */

/** How a file changed: `mode` when only the executable bit or the file type did. */
export type ChangeKindName = 'added' | 'modified' | 'deleted' | 'renamed' | 'mode';

/** Why a side's content could not be read when it was recorded. */
export type UnreadReason = 'unreadable' | 'oversized' | 'not-a-file';

/** What `ChangesetFile._meta` carries for each file. */
export interface ChangesetFileMeta {
  /** The label a reviewer sees (relative to the working directory, `../`, `~/` or absolute). */
  path: string;
  /** added, modified, deleted, renamed or mode (only the executable bit or file type changed). */
  kind: ChangeKindName;
  /** Display path before a rename. */
  oldPath?: string;
  /** Rename similarity in [0, 1]. */
  similarity?: number;
  /** Either side is binary: no line counts, no hunks. */
  binary?: boolean;
  /** Either side is over the size limit: no line counts, no hunks. */
  oversized?: boolean;
  /** Object id (git blob id) of each side. */
  beforeOid?: string;
  afterOid?: string;
  /** SHA-256 (hex) of each side's content. */
  beforeSha256?: string;
  afterSha256?: string;
  /** Git mode of each side. */
  beforeMode?: string;
  afterMode?: string;
  /**
   * Why a side's file could not be read when its state was recorded
   * (`unreadable`, `oversized`, `not-a-file`): the side holds the content
   * last read, not what the file held then.
   */
  beforeUnread?: UnreadReason;
  afterUnread?: UnreadReason;
  /** Index of the working directory the file belongs to (-1: outside every one). */
  root: number;
  /** Captured by `beforeEdit` because snapshots do not see this path (ignored or outside). */
  captured?: boolean;
  /** The captured path now leads outside the working directories (a folder on its way links elsewhere): its new side was not read. */
  leftWorkingDirectory?: true;
  /**
   * The name of the filter driver git runs on this file when adding it
   * (`filter=<name>` with `filter.<name>.clean` or `.process` configured,
   * other than LFS), which this server does not run: what it records of the
   * file is the bytes as saved, while git stores the filter's output (a
   * file whose stat data matches the index takes the index's version). See
   * docs/snapshot.md.
   */
  filterNotRun?: string;
  /**
   * The file was ticked "Viewed" in this changeset at another content than
   * it has now (a later turn or an edit changed it): the tick is gone, and
   * `changesetFileDiff` with `sinceViewed: true` gives the diff between the
   * version viewed and now. Gone once the file is ticked again or unticked.
   */
  changedSinceViewed?: true;
}
