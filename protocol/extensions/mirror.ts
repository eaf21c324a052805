/**
 * `mirror/status`: what the server has still to push to the git remote it
 * mirrors its checkpoints to (`serve --mirror`). Served only while
 * mirroring. Not part of AHP.
 */

/** Params of `mirror/status`: none; an empty object or nothing. */
export type MirrorStatusParams = Record<string, never> | undefined;

/** A session with checkpoints not pushed yet. */
export interface PendingSession {
  /** The session's id. */
  session: string;
  /** How many of its refs are not pushed yet. */
  refs: number;
}

/** The mirror of one working directory's store. */
export interface WorkspaceMirrorStatus {
  /** The working directory. */
  dir: string;
  /** Where its refs go on the remote. */
  remoteRefs: string;
  /** True while a push is running. */
  pushing: boolean;
  /** Sessions with refs not pushed yet: all of them until the first push succeeds. */
  pendingSessions: PendingSession[];
  /** Refs not pushed yet, over all sessions. */
  pendingRefs: number;
  /** When the last push succeeded (ISO 8601). */
  lastSuccessAt?: string;
  /** Why the last push failed, while no push after it has succeeded. */
  lastError?: string;
  /** When that push failed (ISO 8601). */
  lastErrorAt?: string;
  /** When the next attempt runs, while retrying (ISO 8601). */
  nextRetryAt?: string;
  /** Failed pushes in a row. */
  failures: number;
}

/** Result of `mirror/status`. */
export interface MirrorStatus {
  /** The remote's URL, without credentials. */
  url: string;
  /** One entry per mirrored working directory. */
  workspaces: WorkspaceMirrorStatus[];
}
