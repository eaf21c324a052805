import WebSocket from 'ws';
import {
  AHP_PROTOCOL_VERSION,
  ROOT_CHANNEL,
  channelKindOf,
  isInboundMethod,
  type ActionEnvelope,
  type ChannelState,
  type InitializeParams,
  type InitializeResult,
  type JsonRpcError,
  type ReconnectResult,
  type Snapshot,
  type StateAction,
  type SubscribeResult,
  type URI,
} from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';
import { assertValidOutbound } from './schema.js';

/** Checks one message received from the server; returns problems (empty when valid). */
export type InboundMessageCheck = (message: unknown, requestMethod: string | undefined) => string[];

/** A JSON-RPC error response, thrown by {@link TestClient.request}. */
export class RpcResponseError extends Error {
  constructor(
    /** The method that failed. */
    readonly method: string,
    /** The error object from the response. */
    readonly error: JsonRpcError,
  ) {
    super(`${method} failed with ${error.code}: ${error.message}`);
  }

  /** The error code. */
  get code(): number {
    return this.error.code;
  }
}

/** Options for {@link TestClient.connect}. */
export interface ConnectOptions {
  /** Client id sent by `initialize`/`reconnect`; default a unique one. */
  clientId?: string;
  /**
   * Checks every received message; problems fail `assertValid`, `close` and
   * every pending wait. Default: {@link schemaCheck}. Pass `null` to disable.
   */
  check?: InboundMessageCheck | null;
  /** Bearer token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Extra HTTP headers for the upgrade request (e.g. `Origin`). */
  headers?: Record<string, string>;
  /** WebSocket subprotocols to offer (e.g. `bearer.<token>`). */
  protocols?: string[];
}

/** Options for {@link TestClient.initialize}. */
export interface InitializeOptions {
  /** Offered versions; default `[AHP_PROTOCOL_VERSION]`. */
  protocolVersions?: string[];
  /** Channels to subscribe to in the handshake; default `['ahp-root://']`. */
  initialSubscriptions?: URI[];
}

interface Waiter {
  match: (message: Record<string, unknown>) => boolean;
  resolve: (message: Record<string, unknown>) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

interface Mirrored {
  state: ChannelState;
  fromSeq: number;
}

let clientCounter = 0;

/**
 * The default inbound check: every message must match the AHP schemas
 * (`test/helpers/schema.ts`). Two exceptions: a rejection echo carries the
 * client's own action verbatim, which may be exactly what was invalid, so
 * only the envelope around it is checked; and results of methods that are
 * not AHP (extensions) have no schema.
 */
export const schemaCheck: InboundMessageCheck = (message, requestMethod) => {
  let checked = message;
  const m = message as Record<string, unknown>;
  if (m['method'] === 'action' && typeof m['params'] === 'object' && m['params'] !== null) {
    const envelope = m['params'] as Record<string, unknown>;
    if (typeof envelope['rejectionReason'] === 'string') {
      checked = { ...m, params: { ...envelope, action: { type: 'changeset/cleared' } } };
    }
  }
  if ('result' in m && requestMethod !== undefined && !isInboundMethod(requestMethod) && requestMethod !== 'reconnect') return [];
  try {
    assertValidOutbound(checked, requestMethod);
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
};

/**
 * A scripted AHP client over a real WebSocket. It keeps every message it
 * receives, mirrors subscribed channels by applying envelopes with the
 * shared reducers, and checks every message with the given schema check.
 */
export class TestClient {
  /** Every message received, in order. */
  readonly received: Record<string, unknown>[] = [];
  /** Every `action` envelope received, in order (rejections included). */
  readonly envelopes: ActionEnvelope[] = [];
  /** Problems found by the inbound message check. */
  readonly problems: string[] = [];
  /** The client id used by `initialize` and `reconnect`. */
  readonly clientId: string;
  /** Highest `serverSeq` seen (snapshots, results and envelopes). */
  lastSeenServerSeq = 0;

  private nextId = 1;
  private clientSeq = 0;
  private readonly pendingMethods = new Map<number | string, string>();
  private readonly waiters = new Set<Waiter>();
  private readonly mirror = new Map<URI, Mirrored>();
  private closeInfo: { code: number; reason: string } | undefined;
  private readonly closeWaiters: ((info: { code: number; reason: string }) => void)[] = [];

  private constructor(
    readonly socket: WebSocket,
    private readonly check: InboundMessageCheck | undefined,
    clientId: string,
  ) {
    this.clientId = clientId;
    socket.on('message', (data, isBinary) => this.onMessage(data.toString(), isBinary));
    socket.on('error', () => undefined);
    socket.on('close', (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      for (const waiter of this.waiters) waiter.reject(new Error(`socket closed (${code}) while waiting`));
      this.waiters.clear();
      for (const resolve of this.closeWaiters.splice(0)) resolve(this.closeInfo);
    });
  }

  /** Opens a WebSocket to `url`. */
  static async connect(url: string, options: ConnectOptions = {}): Promise<TestClient> {
    const headers = { ...options.headers, ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}) };
    const socket = new WebSocket(url, options.protocols ?? [], { perMessageDeflate: false, headers });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    clientCounter += 1;
    const check = options.check === null ? undefined : (options.check ?? schemaCheck);
    return new TestClient(socket, check, options.clientId ?? `test-client-${process.pid}-${clientCounter}`);
  }

  /** True while the socket is open. */
  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends `initialize` and records the snapshots. */
  async initialize(options: InitializeOptions = {}): Promise<InitializeResult> {
    const params: InitializeParams = {
      channel: ROOT_CHANNEL,
      protocolVersions: options.protocolVersions ?? [AHP_PROTOCOL_VERSION],
      clientId: this.clientId,
      initialSubscriptions: options.initialSubscriptions ?? [ROOT_CHANNEL],
    };
    return this.request<InitializeResult>('initialize', params);
  }

  /** Sends a request and resolves with its result; rejects with {@link RpcResponseError}. */
  async request<R = unknown>(method: string, params?: unknown, options: { timeoutMs?: number } = {}): Promise<R> {
    const id = this.nextId++;
    const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
    this.pendingMethods.set(id, method);
    const response = this.waitForMessage((m) => m['id'] === id && ('result' in m || 'error' in m), options.timeoutMs ?? 5000);
    this.socket.send(JSON.stringify(message));
    const reply = await response;
    if ('error' in reply) throw new RpcResponseError(method, reply['error'] as JsonRpcError);
    return reply['result'] as R;
  }

  /** Sends a request expected to fail and resolves with its error object. */
  async requestError(method: string, params?: unknown, options: { timeoutMs?: number } = {}): Promise<JsonRpcError> {
    try {
      await this.request(method, params, options);
    } catch (err) {
      if (err instanceof RpcResponseError) return err.error;
      throw err;
    }
    throw new Error(`${method} succeeded but an error was expected`);
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): void {
    this.socket.send(JSON.stringify(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }));
  }

  /** Sends one raw frame (text by default) for bad-input tests. */
  sendRaw(data: string | Buffer, options: { binary?: boolean } = {}): void {
    this.socket.send(data, { binary: options.binary ?? typeof data !== 'string' });
  }

  /** Subscribes and records the snapshot. */
  async subscribe(uri: URI): Promise<SubscribeResult> {
    return this.request<SubscribeResult>('subscribe', { channel: uri });
  }

  /** Unsubscribes and forgets the mirrored state. */
  unsubscribe(uri: URI): void {
    this.mirror.delete(uri);
    this.notify('unsubscribe', { channel: uri });
  }

  /** Dispatches a client action with the next `clientSeq`; returns that `clientSeq`. */
  dispatch(channel: URI, action: StateAction | Record<string, unknown>): number {
    this.clientSeq += 1;
    this.notify('dispatchAction', { channel, clientSeq: this.clientSeq, action });
    return this.clientSeq;
  }

  /** Sends `reconnect` and applies the replay or snapshots to the mirror. */
  async reconnect(subscriptions: URI[], lastSeenServerSeq = this.lastSeenServerSeq): Promise<ReconnectResult> {
    return this.request<ReconnectResult>('reconnect', {
      channel: ROOT_CHANNEL,
      clientId: this.clientId,
      lastSeenServerSeq,
      subscriptions,
    });
  }

  /** The mirrored (reduced) state of a subscribed channel. */
  state<S extends ChannelState = ChannelState>(uri: URI): S | undefined {
    return this.mirror.get(uri)?.state as S | undefined;
  }

  /** Adopts a snapshot into the mirror (e.g. from another client's reconnect). */
  adopt(snapshot: Snapshot): void {
    this.mirror.set(snapshot.resource, { state: snapshot.state, fromSeq: snapshot.fromSeq });
    this.seen(snapshot.fromSeq);
  }

  /** Resolves with the first received message (past or future) matching `predicate`. */
  waitForMessage(predicate: (message: Record<string, unknown>) => boolean, timeoutMs = 5000): Promise<Record<string, unknown>> {
    const past = this.received.find(predicate);
    if (past) return Promise.resolve(past);
    return this.waitForNext(predicate, timeoutMs);
  }

  /** Resolves with the next message received from now on that matches `predicate`. */
  waitForNext(predicate: (message: Record<string, unknown>) => boolean, timeoutMs = 5000): Promise<Record<string, unknown>> {
    if (this.closeInfo) return Promise.reject(new Error(`socket closed (${this.closeInfo.code})`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match: predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for a message`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Resolves with the first envelope (past or future) matching `predicate`. */
  async waitForEnvelope(predicate: (envelope: ActionEnvelope) => boolean, timeoutMs = 5000): Promise<ActionEnvelope> {
    const message = await this.waitForMessage((m) => m['method'] === 'action' && predicate(m['params'] as ActionEnvelope), timeoutMs);
    return message['params'] as ActionEnvelope;
  }

  /** Resolves with the first notification `method` (past or future) whose params match `predicate`. */
  async waitForNotification<P = unknown>(method: string, predicate: (params: P) => boolean = () => true, timeoutMs = 5000): Promise<P> {
    const message = await this.waitForMessage((m) => m['method'] === method && predicate(m['params'] as P), timeoutMs);
    return message['params'] as P;
  }

  /** Resolves when the socket closes, with the close code and reason. */
  waitForClose(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socket still open after ${timeoutMs} ms`)), timeoutMs);
      this.closeWaiters.push((info) => {
        clearTimeout(timer);
        resolve(info);
      });
    });
  }

  /** Throws if any received message failed the inbound check. */
  assertValid(): void {
    if (this.problems.length > 0) throw new Error(`invalid messages from the server:\n${this.problems.join('\n')}`);
  }

  /** Closes the socket and asserts every received message was valid. */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) {
      const closed = this.waitForClose(2000).catch(() => this.socket.terminate());
      this.socket.close(1000);
      await closed;
    }
    this.assertValid();
  }

  private onMessage(text: string, isBinary: boolean): void {
    let message: Record<string, unknown>;
    try {
      if (isBinary) throw new Error('binary frame');
      message = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      this.fail(`unparseable frame from the server (${(err as Error).message}): ${text.slice(0, 200)}`);
      return;
    }
    const id = message['id'];
    const requestMethod = typeof id === 'number' || typeof id === 'string' ? this.pendingMethods.get(id) : undefined;
    if (requestMethod !== undefined) this.pendingMethods.delete(id as number | string);
    if (this.check) {
      for (const problem of this.check(message, requestMethod)) this.fail(`${problem} in ${text.slice(0, 300)}`);
    }
    this.received.push(message);
    // Snapshots are adopted as their response arrives: envelopes that follow
    // in the same network read must apply on top of them, not be lost.
    if (requestMethod !== undefined && 'result' in message) this.adoptResult(requestMethod, message['result']);
    if (message['method'] === 'action') {
      const envelope = message['params'] as ActionEnvelope;
      this.envelopes.push(envelope);
      this.apply(envelope);
    }
    for (const waiter of this.waiters) {
      if (waiter.match(message)) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(message);
      }
    }
  }

  private adoptResult(method: string, result: unknown): void {
    if (typeof result !== 'object' || result === null) return;
    if (method === 'subscribe') {
      const snapshot = (result as SubscribeResult).snapshot;
      if (snapshot) this.adopt(snapshot);
    } else if (method === 'initialize') {
      const r = result as InitializeResult;
      this.seen(r.serverSeq);
      for (const snapshot of r.snapshots ?? []) this.adopt(snapshot);
    } else if (method === 'reconnect') {
      const r = result as ReconnectResult;
      if (r.type === 'snapshot') {
        for (const snapshot of r.snapshots) this.adopt(snapshot);
      } else {
        for (const envelope of r.actions) this.apply(envelope);
        for (const uri of r.missing) this.mirror.delete(uri);
      }
    }
  }

  private apply(envelope: ActionEnvelope): void {
    if (envelope.rejectionReason !== undefined) return;
    this.seen(envelope.serverSeq);
    const mirrored = this.mirror.get(envelope.channel);
    const kind = channelKindOf(envelope.channel);
    // Envelopes already contained in the snapshot are skipped.
    if (!mirrored || !kind || envelope.serverSeq <= mirrored.fromSeq) return;
    mirrored.state = reduce(kind, mirrored.state, envelope.action);
    mirrored.fromSeq = envelope.serverSeq;
  }

  private seen(seq: number): void {
    if (seq > this.lastSeenServerSeq) this.lastSeenServerSeq = seq;
  }

  private fail(problem: string): void {
    this.problems.push(problem);
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`invalid message from the server: ${problem}`));
    }
    this.waiters.clear();
  }
}
