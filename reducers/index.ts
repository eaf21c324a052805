/**
 * The shared reducers: one per channel kind, and `reduce()` as the single
 * entry point used by the server, the web viewer and the test client.
 * Reducers are pure (immer `produce`); an unknown action type, or an action
 * that changes nothing, returns the very same state object. Returned states
 * are frozen (immer's default).
 */

import type { ActionOf, ChannelKind, ChannelState, ChannelStateByKind, StateAction } from '../protocol/index.js';
import { changesetReducer } from './changeset.js';
import { chatReducer } from './chat.js';
import { rootReducer } from './root.js';
import { sessionReducer } from './session.js';
import type { ReduceOptions, UnknownAction } from './types.js';

export { changesetReducer } from './changeset.js';
export { chatReducer } from './chat.js';
export { rootReducer } from './root.js';
export { sessionReducer } from './session.js';
export type { ReduceOptions, UnknownAction } from './types.js';

/** Applies `action` to the state of a channel of kind `kind`. */
export function reduce<K extends ChannelKind>(
  kind: K,
  state: ChannelStateByKind[K],
  action: ActionOf<K> | StateAction | UnknownAction,
  options?: ReduceOptions,
): ChannelStateByKind[K];
/** Applies `action` to the state of a channel of kind `kind`. */
export function reduce(kind: ChannelKind, state: ChannelState, action: StateAction | UnknownAction, options?: ReduceOptions): ChannelState;
export function reduce(kind: ChannelKind, state: ChannelState, action: StateAction | UnknownAction, options?: ReduceOptions): ChannelState {
  switch (kind) {
    case 'root':
      return rootReducer(state as ChannelStateByKind['root'], action);
    case 'session':
      return sessionReducer(state as ChannelStateByKind['session'], action);
    case 'chat':
      return chatReducer(state as ChannelStateByKind['chat'], action, options);
    case 'changeset':
      return changesetReducer(state as ChannelStateByKind['changeset'], action);
  }
}
