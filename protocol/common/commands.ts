/**
 * Connection-level and subscription commands: `initialize`, `reconnect`,
 * `ping`, `subscribe`, `unsubscribe`, `dispatchAction` and `resourceRead`.
 */

import type { RootChannelUri } from './channels.js';
import type { ActionEnvelope, StateAction } from './actions.js';
import type { Snapshot, URI } from './state.js';
import type { ListSessionsParams, ListSessionsResult } from '../root/commands.js';
import type { CreateSessionParams, CreateSessionResult, DisposeSessionParams, DisposeSessionResult } from '../session/commands.js';
import type { InvokeChangesetOperationParams, InvokeChangesetOperationResult } from '../changeset/commands.js';

/** The shape every command's params extends: `channel` is the routing key. */
export interface BaseParams {
  /** The channel the command targets. */
  channel: URI;
}

/** Identity of the software on one end of the connection; informational only. */
export interface Implementation {
  /** Implementation name, e.g. a package name. */
  name: string;
  /** Implementation version. */
  version?: string;
  /** Human-readable display name. */
  title?: string;
}

/** Presence-flag capabilities a client declares in `initialize`. */
export interface ClientCapabilities {
  /** Present when the client can render MCP Apps. */
  mcpApps?: { [key: string]: unknown };
}

/** Params of `initialize`, the first message of every connection. */
export interface InitializeParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** Versions the client speaks, most preferred first. */
  protocolVersions: string[];
  /** Opaque per-connection client id, reused by `reconnect`. */
  clientId: string;
  /** Client software identity. */
  clientInfo?: Implementation;
  /** Channels to subscribe to in the same round-trip. */
  initialSubscriptions?: URI[];
  /** Preferred BCP 47 locale for user-facing strings. */
  locale?: string;
  /** Client capability declarations. */
  capabilities?: ClientCapabilities;
}

/** OTLP telemetry channels the host emits; this server advertises none. */
export interface TelemetryCapabilities {
  /** Log channel URI or template. */
  logs?: URI;
  /** Trace channel URI. */
  traces?: URI;
  /** Metrics channel URI. */
  metrics?: URI;
}

/** Result of `initialize`. */
export interface InitializeResult {
  /** The selected version, one of the offered `protocolVersions`. */
  protocolVersion: string;
  /** The current server sequence number. */
  serverSeq: number;
  /** Server software identity. */
  serverInfo?: Implementation;
  /** One snapshot per state-bearing `initialSubscriptions` entry. */
  snapshots: Snapshot[];
  /** Suggested starting directory for remote file browsing. */
  defaultDirectory?: URI;
  /** Characters that should trigger `completions` in message input. */
  completionTriggerCharacters?: string[];
  /** Prefix that marks a message as a terminal command. */
  terminalCommandPrefix?: string;
  /** Telemetry channels the host emits. */
  telemetry?: TelemetryCapabilities;
}

/** Params of `reconnect`, sent after a dropped transport. */
export interface ReconnectParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** The `clientId` of the original connection. */
  clientId: string;
  /** The last `serverSeq` the client saw. */
  lastSeenServerSeq: number;
  /** Channels the client was subscribed to. */
  subscriptions: URI[];
}

/** `reconnect` result when the gap is still in the replay log. */
export interface ReconnectReplayResult {
  /** Discriminant. */
  type: 'replay';
  /** Missed envelopes after `lastSeenServerSeq`, in order. */
  actions: ActionEnvelope[];
  /** Requested channels that cannot be resumed (e.g. disposed sessions). */
  missing: URI[];
}

/** `reconnect` result when the gap exceeds the replay log. */
export interface ReconnectSnapshotResult {
  /** Discriminant. */
  type: 'snapshot';
  /** Fresh snapshots of each resumable subscription. */
  snapshots: Snapshot[];
}

/** Result of `reconnect`. */
export type ReconnectResult = ReconnectReplayResult | ReconnectSnapshotResult;

/** Params of `ping`. */
export interface PingParams {
  /** Always the root channel. */
  channel: RootChannelUri;
}

/** `ping` returns no data: `null` on the wire. */
export type PingResult = null;

/** Advisory delivery preferences for one subscription. */
export interface SubscriptionDeliveryOptions {
  /** Upper bound in milliseconds on intentional buffering; `0` asks for immediate delivery. */
  maxLatencyMs?: number;
}

/** Advisory snapshot shape for one subscription. */
export interface SubscribeView {
  /** Approximate number of most recent completed turns wanted in a chat snapshot. */
  turns?: number;
}

/** Params of `subscribe`. */
export interface SubscribeParams {
  /** The channel to subscribe to. */
  channel: URI;
  /** Delivery preferences. */
  delivery?: SubscriptionDeliveryOptions;
  /** Snapshot shape preferences. */
  view?: SubscribeView;
}

/** Result of `subscribe`. */
export interface SubscribeResult {
  /** The channel's snapshot; absent for stateless channels. */
  snapshot?: Snapshot;
}

/** Params of the `unsubscribe` notification. */
export interface UnsubscribeParams {
  /** The channel to stop receiving. */
  channel: URI;
}

/** Params of the `dispatchAction` notification (write-ahead client action). */
export interface DispatchActionParams {
  /** The channel the action targets. */
  channel: URI;
  /** The client's sequence number, echoed in the envelope's `origin`. */
  clientSeq: number;
  /** The action; only client-dispatchable types are accepted. */
  action: StateAction;
}

/** Encoding of `resourceRead` data. */
export type ContentEncoding = 'base64' | 'utf-8';

/** Params of `resourceRead`. */
export interface ResourceReadParams {
  /** Always the root channel. */
  channel: RootChannelUri;
  /** Content URI from a `ContentRef` or a `FileEdit` side. */
  uri: URI;
  /** Preferred encoding of the returned data. */
  encoding?: ContentEncoding;
}

/** Result of `resourceRead`. */
export interface ResourceReadResult {
  /** The content, encoded as `encoding` says. */
  data: string;
  /** How `data` is encoded. */
  encoding: ContentEncoding;
  /** MIME type of the content. */
  contentType?: string;
}

/** Client-to-server request methods we serve, mapped to params and result. */
export interface CommandMap {
  /** Handshake. */
  initialize: { /** Params. */ params: InitializeParams /** Result. */; result: InitializeResult };
  /** Resume after a dropped transport. */
  reconnect: { /** Params. */ params: ReconnectParams /** Result. */; result: ReconnectResult };
  /** Liveness check. */
  ping: { /** Params. */ params: PingParams /** Result. */; result: PingResult };
  /** Subscribe to a channel. */
  subscribe: { /** Params. */ params: SubscribeParams /** Result. */; result: SubscribeResult };
  /** Page through the session catalogue. */
  listSessions: { /** Params. */ params: ListSessionsParams /** Result. */; result: ListSessionsResult };
  /** Create a session. */
  createSession: { /** Params. */ params: CreateSessionParams /** Result. */; result: CreateSessionResult };
  /** Dispose a session. */
  disposeSession: { /** Params. */ params: DisposeSessionParams /** Result. */; result: DisposeSessionResult };
  /** Read content by URI. */
  resourceRead: { /** Params. */ params: ResourceReadParams /** Result. */; result: ResourceReadResult };
  /** Invoke a changeset operation. */
  invokeChangesetOperation: {
    /** Params. */ params: InvokeChangesetOperationParams;
    /** Result. */ result: InvokeChangesetOperationResult;
  };
}

/** A request method we serve. */
export type CommandMethod = keyof CommandMap;

/** Client-to-server notification methods we accept, mapped to params. */
export interface ClientNotificationMap {
  /** Stop receiving a channel. */
  unsubscribe: UnsubscribeParams;
  /** Dispatch a client action. */
  dispatchAction: DispatchActionParams;
}

/** A client notification method we accept. */
export type ClientNotificationMethod = keyof ClientNotificationMap;
