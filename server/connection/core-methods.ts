import type { Implementation } from '../../protocol/index.js';
import type { MethodTable } from '../method-table.js';
import { createSession, disposeSession, listSessions } from './catalogue.js';
import { dispatchAction } from './dispatch-action.js';
import { initialize, reconnect } from './handshake.js';
import type { MethodContext } from './method-registry.js';
import type { ProviderRegistry } from './provider-registry.js';
import { resourceRead } from './resources.js';
import { subscribe, unsubscribe } from './subscriptions.js';

/** What the core AHP methods need besides the per-request context. */
export interface CoreMethodDeps {
  /** Sent as `InitializeResult.serverInfo`. */
  serverInfo: Implementation;
  /** Session and content providers. */
  providers: ProviderRegistry;
}

/**
 * The AHP methods this server implements: `initialize`, `ping`,
 * `reconnect`, `subscribe`, `unsubscribe`, `dispatchAction`,
 * `listSessions`, `createSession`, `disposeSession`, `resourceRead`. Their
 * params are checked by the protocol's validators.
 */
export function coreMethods(deps: CoreMethodDeps): MethodTable<MethodContext> {
  return {
    ping: { request: () => null, allowBeforeInitialize: true },
    initialize: { request: (params, ctx) => initialize(params, ctx, deps.serverInfo), allowBeforeInitialize: true, carriesSnapshots: true },
    reconnect: { request: reconnect, allowBeforeInitialize: true, carriesSnapshots: true },
    subscribe: { request: subscribe, carriesSnapshots: true },
    unsubscribe: { notification: unsubscribe },
    // Payload problems are answered with a rejection echo, so the generic check is skipped here.
    dispatchAction: { notification: dispatchAction, check: () => undefined },
    listSessions: { request: (params, ctx) => listSessions(params, ctx, deps.providers) },
    createSession: { request: (params, ctx) => createSession(params, ctx, deps.providers) },
    disposeSession: { request: (params, ctx) => disposeSession(params, ctx, deps.providers) },
    resourceRead: { request: (params, ctx) => resourceRead(params, ctx, deps.providers) },
  };
}
