export { ChannelStore } from './channel-store.js';
export type { ChannelResolveError } from './types.js';
