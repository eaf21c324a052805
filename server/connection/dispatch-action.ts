import type { ActionEnvelope, ChangesetFilesReviewChangedAction, StateAction, URI } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/channel-store.js';
import { notificationFrame } from '../transport/frames.js';
import type { MethodContext } from './method-registry.js';

/** The one action type clients may dispatch on this server. */
export const CLIENT_DISPATCHABLE_ACTIONS: readonly string[] = ['changeset/filesReviewChanged'];

/** Checks the payload of a client-dispatched action; a reason naming the field, or undefined. */
export type ActionPayloadCheck = (action: StateAction) => string | undefined;

/**
 * `dispatchAction` (notification). Accepted actions are reduced and
 * broadcast to every subscriber, the sender included, with
 * `origin: {clientId, clientSeq}`. Refused ones are echoed to the sender
 * only, with `rejectionReason` and no state change. Actions on channels
 * that do not exist are ignored silently (AHP session-channel rules).
 */
export function dispatchAction(params: unknown, ctx: MethodContext, checkAction: ActionPayloadCheck): void {
  const { connection, store } = ctx;
  const clientId = connection.clientId;
  if (clientId === undefined || params === null || typeof params !== 'object') return;
  const { channel, clientSeq, action } = params as { channel?: unknown; clientSeq?: unknown; action?: unknown };
  // Without a channel and a clientSeq there is nothing a client could match an echo against.
  if (typeof channel !== 'string' || typeof clientSeq !== 'number' || !Number.isFinite(clientSeq)) return;
  if (!store.hasChannel(channel)) return;
  const origin = { clientId, clientSeq };
  const reason = refusalReason(store, channel, action, checkAction);
  if (reason !== undefined) {
    const echo = { channel, action, serverSeq: store.serverSeq, origin, rejectionReason: reason } as ActionEnvelope;
    connection.sendFrame(notificationFrame('action', echo));
    return;
  }
  try {
    store.dispatch(channel, action as StateAction, origin);
  } catch (err) {
    const echo = {
      channel,
      action,
      serverSeq: store.serverSeq,
      origin,
      rejectionReason: `action could not be applied: ${err instanceof Error ? err.message : String(err)}`,
    } as ActionEnvelope;
    connection.sendFrame(notificationFrame('action', echo));
  }
}

function refusalReason(store: ChannelStore, channel: URI, action: unknown, checkAction: ActionPayloadCheck): string | undefined {
  if (action === null || typeof action !== 'object' || Array.isArray(action)) return 'action: must be an object';
  const type = (action as { type?: unknown }).type;
  if (typeof type !== 'string') return 'action.type: must be a string';
  if (!CLIENT_DISPATCHABLE_ACTIONS.includes(type)) {
    return `action.type: "${type}" is not client-dispatchable on this server (only ${CLIENT_DISPATCHABLE_ACTIONS.join(', ')})`;
  }
  const info = store.getChannel(channel);
  if (!info || info.kind !== 'changeset') return `${type} only applies to changeset channels`;
  const problem = checkAction(action as StateAction);
  if (problem !== undefined) return problem;
  const review = action as ChangesetFilesReviewChangedAction;
  if (review.files.length === 0) return 'action.files: must list at least one file id';
  const reviewable = info.options.reviewable;
  const allowed = typeof reviewable === 'function' ? reviewable() : reviewable === true;
  if (!allowed) return 'this changeset does not support review (its catalogue entry has no capabilities.review)';
  return undefined;
}
