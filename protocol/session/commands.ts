/** Session channel commands: `createSession` and `disposeSession`. */

import type { JsonObject, URI } from '../common/state.js';
import type { SessionActiveClient } from './state.js';

/** Fork source for `createSession`. */
export interface SessionForkSource {
  /** URI of the session to fork from. */
  session: URI;
  /** Turn in the source session; content up to and including it is copied. */
  turnId: string;
}

/** Params of `createSession`; the client picks the session URI. */
export interface CreateSessionParams {
  /** The new session's URI (`ahp-session:/<id>`); reuse is `SessionAlreadyExists`. */
  channel: URI;
  /** Agent provider id. */
  provider?: string;
  /** Working directory for the session (a `file:` URI). */
  workingDirectory?: URI;
  /** Fork from an existing session. */
  fork?: SessionForkSource;
  /** Agent-specific configuration values. */
  config?: JsonObject;
  /** Claim an active-client role for the creating client right away. */
  activeClient?: SessionActiveClient;
  /** Token echoed on `root/progress` notifications about this creation. */
  progressToken?: string;
}

/** `createSession` returns no data: `null` on the wire. */
export type CreateSessionResult = null;

/** Params of `disposeSession`. */
export interface DisposeSessionParams {
  /** URI of the session to dispose. */
  channel: URI;
}

/** `disposeSession` returns no data: `null` on the wire. */
export type DisposeSessionResult = null;
