import type { UnreadReason } from '../snapshot/walker.js';
import type { ObjectStore } from '../store/types.js';
import type { ChangeKindName } from '../../protocol/extensions/changeset-file.js';

/** Git modes as they appear in trees. */
export type GitMode = '100644' | '100755' | '120000' | '160000';

/** One side of a changed file: the object holding its content and its mode. */
export interface BlobRef {
  /** Object id of the content (a commit id for gitlinks). */
  oid: string;
  /** Git mode of the entry. */
  mode: GitMode;
  /** Where the object can be read. */
  store: ObjectStore;
  /**
   * Content was not stored: the file is over the size limit, or (with
   * `unread` and an empty `oid`) it was present but never read.
   */
  oversized?: boolean;
  /** Size in bytes when known without reading the object. */
  size?: number;
  /**
   * The file on disk could not be read when this state was recorded
   * (`unreadable`, `oversized`, `not-a-file`): `oid` is the content last
   * read, not what the file holds now. Operations skip such a file.
   */
  unread?: UnreadReason;
}

export type { ChangeKindName };

/** One changed file between two recorded states of a session. */
export interface FileChange {
  /** What happened to the file. */
  kind: ChangeKindName;
  /** Index of the session's working directory the file belongs to; -1 for captures outside every one. */
  root: number;
  /** Path relative to that working directory, `/`-separated (the new path for renames). */
  path: string;
  /** Absolute path of the file on disk (the new path for renames). */
  absPath: string;
  /** Path before a rename, relative like `path`. */
  oldPath?: string;
  /** Absolute path before a rename. */
  oldAbsPath?: string;
  /** Content before; absent when the file was added. */
  before?: BlobRef;
  /** Content after; absent when the file was deleted. */
  after?: BlobRef;
  /** Rename similarity in [0, 1], for renames. */
  similarity?: number;
  /** The path is outside what snapshots see and was captured by `beforeEdit`. */
  captured?: boolean;
  /** A captured path that now leads outside the working directories: its new side was not read (operations over it are refused while it leads outside). */
  leftWorkingDirectory?: true;
}

/** Classifies a path's change from its two sides (renames are paired later). */
export function classify(before: BlobRef | undefined, after: BlobRef | undefined): ChangeKindName | undefined {
  if (!before && !after) return undefined;
  if (!before) return 'added';
  if (!after) return 'deleted';
  if (before.oid === after.oid) return before.mode === after.mode ? undefined : 'mode';
  return 'modified';
}
