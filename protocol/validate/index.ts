/**
 * Validators for every inbound message the server accepts. Each returns
 * `{ ok: true, value }` (the input, untouched, unknown keys kept) or
 * `{ ok: false, message }` naming the offending field, e.g.
 * `params.target.range.start.line must be a non-negative integer`.
 */

import type { ClientNotificationMap, CommandMap } from '../common/commands.js';
import type { Validation } from './checks.js';
import {
  validateInitializeParams,
  validatePingParams,
  validateReconnectParams,
  validateResourceReadParams,
  validateSubscribeParams,
  validateUnsubscribeParams,
} from './common.js';
import { validateInvokeChangesetOperationParams } from './changeset.js';
import { validateDispatchActionParams } from './dispatch.js';
import { validateListSessionsParams } from './root.js';
import { validateCreateSessionParams, validateDisposeSessionParams } from './session.js';

export * from './checks.js';
export * from './common.js';
export * from './root.js';
export * from './session.js';
export * from './changeset.js';
export * from './dispatch.js';

/** Params type of each inbound method we validate. */
export type InboundParams = { [M in keyof CommandMap]: CommandMap[M]['params'] } & ClientNotificationMap;

/** An inbound method (request or notification) the server accepts. */
export type InboundMethod = keyof InboundParams;

/** The validator of each inbound method. */
export const paramsValidators: { [M in InboundMethod]: (params: unknown) => Validation<InboundParams[M]> } = {
  initialize: validateInitializeParams,
  reconnect: validateReconnectParams,
  ping: validatePingParams,
  subscribe: validateSubscribeParams,
  unsubscribe: validateUnsubscribeParams,
  dispatchAction: validateDispatchActionParams,
  listSessions: validateListSessionsParams,
  createSession: validateCreateSessionParams,
  disposeSession: validateDisposeSessionParams,
  resourceRead: validateResourceReadParams,
  invokeChangesetOperation: validateInvokeChangesetOperationParams,
};

/** Whether `method` is one the server accepts (anything else is `MethodNotFound`). */
export function isInboundMethod(method: string): method is InboundMethod {
  return Object.hasOwn(paramsValidators, method);
}

/** Validates the params of an inbound method. */
export function validateParams<M extends InboundMethod>(method: M, params: unknown): Validation<InboundParams[M]>;
/** Validates the params of any method name; `undefined` means the method is not one we accept. */
export function validateParams(method: string, params: unknown): Validation<unknown> | undefined;
export function validateParams(method: string, params: unknown): Validation<unknown> | undefined {
  return isInboundMethod(method) ? paramsValidators[method](params) : undefined;
}
