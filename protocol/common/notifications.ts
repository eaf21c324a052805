/** Server-to-client notifications: `action` plus the root catalogue events. */

import type { ActionEnvelope } from './actions.js';
import type { RootNotificationMap } from '../root/notifications.js';

/** Server notification method names mapped to their params. */
export interface ServerNotificationMap extends RootNotificationMap {
  /** An action envelope on a subscribed channel. */
  action: ActionEnvelope;
}

/** A server notification method. */
export type ServerNotificationMethod = keyof ServerNotificationMap;
