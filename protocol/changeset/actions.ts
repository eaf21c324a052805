/** Changeset channel actions (`changeset/*`). The schema defines exactly these eight. */

import type { ErrorInfo, Meta } from '../common/state.js';
import type { ChangesetFile, ChangesetOperation, ChangesetOperationStatus, ChangesetStatus } from './state.js';

/** `status` transitioned; `error` accompanies a transition to `error` and is dropped otherwise. */
export interface ChangesetStatusChangedAction {
  /** Discriminant. */
  type: 'changeset/statusChanged';
  /** New computation status. */
  status: ChangesetStatus;
  /** Cause when `status` is `error`; otherwise omitted. */
  error?: ErrorInfo;
}

/** Upsert one file: replaces the entry with the same id in place, or appends it. */
export interface ChangesetFileSetAction {
  /** Discriminant. */
  type: 'changeset/fileSet';
  /** The new or replacement file entry. */
  file: ChangesetFile;
}

/** Remove one file by id; no-op for unknown ids. */
export interface ChangesetFileRemovedAction {
  /** Discriminant. */
  type: 'changeset/fileRemoved';
  /** The {@link ChangesetFile.id} to remove. */
  fileId: string;
}

/** Set `reviewed` on every listed file that is present; the only client-dispatchable changeset action. */
export interface ChangesetFilesReviewChangedAction {
  /** Discriminant. */
  type: 'changeset/filesReviewChanged';
  /** Ids of the files whose review state changes; unknown ids are ignored. */
  files: string[];
  /** `true` marks the files reviewed, `false` clears the flag. */
  reviewed: boolean;
}

/** Full replacement of `files`, and of `operations` when present; `error` replaces or clears the error. */
export interface ChangesetContentChangedAction {
  /** Discriminant. */
  type: 'changeset/contentChanged';
  /** Full replacement file list. */
  files: ChangesetFile[];
  /** Full replacement operation list; omit when operations are unchanged. */
  operations?: ChangesetOperation[];
  /** Error details; omitting it clears any previous error. */
  error?: ErrorInfo;
  /**
   * Server metadata replacing `ChangesetState._meta` (this server's extension:
   * totals when the file list is truncated); omitting it clears it.
   */
  _meta?: Meta;
}

/** Full replacement of the operation list; `undefined` removes it. */
export interface ChangesetOperationsChangedAction {
  /** Discriminant. */
  type: 'changeset/operationsChanged';
  /** The new operation list, or `undefined` (key omitted on the wire) to clear it. */
  operations: ChangesetOperation[] | undefined;
}

/** One operation's status transitioned; no-op when the operation id is unknown. */
export interface ChangesetOperationStatusChangedAction {
  /** Discriminant. */
  type: 'changeset/operationStatusChanged';
  /** The {@link ChangesetOperation.id} whose status changed. */
  operationId: string;
  /** New execution status. */
  status: ChangesetOperationStatus;
  /** Cause when `status` is `error`; dropped on any other transition. */
  error?: ErrorInfo;
}

/** Drop every file (source moved, or the owning session ended). */
export interface ChangesetClearedAction {
  /** Discriminant. */
  type: 'changeset/cleared';
}

/** Every action the changeset reducer handles. */
export type ChangesetAction =
  | ChangesetStatusChangedAction
  | ChangesetFileSetAction
  | ChangesetFileRemovedAction
  | ChangesetFilesReviewChangedAction
  | ChangesetContentChangedAction
  | ChangesetOperationsChangedAction
  | ChangesetOperationStatusChangedAction
  | ChangesetClearedAction;

/** The `type` of every changeset action. */
export type ChangesetActionType = ChangesetAction['type'];

/** Changeset actions a client may dispatch with `dispatchAction`. */
export type ClientChangesetAction = ChangesetFilesReviewChangedAction;
