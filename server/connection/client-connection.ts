import { createMessageConnection, NullLogger, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import type { Snapshot, URI } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/channel-store.js';
import type { ChannelSubscriber } from '../channels/types.js';
import { notificationFrame, type OutboundFrame } from '../channels/frames.js';
import type { PeerCloseInfo, WsPeer } from '../transport/ws-peer.js';
import { DomainError, internalError, invalidParams, invalidRequest } from '../domain-error.js';
import { methodNotFound } from './errors.js';
import type { MethodContext, MethodRegistry } from './method-registry.js';

/** Checks params against the protocol's validator for a method; a message naming the field, or undefined. */
export type ProtocolParamsCheck = (method: string, params: unknown) => string | undefined;

/** What a connection needs from the server. */
export interface ConnectionDeps {
  /** The channel store. */
  store: ChannelStore;
  /** Methods served. */
  registry: MethodRegistry;
  /** Default params check for methods registered without their own. */
  checkParams: ProtocolParamsCheck;
  /** Reports unexpected handler failures (they are answered with -32603). */
  onInternalError?: (method: string, err: unknown) => void;
}

let nextConnectionId = 1;

/**
 * One client: the JSON-RPC connection over its WebSocket peer, its
 * handshake state and its subscriptions. It is the store's subscriber.
 */
export class ClientConnection implements ChannelSubscriber {
  /** Server-assigned connection id (diagnostics; not the client's `clientId`). */
  readonly id = `conn-${nextConnectionId++}`;
  /** Channels this connection is subscribed to. */
  readonly subscriptions = new Set<URI>();

  private readonly rpc: MessageConnection;
  /** What handlers get; `clientId` is set by the handshake. */
  private readonly ctx: { -readonly [K in keyof MethodContext]: MethodContext[K] };
  private handshake: { clientId: string; protocolVersion: string } | undefined;
  private handshakeClaimed = false;

  constructor(
    private readonly peer: WsPeer,
    private readonly deps: ConnectionDeps,
  ) {
    this.ctx = {
      connection: this,
      store: deps.store,
      clientId: undefined,
      notify: (method, params) => this.notify(method, params),
      onClose: (listener) => this.onClose(() => listener()),
    };
    this.rpc = createMessageConnection(peer.reader, peer.writer, NullLogger);
    this.rpc.onRequest((method, params) => this.handleRequest(method, params));
    this.rpc.onNotification((method, params) => this.handleNotification(method, params));
    peer.onClose(() => this.cleanUp());
    this.rpc.listen();
  }

  /** True once `initialize` (or `reconnect`) succeeded. */
  get isInitialized(): boolean {
    return this.handshake !== undefined;
  }

  /** The client's own id from `initialize`/`reconnect`; undefined before. */
  get clientId(): string | undefined {
    return this.handshake?.clientId;
  }

  /** The negotiated protocol version; undefined before the handshake. */
  get protocolVersion(): string | undefined {
    return this.handshake?.protocolVersion;
  }

  /** True until the socket closes. */
  get isOpen(): boolean {
    return this.peer.isOpen;
  }

  /**
   * Claims the connection's one `initialize`. False when an `initialize`
   * already ran or is in flight (handlers may run concurrently).
   */
  claimInitialize(): boolean {
    if (this.handshakeClaimed || this.handshake) return false;
    this.handshakeClaimed = true;
    return true;
  }

  /** Records a completed handshake. */
  markInitialized(clientId: string, protocolVersion: string): void {
    this.handshake = { clientId, protocolVersion };
    this.ctx.clientId = clientId;
  }

  /** Subscribes to an existing channel and returns its snapshot (undefined if it does not exist). */
  subscribeTo(uri: URI): Snapshot | undefined {
    const snapshot = this.deps.store.subscribe(this, uri);
    if (snapshot) this.subscriptions.add(uri);
    return snapshot;
  }

  /** Drops one subscription. */
  unsubscribeFrom(uri: URI): void {
    this.subscriptions.delete(uri);
    this.deps.store.unsubscribe(this, uri);
  }

  /** Store callback: one serialized `action` frame for a subscribed channel. */
  sendFrame(frame: OutboundFrame): void {
    this.peer.send(frame);
  }

  /** Store callback: writes what was sent to this client so far now (the echo of its own action). */
  flush(): void {
    this.peer.flush();
  }

  /** Store callback: a subscribed channel went away. */
  channelRemoved(uri: URI): void {
    this.subscriptions.delete(uri);
  }

  /** Sends a notification to this client only. */
  notify(method: string, params: unknown): void {
    this.peer.send(notificationFrame(method, params));
  }

  /** Closes the connection after pending responses are written. */
  closeSoon(code: number, reason: string): void {
    setImmediate(() => this.peer.close(code, reason));
  }

  /** Registers a listener for the end of this connection. */
  onClose(listener: (info: PeerCloseInfo) => void): void {
    this.peer.onClose(listener);
  }

  private async handleRequest(method: string, params: unknown): Promise<unknown> {
    try {
      return await this.answer(method, params);
    } catch (err) {
      if (!(err instanceof DomainError)) this.deps.onInternalError?.(method, err);
      throw toResponseError(method, err);
    }
  }

  private async answer(method: string, params: unknown): Promise<unknown> {
    const entry = this.deps.registry.get(method);
    if (entry?.kind !== 'request') throw methodNotFound(method);
    if (!this.handshake && !entry.options.allowBeforeInitialize) {
      throw invalidRequest(`"${method}" is not allowed before "initialize"`);
    }
    const problem = entry.check ? entry.check(params) : this.deps.checkParams(method, params);
    if (problem !== undefined) throw invalidParams(problem);
    return entry.handler(params as never, this.ctx);
  }

  private async handleNotification(method: string, params: unknown): Promise<void> {
    const entry = this.deps.registry.get(method);
    // Notifications cannot be answered: unknown, premature or malformed ones are dropped.
    if (entry?.kind !== 'notification' || !this.handshake) return;
    const problem = entry.check ? entry.check(params) : this.deps.checkParams(method, params);
    if (problem !== undefined) return;
    try {
      await entry.handler(params as never, this.ctx);
    } catch (err) {
      this.deps.onInternalError?.(method, err);
    }
  }

  private cleanUp(): void {
    for (const uri of this.subscriptions) this.deps.store.unsubscribe(this, uri);
    this.subscriptions.clear();
    this.rpc.dispose();
  }
}

/**
 * The JSON-RPC error response for what a handler threw: a domain error with
 * its own code, anything else an internal error naming the method (the
 * handler's failure is logged by the caller).
 */
function toResponseError(method: string, error: unknown): ResponseError<unknown> {
  const domain = error instanceof DomainError ? error : internalError(`"${method}" failed: ${error instanceof Error ? error.message : String(error)}`);
  return new ResponseError(domain.code, domain.message, domain.data);
}
