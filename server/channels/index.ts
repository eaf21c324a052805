export { ChannelStore, DEFAULT_REPLAY_LOG_SIZE } from './channel-store.js';
export type { ChannelStoreOptions } from './channel-store.js';
export { ReplayLog } from './replay-log.js';
export type {
  ChannelInfo,
  ChannelOptions,
  ChannelResolveError,
  ChannelResolver,
  ChannelSubscriber,
  EnvelopeListener,
} from './types.js';
