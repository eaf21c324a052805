/** Server-to-client notifications: `action` plus the root catalogue events. */

import type { ActionEnvelope } from './actions.js';
import type { RootNotificationMap } from '../root/notifications.js';
import type { CommentsChangedParams } from '../extensions/comments.js';

/** Server notification method names mapped to their params. */
export interface ServerNotificationMap extends RootNotificationMap {
  /** An action envelope on a subscribed channel. */
  action: ActionEnvelope;
  /** This server's extension: a review comment of a session the client listed with `follow` changed. */
  'comments/changed': CommentsChangedParams;
}

/** A server notification method. */
export type ServerNotificationMethod = keyof ServerNotificationMap;
