import { AhpErrorCodes, parseChannel, type SubscribeParams, type SubscribeResult, type UnsubscribeParams } from '../../protocol/index.js';
import { DomainError, invalidParams } from '../domain-error.js';
import type { MethodContext } from './method-registry.js';

const SERVED_URIS = 'ahp-root://, ahp-session:/<id>, ahp-chat:/<id> or ahp-changeset:/<id>';

/**
 * `subscribe`: -32602 for a URI this server does not serve, -32001 for an
 * unknown session, -32008 for any other unknown channel. Subscribing again
 * to the same channel returns a fresh snapshot.
 */
export async function subscribe(params: SubscribeParams, ctx: MethodContext): Promise<SubscribeResult> {
  const uri = params.channel;
  const parsed = parseChannel(uri);
  if (!parsed) throw invalidParams(`channel: "${uri}" is not a channel URI this server serves (${SERVED_URIS})`);
  const error = await ctx.store.ensureChannel(uri);
  const snapshot = error ? undefined : ctx.connection.subscribeTo(uri);
  if (!snapshot) {
    if (parsed.kind === 'session') throw new DomainError(AhpErrorCodes.SessionNotFound, `session not found: ${uri}`);
    throw new DomainError(error?.code ?? AhpErrorCodes.NotFound, error?.message ?? `channel not found: ${uri}`);
  }
  return { snapshot };
}

/** `unsubscribe` (notification): stop receiving a channel; unknown channels are ignored. */
export function unsubscribe(params: UnsubscribeParams, ctx: MethodContext): void {
  ctx.connection.unsubscribeFrom(params.channel);
}
