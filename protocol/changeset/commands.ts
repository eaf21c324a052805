/** Changeset channel commands: `invokeChangesetOperation`. */

import type { ContentRef, StringOrMarkdown, TextRange, URI } from '../common/state.js';

/** Discriminant values of {@link ChangesetOperationTarget}. */
export const ChangesetOperationTargetKind = {
  /** A whole file. */
  Resource: 'resource',
  /** A line range within one file. */
  Range: 'range',
} as const;
/** One of the {@link ChangesetOperationTargetKind} values. */
export type ChangesetOperationTargetKind = (typeof ChangesetOperationTargetKind)[keyof typeof ChangesetOperationTargetKind];

/** Which side of a file edit a target refers to. */
export type ChangesetOperationSide = 'before' | 'after';

/** Targets one whole file of the changeset. */
export interface ChangesetOperationResourceTarget {
  /** Discriminant. */
  kind: 'resource';
  /** The file's URI (a `before.uri` or `after.uri` of a changeset file). */
  resource: URI;
  /** Which side of the edit `resource` names; defaults to `after`. */
  side?: ChangesetOperationSide;
}

/** Targets a line range within one file of the changeset. */
export interface ChangesetOperationRangeTarget {
  /** Discriminant. */
  kind: 'range';
  /** The file's URI (a `before.uri` or `after.uri` of a changeset file). */
  resource: URI;
  /** Which side of the edit `range` is expressed in; defaults to `after`. */
  side?: ChangesetOperationSide;
  /** Zero-based range of lines the operation applies to. */
  range: TextRange;
}

/** The file or range an operation acts on; its `kind` must be one of the operation's scopes. */
export type ChangesetOperationTarget = ChangesetOperationResourceTarget | ChangesetOperationRangeTarget;

/** Params of `invokeChangesetOperation`. */
export interface InvokeChangesetOperationParams {
  /** The expanded changeset URI. */
  channel: URI;
  /** Id of an operation in the changeset's current `operations`. */
  operationId: string;
  /** Required for `resource`/`range` scoped invocations; omitted for changeset scope. */
  target?: ChangesetOperationTarget;
}

/** Something to show after an operation completes. */
export interface ChangesetOperationFollowUp {
  /** Content the client can fetch and display. */
  content: ContentRef;
  /** When true, open in an external handler (e.g. a browser) rather than inline. */
  external?: boolean;
}

/** Result of `invokeChangesetOperation`; failure is a JSON-RPC error, never a field here. */
export interface InvokeChangesetOperationResult {
  /** Optional human-readable outcome, e.g. `Reverted 3 files`. */
  message?: StringOrMarkdown;
  /** Optional follow-up content. */
  followUp?: ChangesetOperationFollowUp;
}
