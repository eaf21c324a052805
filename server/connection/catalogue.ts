import type { CreateSessionParams, DisposeSessionParams, ListSessionsParams, ListSessionsResult } from '../../protocol/index.js';
import { invalidParams } from '../domain-error.js';
import { methodNotFound } from './errors.js';
import type { MethodContext } from './method-registry.js';
import type { ProviderRegistry } from './provider-registry.js';

/** `listSessions`: delegated to the session provider; an empty catalogue without one. */
export async function listSessions(params: ListSessionsParams, ctx: MethodContext, providers: ProviderRegistry): Promise<ListSessionsResult> {
  if (params.limit !== undefined && (!Number.isInteger(params.limit) || params.limit < 1)) {
    throw invalidParams('limit: must be a positive integer');
  }
  const sessions = providers.sessions;
  if (sessions) return sessions.listSessions(params, ctx);
  // No catalogue yet, so no cursor we could have issued.
  if (params.cursor !== undefined) throw invalidParams(`cursor: unknown cursor "${params.cursor}"`);
  return { items: [] };
}

/** `createSession`: delegated to the session provider. */
export async function createSession(params: CreateSessionParams, ctx: MethodContext, providers: ProviderRegistry): Promise<null> {
  const sessions = providers.sessions;
  if (!sessions) throw methodNotFound('createSession', 'createSession is not available: this server has no session provider');
  return sessions.createSession(params, ctx);
}

/** `disposeSession`: delegated to the session provider. */
export async function disposeSession(params: DisposeSessionParams, ctx: MethodContext, providers: ProviderRegistry): Promise<null> {
  const sessions = providers.sessions;
  if (!sessions) throw methodNotFound('disposeSession', 'disposeSession is not available: this server has no session provider');
  return sessions.disposeSession(params, ctx);
}
