import type { RootState } from '../root/state.js';
import type { SessionState } from '../session/state.js';
import type { ChatState } from '../chat/state.js';
import type { ChangesetState } from '../changeset/state.js';

/** The state of any channel this server serves. */
export type ChannelState = RootState | SessionState | ChatState | ChangesetState;

/** The channel kinds this server serves, derived from the channel URI's scheme. */
export type ChannelKind = 'root' | 'session' | 'chat' | 'changeset';

/** Maps a channel kind to the state type its channel carries. */
export interface ChannelStateByKind {
  /** `ahp-root://` */
  root: RootState;
  /** `ahp-session:/<id>` */
  session: SessionState;
  /** `ahp-chat:/<id>` */
  chat: ChatState;
  /** `ahp-changeset:/<id>` */
  changeset: ChangesetState;
}
