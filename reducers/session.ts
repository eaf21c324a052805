/** Reducer for `ahp-session:/<id>`. */

import { produce } from 'immer';
import { SessionStatus } from '../protocol/index.js';
import type { ChatSummary, SessionAction, SessionState } from '../protocol/index.js';
import type { UnknownAction } from './types.js';

/** Sets or clears one flag bit of a status bitset. */
function withFlag(status: number, flag: number, on: boolean): number {
  return on ? status | flag : status & ~flag;
}

/** Applies one session action; unknown types and no-op actions return `state` itself. */
export function sessionReducer(state: SessionState, action: SessionAction | UnknownAction): SessionState {
  const known = action as SessionAction;
  return produce(state, (draft) => {
    switch (known.type) {
      case 'session/ready':
        // Purely a lifecycle transition: a first turn may already be running, so `status` stays.
        draft.lifecycle = 'ready';
        break;

      case 'session/creationFailed':
        draft.lifecycle = 'creationFailed';
        draft.creationError = known.error;
        break;

      case 'session/chatAdded': {
        const index = draft.chats.findIndex((c) => c.resource === known.summary.resource);
        if (index < 0) draft.chats.push(known.summary);
        else draft.chats[index] = known.summary;
        break;
      }

      case 'session/chatRemoved': {
        const index = draft.chats.findIndex((c) => c.resource === known.chat);
        if (index < 0) break;
        draft.chats.splice(index, 1);
        if (draft.defaultChat === known.chat) delete draft.defaultChat;
        break;
      }

      case 'session/chatUpdated': {
        const entry = draft.chats.find((c) => c.resource === known.chat);
        if (!entry) break;
        const target = entry as unknown as Record<string, unknown>;
        for (const [key, value] of Object.entries(known.changes)) {
          // `resource` is the identity of the entry and never changes.
          if (key === ('resource' satisfies keyof ChatSummary)) continue;
          if (value == null) delete target[key];
          else target[key] = value;
        }
        break;
      }

      case 'session/defaultChatChanged':
        if (known.defaultChat != null) draft.defaultChat = known.defaultChat;
        else delete draft.defaultChat;
        break;

      case 'session/titleChanged':
        draft.title = known.title;
        break;

      case 'session/activityChanged':
        if (known.activity != null) draft.activity = known.activity;
        else delete draft.activity;
        break;

      case 'session/changesetsChanged':
        if (known.changesets != null) draft.changesets = known.changesets;
        else delete draft.changesets;
        break;

      case 'session/metaChanged':
        if (known._meta != null) draft._meta = known._meta;
        else delete draft._meta;
        break;

      case 'session/isReadChanged':
        draft.status = withFlag(draft.status, SessionStatus.IsRead, known.isRead);
        break;

      case 'session/isArchivedChanged':
        draft.status = withFlag(draft.status, SessionStatus.IsArchived, known.isArchived);
        break;
    }
  });
}
