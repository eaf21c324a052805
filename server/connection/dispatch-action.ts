import { validateClientAction, type ActionEnvelope, type StateAction, type URI } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/channel-store.js';
import { notificationFrame } from '../channels/frames.js';
import type { MethodContext } from './method-registry.js';

/**
 * `dispatchAction` (notification). Accepted actions are reduced and
 * broadcast to every subscriber, the sender included, with
 * `origin: {clientId, clientSeq}`. Refused ones (a type clients may not
 * dispatch, a malformed payload, an empty `files` list, a changeset
 * without review) are echoed to the sender only, with `rejectionReason`
 * and no state change. Actions on channels that do not exist are ignored
 * silently (AHP session-channel rules), as are params without a usable
 * `channel` and `clientSeq`, since no echo could be matched to them.
 */
export function dispatchAction(params: unknown, ctx: MethodContext): void {
  const { connection, store } = ctx;
  const clientId = connection.clientId;
  if (clientId === undefined || params === null || typeof params !== 'object') return;
  const { channel, clientSeq, action } = params as { channel?: unknown; clientSeq?: unknown; action?: unknown };
  if (typeof channel !== 'string' || !Number.isSafeInteger(clientSeq) || (clientSeq as number) < 0) return;
  if (!store.hasChannel(channel)) return;
  const origin = { clientId, clientSeq: clientSeq as number };
  const reject = (rejectionReason: string): void => {
    const echo = { channel, action, serverSeq: store.serverSeq, origin, rejectionReason } as ActionEnvelope;
    connection.sendFrame(notificationFrame('action', echo));
    connection.flush();
  };
  const reason = refusalReason(store, channel, action);
  if (reason !== undefined) {
    reject(reason);
    return;
  }
  try {
    store.dispatch(channel, action as StateAction, origin, connection);
  } catch (err) {
    reject(`action could not be applied: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function refusalReason(store: ChannelStore, channel: URI, action: unknown): string | undefined {
  const checked = validateClientAction(channel, action);
  if (!checked.ok) return checked.message;
  if (checked.value.type !== 'changeset/filesReviewChanged') return undefined;
  const reviewable = store.getChannel(channel)?.options.reviewable;
  const allowed = typeof reviewable === 'function' ? reviewable() : reviewable === true;
  if (!allowed) return 'this changeset does not support review (its catalogue entry has no capabilities.review)';
  return undefined;
}
