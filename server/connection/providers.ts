import type { CreateSessionParams, DisposeSessionParams, ListSessionsParams, ListSessionsResult } from '../../protocol/index.js';
import type { MethodContext } from './method-registry.js';

/**
 * Owns sessions: creation, disposal and the catalogue. Registered once on
 * the server; until then `createSession`/`disposeSession` fail with -32601
 * and `listSessions` returns an empty page.
 */
export interface SessionProvider {
  /** Answers `listSessions`; must reject an unknown `cursor` with -32602 (`invalidParams`). */
  listSessions(params: ListSessionsParams, ctx: MethodContext): Promise<ListSessionsResult> | ListSessionsResult;
  /** Answers `createSession` (params already validated). */
  createSession(params: CreateSessionParams, ctx: MethodContext): Promise<null> | null;
  /** Answers `disposeSession` (params already validated). */
  disposeSession(params: DisposeSessionParams, ctx: MethodContext): Promise<null> | null;
}
