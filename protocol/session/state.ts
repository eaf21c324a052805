/** Session channel state (`ahp-session:/<id>`). */

import type { ErrorInfo, JsonObject, Meta, URI } from '../common/state.js';
import type { ChatSummary } from '../chat/state.js';
import type { Changeset } from '../changeset/state.js';

/**
 * Status bitset values. Bits 0–4 are the mutually exclusive activity
 * (`Idle`, `Error`, `InProgress`, `InputNeeded`); bits 5+ are flags combined with OR.
 */
export const SessionStatus = {
  /** No active turn and no pending input. */
  Idle: 1,
  /** The most recent turn ended with an error. */
  Error: 2,
  /** A turn is active. */
  InProgress: 8,
  /** A turn is active and waiting on the user (includes the `InProgress` bit). */
  InputNeeded: 24,
  /** The client has viewed the session since its last modification. */
  IsRead: 32,
  /** The session is archived. */
  IsArchived: 64,
} as const;
/** A status bitset built from {@link SessionStatus} values; test bits, not equality. */
export type SessionStatus = number;

/** Mask of the activity bits (0–4) within a {@link SessionStatus}. */
export const SessionStatusActivityMask = (1 << 5) - 1;

/** Asynchronous creation lifecycle of a session. */
export const SessionLifecycle = {
  /** The backend is being initialised. */
  Creating: 'creating',
  /** The session is usable. */
  Ready: 'ready',
  /** Initialisation failed; `creationError` says why. */
  CreationFailed: 'creationFailed',
} as const;
/** One of the {@link SessionLifecycle} values. */
export type SessionLifecycle = (typeof SessionLifecycle)[keyof typeof SessionLifecycle];

/** Server-owned project metadata. */
export interface ProjectInfo {
  /** Project URI. */
  uri: URI;
  /** Human-readable project name. */
  displayName: string;
}

/** Aggregate line and file counts of a session's changes. */
export interface ChangesSummary {
  /** Total inserted lines across changed files. */
  additions?: number;
  /** Total deleted lines across changed files. */
  deletions?: number;
  /** Number of changed files. */
  files?: number;
}

/** A client currently providing tools to a session. */
export interface SessionActiveClient {
  /** The client's `clientId` from `initialize`. */
  clientId: string;
  /** Human-readable client name. */
  displayName?: string;
  /** Tool definitions the client provides; carried without interpretation. */
  tools: JsonObject[];
  /** Plugin customizations the client contributes; carried without interpretation. */
  customizations?: JsonObject[];
}

/** Fields shared by {@link SessionState} and {@link SessionSummary}. */
export interface SessionMetadata {
  /** Agent provider id, e.g. `claude-code`. */
  provider: string;
  /** Session title. */
  title: string;
  /** Status bitset (see {@link SessionStatus}). */
  status: SessionStatus;
  /** What the session is doing right now, if anything. */
  activity?: string;
  /** Server-owned project for the session. */
  project?: ProjectInfo;
  /** Default working directory URI (a `file:` URI). */
  workingDirectory?: URI;
  /** Summary of the session's annotations channel; carried without interpretation. */
  annotations?: JsonObject;
}

/** Catalogue entry for one session, served by `listSessions` and the `root/session*` notifications. */
export interface SessionSummary extends SessionMetadata {
  /** Session URI (`ahp-session:/<id>`). */
  resource: URI;
  /** ISO 8601 creation time. */
  createdAt: string;
  /** ISO 8601 time of the last modification. */
  modifiedAt: string;
  /** Aggregate change counts, for list rendering without subscribing. */
  changes?: ChangesSummary;
  /** Small server-defined presentation metadata. */
  _meta?: Meta;
}

/** Full state of one session. */
export interface SessionState extends SessionMetadata {
  /** Creation lifecycle. */
  lifecycle: SessionLifecycle;
  /** Why creation failed, when `lifecycle` is `creationFailed`. */
  creationError?: ErrorInfo;
  /** Tools provided by the host; carried without interpretation. */
  serverTools?: JsonObject[];
  /** Clients currently providing tools to the session. */
  activeClients: SessionActiveClient[];
  /** Catalogue of the session's chats. */
  chats: ChatSummary[];
  /** Chat that receives input addressed to the session as a whole. */
  defaultChat?: URI;
  /** Session configuration schema and values; carried without interpretation. */
  config?: JsonObject;
  /** Active customizations; carried without interpretation. */
  customizations?: JsonObject[];
  /** Catalogue of changesets the server can produce for this session. */
  changesets?: Changeset[];
  /** Outstanding input requests across chats; carried without interpretation. */
  inputNeeded?: JsonObject[];
  /** Provider-specific metadata (e.g. git details of the working directory). */
  _meta?: Meta;
}
