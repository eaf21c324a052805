/** Validators for connection-level and subscription messages. */

import { ROOT_CHANNEL } from '../common/channels.js';
import type { InitializeParams, PingParams, ReconnectParams, ResourceReadParams, SubscribeParams, UnsubscribeParams } from '../common/commands.js';
import {
  anyObject,
  arrayOf,
  channel,
  nonEmptyString,
  nonNegativeInteger,
  nonNegativeNumber,
  object,
  oneOf,
  optional,
  run,
  string,
  uriString,
} from './checks.js';
import type { Check, Validation } from './checks.js';

/** `params.channel` of connection-level commands: exactly `ahp-root://`. */
export const rootChannel: Check = oneOf(ROOT_CHANNEL);

const implementation = object({
  name: nonEmptyString,
  version: optional(string),
  title: optional(string),
});

const initializeParams = object({
  channel: rootChannel,
  protocolVersions: arrayOf(nonEmptyString, { nonEmpty: true }),
  clientId: nonEmptyString,
  clientInfo: optional(implementation),
  initialSubscriptions: optional(arrayOf(nonEmptyString)),
  locale: optional(string),
  capabilities: optional(anyObject),
});

/** Checks `initialize` params. */
export function validateInitializeParams(params: unknown): Validation<InitializeParams> {
  return run(initializeParams, params, 'params');
}

const reconnectParams = object({
  channel: rootChannel,
  clientId: nonEmptyString,
  lastSeenServerSeq: nonNegativeInteger,
  subscriptions: arrayOf(nonEmptyString),
});

/** Checks `reconnect` params. */
export function validateReconnectParams(params: unknown): Validation<ReconnectParams> {
  return run(reconnectParams, params, 'params');
}

const pingParams = object({ channel: rootChannel });

/** Checks `ping` params. */
export function validatePingParams(params: unknown): Validation<PingParams> {
  return run(pingParams, params, 'params');
}

const subscribeParams = object({
  channel: channel(),
  delivery: optional(object({ maxLatencyMs: optional(nonNegativeNumber) })),
  view: optional(object({ turns: optional(nonNegativeInteger) })),
});

/** Checks `subscribe` params; the channel must be a URI of a kind we serve. */
export function validateSubscribeParams(params: unknown): Validation<SubscribeParams> {
  return run(subscribeParams, params, 'params');
}

const unsubscribeParams = object({ channel: channel() });

/** Checks `unsubscribe` params. */
export function validateUnsubscribeParams(params: unknown): Validation<UnsubscribeParams> {
  return run(unsubscribeParams, params, 'params');
}

const resourceReadParams = object({
  channel: rootChannel,
  uri: uriString,
  encoding: optional(oneOf('base64', 'utf-8')),
});

/** Checks `resourceRead` params. */
export function validateResourceReadParams(params: unknown): Validation<ResourceReadParams> {
  return run(resourceReadParams, params, 'params');
}
