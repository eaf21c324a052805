/**
 * What this server adds to AHP's `invokeChangesetOperation`: options in
 * the params' `_meta`, what was done in the result's `_meta`, and the
 * conflicts a refused operation lists in its error's `data`. Clients that
 * do not read them still get AHP's `message`.
 */
import type { InvokeChangesetOperationParams, InvokeChangesetOperationResult } from '../changeset/commands.js';

/** What the params' `_meta` of `invokeChangesetOperation` may carry. */
export interface OperationInvocationMeta {
  /** When true, nothing is written: the result says what would change. */
  dryRun?: boolean;
  /** For `restore-checkpoint` on a turn's changeset: restore to just before the turn's n-th tool call, counted from 1. */
  step?: number;
  /** For a session brought in by `import`: also create symbolic links that point outside the working directory, which are skipped otherwise. */
  allowOutsideSymlinks?: boolean;
}

/** `invokeChangesetOperation` params with this server's `_meta`. */
export interface InvokeOperationParams extends InvokeChangesetOperationParams {
  /** Options of this server; see {@link OperationInvocationMeta}. */
  _meta?: OperationInvocationMeta;
}

/** A file an operation left alone or could not write, and why. */
export interface OperationPathReason {
  /** The file, as shown to the user. */
  path: string;
  /** Why, in words for the user. */
  reason: string;
}

/** The result's `_meta` of an operation that ran. */
export interface OperationDoneMeta {
  /** The timeline's line for what was done, such as "Reverted turn 2". */
  action: string;
  /** The files it wrote, as shown to the user. */
  files: string[];
  /** Files it left alone on purpose, such as those outside the working directories. */
  skipped?: OperationPathReason[];
  /** Files it wrote that held edits no turn made (present when there were any); see {@link OperationDryRunMeta.userEdits}. */
  userEdited?: string[];
  /** The same files, each with when those edits were made and what became of them. */
  userEdits?: OperationPathReason[];
}

/** The result's `_meta` of a dry run: what the operation would do. */
export interface OperationDryRunMeta {
  /** Always true: nothing was written. */
  dryRun: true;
  /** The files it would write, create or delete. */
  files: { path: string; action: 'write' | 'create' | 'delete' }[];
  /** Files already as the operation wants them. */
  unchanged: string[];
  /** Files it would leave alone on purpose, and why. */
  skipped: OperationPathReason[];
  /** Files changed since, which stop it; a real run is refused with these. */
  conflicts: OperationPathReason[];
  /**
   * Files it would write that hold edits no turn made: made before the
   * first turn, between two turns, after the last turn, or after the session
   * ended. A restore overwrites them; a revert keeps those made after the
   * changeset's end (it merges around them) and reverts the others with the
   * rest. `undo` brings them back either way.
   */
  userEdited: string[];
  /**
   * The same files, each with when those edits were made and what the
   * operation does with them, in words: "edited between turn 1 and turn 2:
   * overwritten, undo brings it back".
   */
  userEdits: OperationPathReason[];
}

/** `invokeChangesetOperation` result with this server's `_meta`. */
export interface InvokeOperationResult extends InvokeChangesetOperationResult {
  /** What was done, or for a dry run what would be done. */
  _meta?: OperationDoneMeta | OperationDryRunMeta;
}

/** The `data` of the error answering an operation refused because files changed since it was offered. */
export interface OperationConflictData {
  /** Every file that changed, with the reason. */
  conflicts: OperationPathReason[];
}
