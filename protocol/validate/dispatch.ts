/**
 * Validators for `dispatchAction`. It is a notification, so a bad one cannot
 * be answered with an error: when the envelope part (channel, clientSeq,
 * action type) is unusable the message is dropped; when only the action is
 * bad the server echoes it with a `rejectionReason`. The two stages are
 * therefore exported separately as well as combined.
 */

import { channelKindOf } from '../common/channels.js';
import type { ChannelKind } from '../common/channel-state.js';
import type { DispatchActionParams } from '../common/commands.js';
import type { ClientChangesetAction } from '../changeset/actions.js';
import type { SessionIsArchivedChangedAction } from '../session/actions.js';
import { channel, nonEmptyString, nonNegativeInteger, object, run } from './checks.js';
import type { Validation } from './checks.js';
import { validateFilesReviewChangedAction } from './changeset.js';
import { validateIsArchivedChangedAction } from './session.js';

/** Every action a client may dispatch to this server. */
export type ClientAction = ClientChangesetAction | SessionIsArchivedChangedAction;

/** Where each client-dispatchable action may go and how its payload is checked. */
const clientActions: Record<
  ClientAction['type'],
  { kind: ChannelKind; channelName: string; validate: (action: unknown, path: string) => Validation<ClientAction> }
> = {
  'changeset/filesReviewChanged': {
    kind: 'changeset',
    channelName: 'ahp-changeset:/<id>',
    validate: validateFilesReviewChangedAction,
  },
  'session/isArchivedChanged': {
    kind: 'session',
    channelName: 'ahp-session:/<id>',
    validate: validateIsArchivedChangedAction,
  },
};

/** The action types clients may dispatch. */
export const CLIENT_DISPATCHABLE_ACTIONS: readonly ClientAction['type'][] = Object.keys(clientActions) as ClientAction['type'][];

/** `dispatchAction` params whose envelope part is usable, before the action itself is checked. */
export interface DispatchEnvelope {
  /** The target channel. */
  channel: string;
  /** The client's sequence number. */
  clientSeq: number;
  /** The action, known only to be an object with a non-empty `type`. */
  action: { type: string; [key: string]: unknown };
}

const envelope = object({
  channel: channel(),
  clientSeq: nonNegativeInteger,
  action: object({ type: nonEmptyString }),
});

/** Stage 1: checks `channel`, `clientSeq` and that `action` has a `type`. */
export function validateDispatchEnvelope(params: unknown): Validation<DispatchEnvelope> {
  return run(envelope, params, 'params');
}

/** Stage 2: checks that `action` may be dispatched by a client to channel `channelUri`, and its payload. */
export function validateClientAction(channelUri: string, action: unknown, path = 'params.action'): Validation<ClientAction> {
  const typeProblem = nonEmptyString((action as { type?: unknown } | null)?.type, `${path}.type`);
  if (typeProblem) return { ok: false, message: typeProblem };
  const type = (action as { type: string }).type;
  const rule = Object.hasOwn(clientActions, type) ? clientActions[type as ClientAction['type']] : undefined;
  if (!rule) return { ok: false, message: `${path}.type ${JSON.stringify(type)} is not client-dispatchable` };
  if (channelKindOf(channelUri) !== rule.kind) {
    return { ok: false, message: `${path}.type ${JSON.stringify(type)} can only be dispatched to an ${rule.channelName} channel` };
  }
  return rule.validate(action, path);
}

/** Both stages: a `dispatchAction` whose action a client may send, with a valid payload. */
export function validateDispatchActionParams(params: unknown): Validation<DispatchActionParams & { action: ClientAction }> {
  const first = validateDispatchEnvelope(params);
  if (!first.ok) return first;
  const second = validateClientAction(first.value.channel, first.value.action);
  if (!second.ok) return second;
  return { ok: true, value: params as DispatchActionParams & { action: ClientAction } };
}
