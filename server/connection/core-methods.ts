import type { Implementation } from '../../protocol/index.js';
import { createSession, disposeSession, listSessions } from './catalogue.js';
import { dispatchAction } from './dispatch-action.js';
import { initialize, reconnect } from './handshake.js';
import type { MethodRegistry } from './method-registry.js';
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
 * Registers the AHP methods this server implements: `initialize`, `ping`,
 * `reconnect`, `subscribe`, `unsubscribe`, `dispatchAction`,
 * `listSessions`, `createSession`, `disposeSession`, `resourceRead`.
 */
export function registerCoreMethods(registry: MethodRegistry, deps: CoreMethodDeps): void {
  registry.registerRequest('ping', () => null, { allowBeforeInitialize: true });
  registry.registerRequest('initialize', (params: Parameters<typeof initialize>[0], ctx) => initialize(params, ctx, deps.serverInfo), {
    allowBeforeInitialize: true,
    carriesSnapshots: true,
  });
  registry.registerRequest('reconnect', reconnect, { allowBeforeInitialize: true, carriesSnapshots: true });
  registry.registerRequest('subscribe', subscribe, { carriesSnapshots: true });
  registry.registerNotification('unsubscribe', unsubscribe);
  // Payload problems are answered with a rejection echo, so the generic check is skipped here.
  registry.registerNotification('dispatchAction', (params: unknown, ctx) => dispatchAction(params, ctx), {
    check: () => undefined,
  });
  registry.registerRequest('listSessions', (params: Parameters<typeof listSessions>[0], ctx) => listSessions(params, ctx, deps.providers));
  registry.registerRequest('createSession', (params: Parameters<typeof createSession>[0], ctx) => createSession(params, ctx, deps.providers));
  registry.registerRequest('disposeSession', (params: Parameters<typeof disposeSession>[0], ctx) => disposeSession(params, ctx, deps.providers));
  registry.registerRequest('resourceRead', (params: Parameters<typeof resourceRead>[0], ctx) => resourceRead(params, ctx, deps.providers));
}
