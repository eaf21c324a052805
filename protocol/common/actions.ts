/** The action envelope and the union of every action this server handles. */

import type { URI } from './state.js';
import type { RootAction } from '../root/actions.js';
import type { SessionAction } from '../session/actions.js';
import type { ChatAction } from '../chat/actions.js';
import type { ChangesetAction } from '../changeset/actions.js';
import type { ChannelKind } from './channel-state.js';

/** Every action this server emits or reduces, across all channels. */
export type StateAction = RootAction | SessionAction | ChatAction | ChangesetAction;

/** The `type` of any {@link StateAction}. */
export type StateActionType = StateAction['type'];

/** Maps a channel kind to the actions its reducer handles. */
export interface ActionByKind {
  /** Actions on `ahp-root://`. */
  root: RootAction;
  /** Actions on `ahp-session:/<id>`. */
  session: SessionAction;
  /** Actions on `ahp-chat:/<id>`. */
  chat: ChatAction;
  /** Actions on `ahp-changeset:/<id>`. */
  changeset: ChangesetAction;
}

/** The actions handled on channels of kind `K`. */
export type ActionOf<K extends ChannelKind> = ActionByKind[K];

/** Identifies the client that dispatched an action. */
export interface ActionOrigin {
  /** The dispatching client's `clientId` from `initialize`. */
  clientId: string;
  /** The client's sequence number from `dispatchAction`. */
  clientSeq: number;
}

/**
 * An action as delivered on the `action` notification and in `reconnect`
 * replays. Unknown keys on incoming envelopes are preserved, not stripped.
 */
export interface ActionEnvelope<A extends StateAction = StateAction> {
  /** The channel the action belongs to. */
  channel: URI;
  /** The action payload. */
  action: A;
  /** Server-assigned, strictly increasing sequence number. */
  serverSeq: number;
  /**
   * The dispatching client, or `undefined` for server-originated actions. The key
   * is required in the type but omitted on the wire when `undefined`.
   */
  origin: ActionOrigin | undefined;
  /** Present when the server rejected a client action; the client reverts its optimistic copy. */
  rejectionReason?: string;
}
