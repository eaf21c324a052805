export { resolveTransportLimits } from './limits.js';
export { errorResponseFrame } from './frames.js';
export { WsPeer } from './ws-peer.js';
