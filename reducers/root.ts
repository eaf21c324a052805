/** Reducer for `ahp-root://`. */

import { produce } from 'immer';
import type { RootAction, RootState } from '../protocol/index.js';
import type { UnknownAction } from './types.js';

/** Applies one root action; unknown types return `state` itself. */
export function rootReducer(state: RootState, action: RootAction | UnknownAction): RootState {
  const known = action as RootAction;
  return produce(state, (draft) => {
    switch (known.type) {
      case 'root/agentsChanged':
        draft.agents = known.agents;
        break;
      case 'root/activeSessionsChanged':
        draft.activeSessions = known.activeSessions;
        break;
    }
  });
}
