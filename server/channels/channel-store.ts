import {
  AhpErrorCodes,
  JsonRpcErrorCodes,
  type ActionEnvelope,
  type ActionOrigin,
  type ChannelKind,
  type ChannelState,
  type ServerNotificationMap,
  type Snapshot,
  type StateAction,
  type URI,
} from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';
import { toDisposable, type Disposable } from '../events.js';
import { notificationFrame, sharedFrame, type OutboundFrame } from './frames.js';
import { ReplayLog } from './replay-log.js';
import type { ChannelInfo, ChannelOptions, ChannelResolveError, ChannelResolver, ChannelSubscriber, EnvelopeListener } from './types.js';

/** Options for the channel store. */
export interface ChannelStoreOptions {
  /** How many of the most recent envelopes are kept for `reconnect` replay. */
  replayLogSize?: number;
  /**
   * The `serverSeq` to count on from (default 0): above any number an
   * earlier run of the server handed out, so a client's `lastSeenServerSeq`
   * from that run is never taken for one of ours.
   */
  firstServerSeq?: number;
}

/** Default number of envelopes kept for replay. */
const DEFAULT_REPLAY_LOG_SIZE = 10_000;

interface Channel {
  readonly uri: URI;
  readonly kind: ChannelKind;
  state: ChannelState;
  readonly options: ChannelOptions;
  readonly subscribers: Set<ChannelSubscriber>;
  /** Replay can patch a client's copy only from this `serverSeq` on: before it, the channel did not exist. */
  readonly replayableFrom: number;
}

/**
 * The authoritative state of every channel, one global `serverSeq`, the
 * replay log and fan-out. Every state change goes through `reduce()`.
 */
export class ChannelStore {
  private readonly channels = new Map<URI, Channel>();
  private readonly resolvers = new Map<string, ChannelResolver>();
  private readonly resolving = new Map<URI, Promise<ChannelResolveError | void>>();
  private readonly listeners = new Set<EnvelopeListener>();
  private readonly log: ReplayLog<ActionEnvelope>;
  private seq = 0;
  /** URIs removed at the current `serverSeq`: one created again before the next envelope is not the one clients saw. */
  private removedAtSeq: { seq: number; uris: Set<URI> } = { seq: -1, uris: new Set() };

  constructor(options: ChannelStoreOptions = {}) {
    this.log = new ReplayLog(options.replayLogSize ?? DEFAULT_REPLAY_LOG_SIZE);
    const first = options.firstServerSeq ?? 0;
    if (!Number.isSafeInteger(first) || first < 0) throw new RangeError(`firstServerSeq must be a non-negative integer, got ${String(first)}`);
    this.seq = first;
  }

  /** The `serverSeq` of the last committed envelope (`firstServerSeq` before any). Only grows. */
  get serverSeq(): number {
    return this.seq;
  }

  /** Capacity of the replay log, in envelopes. */
  get replayLogSize(): number {
    return this.log.capacity;
  }

  /** Creates a channel with its initial state. Throws if the URI is taken. */
  createChannel(uri: URI, kind: ChannelKind, initialState: ChannelState, options: ChannelOptions = {}): void {
    if (this.channels.has(uri)) throw new Error(`channel already exists: ${uri}`);
    const reused = this.removedAtSeq.seq === this.seq && this.removedAtSeq.uris.has(uri);
    const replayableFrom = reused ? this.seq + 1 : this.seq;
    this.channels.set(uri, { uri, kind, state: initialState, options, subscribers: new Set(), replayableFrom });
  }

  /** True when the channel exists now (lazily-resolvable channels count only once created). */
  hasChannel(uri: URI): boolean {
    return this.channels.has(uri);
  }

  /** Current state of a channel, or undefined. */
  getState(uri: URI): ChannelState | undefined {
    return this.channels.get(uri)?.state;
  }

  /** Read-only facts about a channel, or undefined. */
  getChannel(uri: URI): ChannelInfo | undefined {
    const channel = this.channels.get(uri);
    if (!channel) return undefined;
    return {
      uri: channel.uri,
      kind: channel.kind,
      state: channel.state,
      options: channel.options,
      subscriberCount: channel.subscribers.size,
    };
  }

  /** URIs of every existing channel, optionally of one kind. */
  listChannels(kind?: ChannelKind): URI[] {
    const out: URI[] = [];
    for (const channel of this.channels.values()) if (!kind || channel.kind === kind) out.push(channel.uri);
    return out;
  }

  /**
   * Applies an action through the shared reducer, assigns the next
   * `serverSeq`, records the envelope for replay and sends it to every
   * subscriber. Server-originated actions carry no `origin`.
   * Throws (changing nothing) if the channel does not exist or the reducer throws.
   * `firstRecipient` (the dispatching client's connection) gets the
   * envelope before the other subscribers, shortening its echo latency.
   */
  dispatch(uri: URI, action: StateAction, origin?: ActionOrigin, firstRecipient?: ChannelSubscriber): ActionEnvelope {
    const channel = this.channels.get(uri);
    if (!channel) throw new Error(`no such channel: ${uri}`);
    const next = reduce(channel.kind, channel.state, action);
    channel.state = next;
    this.seq += 1;
    const envelope: ActionEnvelope = origin
      ? { channel: uri, action, serverSeq: this.seq, origin }
      : ({ channel: uri, action, serverSeq: this.seq } as ActionEnvelope);
    this.log.append(envelope);
    this.fanOut(channel, envelope, firstRecipient);
    for (const listener of this.listeners) listener(envelope, channel.kind);
    return envelope;
  }

  /**
   * Removes a channel. Changeset subscribers first receive
   * `changeset/cleared` (AHP: "existing subscriptions receive
   * changeset/cleared and the server unsubscribes them"); then every
   * subscriber is unsubscribed and told via `channelRemoved`.
   */
  removeChannel(uri: URI): boolean {
    const channel = this.channels.get(uri);
    if (!channel) return false;
    if (channel.kind === 'changeset') {
      this.dispatch(uri, { type: 'changeset/cleared' } as StateAction);
    }
    this.channels.delete(uri);
    if (this.removedAtSeq.seq !== this.seq) this.removedAtSeq = { seq: this.seq, uris: new Set() };
    this.removedAtSeq.uris.add(uri);
    const subscribers = [...channel.subscribers];
    channel.subscribers.clear();
    for (const subscriber of subscribers) subscriber.channelRemoved(uri);
    return true;
  }

  /** Registers a resolver that creates channels of a URI scheme (e.g. `ahp-changeset:`) on demand. */
  registerResolver(scheme: string, resolver: ChannelResolver): void {
    const key = normalizeScheme(scheme);
    if (this.resolvers.has(key)) throw new Error(`a resolver for ${key} is already registered`);
    this.resolvers.set(key, resolver);
  }

  /**
   * Makes sure a channel exists, asking its scheme's resolver if needed.
   * Concurrent calls for the same URI share one resolution. Resolves to
   * undefined when the channel exists afterwards, else to the error.
   */
  async ensureChannel(uri: URI): Promise<ChannelResolveError | undefined> {
    if (this.channels.has(uri)) return undefined;
    const resolver = this.resolvers.get(schemeOf(uri));
    if (!resolver) return notFound(uri);
    let pending = this.resolving.get(uri);
    if (!pending) {
      pending = resolver(uri).finally(() => this.resolving.delete(uri));
      this.resolving.set(uri, pending);
    }
    let error: ChannelResolveError | void;
    try {
      error = await pending;
    } catch (err) {
      return { code: JsonRpcErrorCodes.InternalError, message: `could not produce ${uri}: ${(err as Error).message}` };
    }
    if (error) return error;
    return this.channels.has(uri) ? undefined : notFound(uri);
  }

  /**
   * Adds a subscriber to an existing channel and returns its snapshot,
   * atomically: every envelope after `fromSeq` reaches the subscriber.
   */
  subscribe(subscriber: ChannelSubscriber, uri: URI): Snapshot | undefined {
    const channel = this.channels.get(uri);
    if (!channel) return undefined;
    channel.subscribers.add(subscriber);
    return { resource: uri, state: channel.state, fromSeq: this.seq } as Snapshot;
  }

  /** Removes a subscriber from a channel; a no-op when not subscribed. */
  unsubscribe(subscriber: ChannelSubscriber, uri: URI): void {
    this.channels.get(uri)?.subscribers.delete(subscriber);
  }

  /** The channel's current state as a snapshot, or undefined if it does not exist. */
  snapshot(uri: URI): Snapshot | undefined {
    const channel = this.channels.get(uri);
    return channel ? ({ resource: uri, state: channel.state, fromSeq: this.seq } as Snapshot) : undefined;
  }

  /**
   * Envelopes committed after `seq`, oldest first, or undefined when the
   * log no longer reaches back to `seq` (or `seq` is from the future, e.g.
   * from before a restart) and the caller must send snapshots instead.
   */
  replaySince(seq: number): ActionEnvelope[] | undefined {
    if (seq > this.seq || seq < 0) return undefined;
    if (seq === this.seq) return [];
    const oldest = this.log.oldestSeq;
    if (oldest === undefined || seq < oldest - 1) return undefined;
    return this.log.since(seq);
  }

  /**
   * Whether a client holding the channel as of `seq` can be brought up to
   * date by replaying envelopes: false when the channel was created after
   * `seq` (the client cannot have its initial state) or does not exist.
   */
  canReplayChannel(uri: URI, seq: number): boolean {
    const channel = this.channels.get(uri);
    return channel !== undefined && seq >= channel.replayableFrom;
  }

  /**
   * Sends a protocol notification (e.g. `root/sessionAdded`) to the
   * subscribers of one channel: AHP delivers protocol notifications only to
   * clients subscribed to the channel they target. Not stored, not replayed.
   */
  notify<N extends keyof ServerNotificationMap>(uri: URI, method: N, params: ServerNotificationMap[N]): void {
    const channel = this.channels.get(uri);
    if (!channel || channel.subscribers.size === 0) return;
    const frame = frameFor(notificationFrame(method, params), channel.subscribers.size);
    for (const subscriber of channel.subscribers) subscriber.sendFrame(frame);
  }

  /** Calls `listener` for every committed envelope, until the returned subscription is disposed. */
  onEnvelope(listener: EnvelopeListener): Disposable {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  }

  private fanOut(channel: Channel, envelope: ActionEnvelope, first: ChannelSubscriber | undefined): void {
    if (channel.subscribers.size === 0) return;
    // Serialized and encoded once; every subscriber gets the same frame.
    const frame = frameFor(notificationFrame('action', envelope), channel.subscribers.size);
    const leader = first && channel.subscribers.has(first) ? first : undefined;
    if (leader) {
      // The dispatching client's echo is written before anyone else's copy is even queued.
      leader.sendFrame(frame);
      leader.flush?.();
    }
    for (const subscriber of channel.subscribers) if (subscriber !== leader) subscriber.sendFrame(frame);
  }
}

function frameFor(text: string, subscribers: number): OutboundFrame {
  return subscribers > 1 ? sharedFrame(text) : text;
}

function schemeOf(uri: URI): string {
  const colon = uri.indexOf(':');
  return colon < 0 ? '' : uri.slice(0, colon + 1).toLowerCase();
}

function normalizeScheme(scheme: string): string {
  const lower = scheme.toLowerCase();
  return lower.endsWith(':') ? lower : `${lower}:`;
}

function notFound(uri: URI): ChannelResolveError {
  return { code: AhpErrorCodes.NotFound, message: `channel not found: ${uri}` };
}
