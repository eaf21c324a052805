/**
 * Root channel protocol notifications. In AHP 0.6 these are JSON-RPC
 * notifications (methods of their own, `notifications.schema.json`), not
 * actions: they are not reduced, stored or replayed.
 */

import type { RootChannelUri } from '../common/channels.js';
import type { URI } from '../common/state.js';
import type { SessionSummary } from '../session/state.js';

/** Params of `root/sessionAdded`: a session was created. */
export interface SessionAddedParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** Summary of the new session. */
  summary: SessionSummary;
}

/** Params of `root/sessionRemoved`: a session was disposed. */
export interface SessionRemovedParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** URI of the removed session. */
  session: URI;
}

/** Mutable {@link SessionSummary} fields; identity fields never change and are not sent. */
export type SessionSummaryChanges = Partial<Omit<SessionSummary, 'resource' | 'provider' | 'createdAt'>>;

/** Params of `root/sessionSummaryChanged`: some summary fields of a known session changed. */
export interface SessionSummaryChangedParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** URI of the session whose summary changed. */
  session: URI;
  /** Only the fields that changed. */
  changes: SessionSummaryChanges;
}

/**
 * Params of `root/progress`: how far a long-running operation a client opted
 * into (with a `progressToken` on its request) has come. Only the client
 * that supplied the token receives it; not stored, not replayed.
 */
export interface ProgressParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** The `progressToken` of the originating request. */
  progressToken: string;
  /** Work done so far, in operation-defined units; never decreases for a token. */
  progress: number;
  /** Total when known; the operation is complete when `progress === total` (the last frame for the token). */
  total?: number;
  /** Human-readable description of the work, for clients that do not track the token. */
  message?: string;
}

/** Root notification method names mapped to their params. */
export interface RootNotificationMap {
  /** A session was created. */
  'root/sessionAdded': SessionAddedParams;
  /** A session was disposed. */
  'root/sessionRemoved': SessionRemovedParams;
  /** A session's summary changed. */
  'root/sessionSummaryChanged': SessionSummaryChangedParams;
  /** Progress of a long-running operation the client opted into. */
  'root/progress': ProgressParams;
}
