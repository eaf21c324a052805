/**
 * This server's `fileHistory`: every turn and step of a session that
 * changed one file, oldest first, each with the file's version before and
 * after it. Not part of AHP; clients that do not call the method lose
 * nothing.
 */
import type { ChangeKindName } from './changeset-file.js';

/** Params of `fileHistory`. */
export interface FileHistoryParams {
  /** The session URI (`ahp-session:/<id>`). */
  session: string;
  /** The file: a `file:` URI, an absolute path, or a path relative to the session's first working directory. */
  path: string;
  /** Most entries answered, the newest kept (default and upper bound 500). */
  limit?: number;
}

/** One turn, or one step of a turn, that changed the file. */
export interface FileHistoryEntry {
  /** The turn's number as people see it (1 for the first turn of the session). */
  turn: number;
  /** The turn's id, to name its changeset. */
  turnId: string;
  /** The step (tool call) of the turn that made the change, from 1; absent when the change came before the turn's first step or the turn has no steps. */
  step?: number;
  /** The tool of that step, when the harness named it. */
  tool?: string;
  /** When the turn (or step) began, ISO 8601. */
  at: string;
  /** What happened to the file: added, modified, deleted, or mode (only the executable bit or file type). */
  kind: ChangeKindName;
  /** Lines added and removed by this change (0 for binary files). */
  added: number;
  removed: number;
  /** The content before and after (git blob ids), absent where the file did not exist. */
  beforeOid?: string;
  afterOid?: string;
  /** Either side is binary. */
  binary?: true;
  /**
   * The file held something else at the start of this change than the
   * previous entry left: edits no turn made (by the user) came between.
   */
  editedBefore?: true;
  /** The changeset this change is the file's diff in: the turn's, or the step's. */
  changeset: string;
  /** The file's id in that changeset (for `changesetFileDiff`). */
  fileId: string;
}

/** Result of `fileHistory`. */
export interface FileHistoryResult {
  /** The file as reviewers see it named. */
  path: string;
  /** The changes, oldest first. */
  entries: FileHistoryEntry[];
  /** Older entries were left out to keep the answer within `limit`. */
  truncated?: true;
}
