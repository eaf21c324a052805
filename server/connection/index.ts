export { ClientConnection } from './client-connection.js';
export type { ConnectionDeps, ProtocolParamsCheck } from './client-connection.js';
export { registerCoreMethods } from './core-methods.js';
export type { CoreMethodDeps } from './core-methods.js';
export { CLIENT_DISPATCHABLE_ACTIONS } from './dispatch-action.js';
export { methodNotFound, toResponseError } from './errors.js';
export { negotiateVersion, SUPPORTED_PROTOCOL_VERSIONS } from './handshake.js';
export { MethodRegistry } from './method-registry.js';
export type {
  MethodContext,
  MethodEntry,
  MethodOptions,
  NotificationHandler,
  ParamsCheck,
  RequestHandler,
} from './method-registry.js';
export { ProviderRegistry } from './provider-registry.js';
export type { ContentProvider, SessionProvider } from './providers.js';
