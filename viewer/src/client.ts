/**
 * The viewer's AHP client: handshake, subscriptions, write-ahead dispatch,
 * and recovery from a dropped connection with `reconnect`
 * (`lastSeenServerSeq` plus every subscribed channel), falling back to a
 * fresh `initialize` and fresh snapshots when the server cannot resume.
 */
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import type { ActionEnvelope, ReconnectResult, Snapshot, StateAction, URI } from '../../protocol/index.js';
import { Emitter } from './events.js';
import { ChannelMirror } from './mirror.js';
import type { ParamsOf, RequestMethod, ResultOf } from '../../protocol/methods.js';
import { ConnectionLost, RpcSocket, redact } from './rpc.js';

/** The protocol version this client speaks (AHP 0.6). */
const PROTOCOL_VERSION = '0.6.0';

/** Where the connection stands, for the status indicator. */
export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting';

/** Events the client emits. */
export interface ClientEvents {
  [name: string]: unknown;
  /** The connection status changed. */
  status: ConnectionStatus;
  /** A mirrored channel's rendered state changed. */
  channel: URI;
  /** Every envelope received, after it was applied (hooks that need action details, like turn summaries). */
  envelope: ActionEnvelope;
  /** The server refused an action this client dispatched. */
  rejected: { channel: URI; action: StateAction; reason: string };
  /** A root protocol notification (`root/sessionAdded`, …). */
  notification: { method: string; params: unknown };
  /** The connection was re-established; protocol notifications were missed, so lists must be re-fetched. */
  resynced: undefined;
  /** A channel the client was subscribed to no longer exists. */
  gone: URI;
}

/** Delay before the n-th reconnection attempt: quick first, then backing off to 5 s. */
function backoff(attempt: number): number {
  return Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
}

/** An AHP client bound to one server URL. */
export class ViewerClient extends Emitter<ClientEvents> {
  /** Stable across reconnections, so the server can match our echoes and replay. */
  readonly clientId = `viewer-${crypto.randomUUID()}`;
  /** Mirrored channel states with pending optimistic actions. */
  readonly mirror = new ChannelMirror(() => this.clientId);
  private rpc: RpcSocket | undefined;
  private connectionStatus: ConnectionStatus = 'connecting';
  private clientSeq = 0;
  private lastSeenServerSeq = 0;
  /** Channels we want; re-subscribed after a reconnection. */
  private readonly wanted = new Set<URI>([ROOT_CHANNEL]);
  private attempt = 0;
  private stopped = false;

  constructor(private readonly url: string) {
    super();
  }

  /** Current connection status. */
  get status(): ConnectionStatus {
    return this.connectionStatus;
  }

  /** Connects and completes the handshake, retrying until it succeeds. */
  async start(): Promise<void> {
    for (;;) {
      try {
        await this.connect(false);
        return;
      } catch (error) {
        if (this.stopped) throw error;
        await sleep(backoff(this.attempt++));
      }
    }
  }

  /** Closes the connection for good. */
  stop(): void {
    this.stopped = true;
    this.rpc?.close();
  }

  /** Sends a request (typed by the method map, `protocol/methods.ts`); rejects with `RpcError` or `ConnectionLost`. */
  request<M extends RequestMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    if (!this.rpc) return Promise.reject(new ConnectionLost(`not connected (${method})`));
    return this.rpc.request(method, params);
  }

  /** Subscribes (again) to a channel and mirrors its snapshot. */
  async subscribe(uri: URI): Promise<void> {
    // A subscription already on its way is shared, not asked for twice.
    const pending = this.subscribing.get(uri);
    if (pending) return pending;
    this.wanted.add(uri);
    const done = this.request('subscribe', { channel: uri })
      .then((result) => {
        if (result.snapshot) this.adopt(result.snapshot);
      })
      .finally(() => this.subscribing.delete(uri));
    this.subscribing.set(uri, done);
    return done;
  }

  private readonly subscribing = new Map<URI, Promise<void>>();

  /** Adds channels to subscribe to with the handshake (called before `start`, it saves a round trip each). */
  want(uris: Iterable<URI>): void {
    for (const uri of uris) this.wanted.add(uri);
  }

  /** Stops mirroring a channel. */
  unsubscribe(uri: URI): void {
    this.wanted.delete(uri);
    this.mirror.drop(uri);
    this.rpc?.notify('unsubscribe', { channel: uri });
  }

  /** True while the channel is wanted (subscribed or being re-subscribed). */
  isSubscribed(uri: URI): boolean {
    return this.wanted.has(uri);
  }

  /**
   * Dispatches a client action write-ahead: it is applied to the mirror at
   * once and reconciled when the echo (or a rejection) arrives. When the
   * socket is down the action is not sent and its effect is reverted.
   */
  dispatch(channel: URI, action: StateAction): void {
    const clientSeq = ++this.clientSeq;
    if (!this.mirror.addPending(channel, { clientSeq, action })) return;
    this.emit('channel', channel);
    const sent = this.rpc?.notify('dispatchAction', { channel, clientSeq, action }) ?? false;
    if (!sent) {
      this.mirror.removePending(channel, clientSeq);
      this.emit('channel', channel);
      this.emit('rejected', { channel, action, reason: 'not connected to the server; try again once it reconnects' });
    }
  }

  private async connect(resume: boolean): Promise<void> {
    this.setStatus(resume ? 'reconnecting' : 'connecting');
    const rpc = await RpcSocket.open(this.url, (method, params) => this.onNotification(method, params));
    rpc.onClose(() => this.onClosed(rpc));
    this.rpc = rpc;
    if (resume) await this.resume(rpc);
    else await this.initialize(rpc);
    this.attempt = 0;
    this.setStatus('open');
    if (resume) this.emit('resynced', undefined);
  }

  private async initialize(rpc: RpcSocket): Promise<void> {
    const result = await rpc.request('initialize', {
      channel: ROOT_CHANNEL,
      protocolVersions: [PROTOCOL_VERSION],
      clientId: this.clientId,
      clientInfo: { name: 'changeset-server-viewer', title: 'changeset-server web viewer' },
      initialSubscriptions: [...this.wanted],
      locale: navigator.language,
    });
    this.seen(result.serverSeq);
    const got = new Set<URI>();
    for (const snapshot of result.snapshots) {
      got.add(snapshot.resource);
      this.adopt(snapshot);
    }
    // initialize skips channels it cannot produce; subscribe says why (or produces them lazily).
    for (const uri of this.wanted) {
      if (got.has(uri)) continue;
      await this.subscribe(uri).catch(() => this.lose(uri));
    }
  }

  /** Resumes after a drop: replayed envelopes when the gap is in the server's log, else fresh snapshots. */
  private async resume(rpc: RpcSocket): Promise<void> {
    let result: ReconnectResult;
    try {
      result = await rpc.request('reconnect', {
        channel: ROOT_CHANNEL,
        clientId: this.clientId,
        lastSeenServerSeq: this.lastSeenServerSeq,
        subscriptions: [...this.wanted],
      });
    } catch (error) {
      if (error instanceof ConnectionLost) throw error;
      // The server would not resume us: start over with a fresh handshake and fresh snapshots.
      await this.initialize(rpc);
      return;
    }
    for (const uri of this.mirror.clearPending()) this.emit('channel', uri);
    if (result.type === 'replay') {
      for (const envelope of result.actions) this.onEnvelope(envelope);
      for (const uri of result.missing) this.lose(uri);
    } else {
      const got = new Set<URI>();
      for (const snapshot of result.snapshots) {
        got.add(snapshot.resource);
        this.adopt(snapshot);
      }
      for (const uri of [...this.wanted]) if (!got.has(uri)) this.lose(uri);
    }
  }

  private onClosed(rpc: RpcSocket): void {
    if (this.rpc !== rpc || this.stopped) return;
    this.rpc = undefined;
    this.setStatus('reconnecting');
    void this.reconnectLoop();
  }

  private async reconnectLoop(): Promise<void> {
    while (!this.stopped) {
      await sleep(backoff(this.attempt++));
      try {
        await this.connect(true);
        return;
      } catch {
        // keep trying; the status indicator says we are reconnecting
      }
    }
  }

  private onNotification(method: string, params: unknown): void {
    if (method === 'action') this.onEnvelope(params as ActionEnvelope);
    else this.emit('notification', { method, params });
  }

  private onEnvelope(envelope: ActionEnvelope): void {
    if (envelope.rejectionReason === undefined) this.seen(envelope.serverSeq);
    const outcome = this.mirror.apply(envelope);
    if (outcome.changed) this.emit('channel', envelope.channel);
    if (outcome.rejected) this.emit('rejected', { channel: envelope.channel, ...outcome.rejected });
    this.emit('envelope', envelope);
    // The server unsubscribes us from a changeset it removed (after sending `changeset/cleared`).
    if (envelope.action.type === 'changeset/cleared' && envelope.origin === undefined) this.wanted.delete(envelope.channel);
  }

  private adopt(snapshot: Snapshot): void {
    this.seen(snapshot.fromSeq);
    this.mirror.adopt(snapshot);
    this.emit('channel', snapshot.resource);
  }

  private lose(uri: URI): void {
    this.wanted.delete(uri);
    this.mirror.drop(uri);
    this.emit('gone', uri);
  }

  private seen(seq: number): void {
    if (seq > this.lastSeenServerSeq) this.lastSeenServerSeq = seq;
  }

  private setStatus(status: ConnectionStatus): void {
    if (status === this.connectionStatus) return;
    this.connectionStatus = status;
    this.emit('status', status);
  }

  /** The server URL without its token. */
  get displayUrl(): string {
    return redact(this.url);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => window.setTimeout(resolve, ms));
}
