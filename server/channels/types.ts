import type { ActionEnvelope, ChannelKind, ChannelState, ErrorCode, URI } from '../../protocol/index.js';
import type { OutboundFrame } from './frames.js';

/**
 * Something that receives a channel's action envelopes: in practice a
 * client connection. The store hands it the already-serialized frame.
 */
export interface ChannelSubscriber {
  /** Stable, unique id (used for bookkeeping and diagnostics). */
  readonly id: string;
  /**
   * Delivers one serialized notification (an `action` envelope or a protocol
   * notification). Every subscriber gets the same frame: the same string,
   * or with several subscribers the same UTF-8 bytes, encoded once.
   */
  sendFrame(frame: OutboundFrame): void;
  /**
   * Writes what was handed to it so far now, rather than a moment later
   * with every other subscriber's frames: the store calls it after the
   * dispatching client's own echo, before the rest of the fan-out.
   */
  flush?(): void;
  /** Told after a channel it subscribed to was removed; it is already unsubscribed. */
  channelRemoved(uri: URI): void;
}

/** Per-channel options set when a channel is created. */
export interface ChannelOptions {
  /**
   * Changeset channels: whether clients may dispatch
   * `changeset/filesReviewChanged` on it, i.e. whether the owning session's
   * catalogue entry advertises `capabilities.review`. A function is asked at
   * each dispatch so it can consult the session's current catalogue.
   */
  reviewable?: boolean | (() => boolean);
}

/** Read-only view of one channel held by the store. */
export interface ChannelInfo {
  /** Channel URI. */
  readonly uri: URI;
  /** Channel kind, fixed at creation. */
  readonly kind: ChannelKind;
  /** Current authoritative state (frozen; replace only through `dispatch`). */
  readonly state: ChannelState;
  /** Options given at creation. */
  readonly options: Readonly<ChannelOptions>;
  /** Number of current subscribers. */
  readonly subscriberCount: number;
}

/** A failure to produce a channel on demand. */
export interface ChannelResolveError {
  /** JSON-RPC / AHP error code to return to the client (e.g. -32008 NotFound). */
  code: ErrorCode;
  /** Precise human-readable reason. */
  message: string;
}

/**
 * Creates a channel on first subscribe (e.g. a changeset computed when
 * someone asks for it). It calls `store.createChannel(uri, ...)` and
 * resolves; resolving without creating the channel means "not found".
 * Returning an error refuses the subscribe with that error.
 */
export type ChannelResolver = (uri: URI) => Promise<ChannelResolveError | void>;

/** Called for every envelope the store commits (persistence, metrics). */
export type EnvelopeListener = (envelope: ActionEnvelope, kind: ChannelKind) => void;
