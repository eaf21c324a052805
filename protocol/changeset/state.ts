/** Changeset channel state (`ahp-changeset:/<id>`), AHP 0.6 `guide/changesets.md`. */

import type { ErrorInfo, FileEdit, Meta, StringOrMarkdown } from '../common/state.js';

/** Computation lifecycle of a {@link ChangesetState}. */
export const ChangesetStatus = {
  /** Files are still being computed. */
  Computing: 'computing',
  /** `files` is complete and current. */
  Ready: 'ready',
  /** Computation failed; `error` says why. */
  Error: 'error',
} as const;
/** One of the {@link ChangesetStatus} values. */
export type ChangesetStatus = (typeof ChangesetStatus)[keyof typeof ChangesetStatus];

/** Where a {@link ChangesetOperation} can be invoked. */
export const ChangesetOperationScope = {
  /** On the whole changeset (no target). */
  Changeset: 'changeset',
  /** On one file (`target.kind === 'resource'`). */
  Resource: 'resource',
  /** On a line range of one file (`target.kind === 'range'`). */
  Range: 'range',
} as const;
/** One of the {@link ChangesetOperationScope} values. */
export type ChangesetOperationScope = (typeof ChangesetOperationScope)[keyof typeof ChangesetOperationScope];

/** Execution lifecycle of a {@link ChangesetOperation}. */
export const ChangesetOperationStatus = {
  /** Ready to be invoked. */
  Idle: 'idle',
  /** An invocation is in flight. */
  Running: 'running',
  /** The most recent invocation failed; `error` says why. */
  Error: 'error',
  /** The operation cannot currently be invoked. */
  Disabled: 'disabled',
} as const;
/** One of the {@link ChangesetOperationStatus} values. */
export type ChangesetOperationStatus = (typeof ChangesetOperationStatus)[keyof typeof ChangesetOperationStatus];

/** Presence-flag capabilities a changeset advertises on its catalogue entry. */
export interface ChangesetCapabilities {
  /** Present (as `{}`) when the changeset supports the per-file review ("Viewed") workflow. */
  review?: { [key: string]: unknown };
}

/** Well-known `changeKind` hints; other values are allowed and must be tolerated. */
export const ChangeKind = {
  /** Everything the agent changed since the session began. */
  Session: 'session',
  /** Changes relative to the merge-base with a base branch. */
  Branch: 'branch',
  /** The workspace's uncommitted changes (HEAD to working tree). */
  Uncommitted: 'uncommitted',
  /** Changes made by a single turn (`{turnId}` template). */
  Turn: 'turn',
  /** Difference between two turns (`{originalTurnId}`, `{modifiedTurnId}`). */
  CompareTurns: 'compare-turns',
} as const;

/** Catalogue entry for one changeset a session can produce, carried on `SessionState.changesets`. */
export interface Changeset {
  /** Human-readable label, e.g. `Uncommitted Changes`. */
  label: string;
  /** RFC 6570 URI template; expanding it gives the subscribable `ahp-changeset:` URI. */
  uriTemplate: string;
  /** Optional longer description. */
  description?: string;
  /** Advisory kind hint such as those in {@link ChangeKind}; unknown values are allowed. */
  changeKind: string;
  /** Optional capabilities; absent means none (e.g. not reviewable). */
  capabilities?: ChangesetCapabilities;
}

/** One file entry within a changeset. */
export interface ChangesetFile {
  /** Stable id within the changeset: `after.uri`, or `before.uri` for deletions. */
  id: string;
  /** Before/after URIs, content references and line counts of the change. */
  edit: FileEdit;
  /** The reviewer's "Viewed" flag; absent means not reviewed. */
  reviewed?: boolean;
  /** Server-defined metadata (display path, change kind, binary/oversized flags, hashes, modes). */
  _meta?: Meta;
}

/** A server-declared verb (e.g. revert) clients invoke with `invokeChangesetOperation`. */
export interface ChangesetOperation {
  /** Stable id, unique within the changeset. */
  id: string;
  /** Human-readable button or menu label. */
  label: string;
  /** Optional longer description for tooltips. */
  description?: string;
  /** The target kinds this operation accepts. */
  scopes: ChangesetOperationScope[];
  /** When present, clients must confirm with the user (showing this text) before invoking; marks destructive operations. */
  confirmation?: StringOrMarkdown;
  /** Optional generic icon hint, e.g. `discard`. */
  icon?: string;
  /** Optional group id used to cluster related operations. */
  group?: string;
  /** Current execution status, kept in sync through `changeset/operationStatusChanged`. */
  status: ChangesetOperationStatus;
  /** Cause of the last failure; present only while `status` is `error`. */
  error?: ErrorInfo;
}

/** Full state of one expanded changeset URI. */
export interface ChangesetState {
  /** Computation lifecycle. */
  status: ChangesetStatus;
  /** Why computation failed; present only while `status` is `error`. */
  error?: ErrorInfo;
  /** Files in the changeset, keyed by {@link ChangesetFile.id}, in display order. */
  files: ChangesetFile[];
  /** Operations that can be invoked on this changeset; absent when none. */
  operations?: ChangesetOperation[];
  /**
   * Server metadata (this server's extension, ignored by other receivers):
   * when the file list is cut at the server's `maxFiles`, `totalFiles`,
   * `additions`, `deletions` over every file and `truncated: true`.
   */
  _meta?: Meta;
}
