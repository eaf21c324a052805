export { HttpTransportServer, placeholderPage } from './http-server.js';
export type { HttpRequestHandler, HttpTransportOptions, ProtocolSelector, UpgradeCheck, UpgradeVerdict } from './http-server.js';
export { CloseCode, DEFAULT_TRANSPORT_LIMITS, resolveTransportLimits } from './limits.js';
export type { TransportLimits } from './limits.js';
export { errorResponseFrame, FramingErrorCode, readFrame } from './frames.js';
export type { InboundFrame, WireId } from './frames.js';
export { WsPeer } from './ws-peer.js';
export type { PeerCloseInfo, WsPeerOptions } from './ws-peer.js';
