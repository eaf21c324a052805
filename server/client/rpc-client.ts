/**
 * The client side's one connection to the server, used by the CLI's
 * commands, the agent hooks, the MCP server and starting a server in the
 * background: a WebSocket client (RFC 6455: the upgrade, masked frames out,
 * no extensions) over `node:net` (`node:tls` for a `wss:` URL), carrying
 * JSON-RPC 2.0, one message per text frame. It speaks what every client
 * speaks (`Authorization: Bearer <token>` on the upgrade, `initialize`
 * first), hands the server's notifications (`action` envelopes on the
 * channels subscribed to, `root/progress`) to listeners, answers pings, and
 * loads nothing but Node's own modules: a command waits on its start-up,
 * and an agent on the hook at every edit, so loading `ws` and
 * `vscode-jsonrpc` for a few requests cost more than the requests (see
 * docs/architecture.md, Dependencies).
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import type { ServerNotificationMap } from '../../protocol/common/notifications.js';
import type { URI } from '../../protocol/common/state.js';
import { AHP_PROTOCOL_VERSION } from '../../protocol/common/version.js';
import type { ParamsOf, RequestMethod, ResultOf } from '../../protocol/methods.js';
import { RemoteError } from './remote-error.js';

/** A request's params as arguments: optional when the method map allows none. */
type ParamsArgs<M extends RequestMethod> = undefined extends ParamsOf<M> ? [params?: ParamsOf<M>] : [params: ParamsOf<M>];

/** Options of {@link RpcClient.connect}. */
export interface RpcClientOptions {
  /** Bearer token, sent as `Authorization: Bearer <token>`; none when the server runs without one. */
  token?: string;
  /** Bound on connecting and on each request, in milliseconds (default 30 s). */
  timeoutMs?: number;
  /** Client id for `initialize` (default: `changeset-server-cli-<pid>`). */
  clientId?: string;
  /** Channels to subscribe to during `initialize`. */
  initialSubscriptions?: URI[];
}

/** What {@link RpcClient.onNotification} returns: stops the listener. */
export interface Disposable {
  dispose(): void;
}

/** RFC 6455 §1.3: appended to the key to make the accept value. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Largest upgrade response read. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Largest message read (the server's own frame limit is far below). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** JSON-RPC's "method not found", the answer to a request from the server (it sends none). */
const METHOD_NOT_FOUND = -32601;

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

/** A request sent and not answered yet. */
interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** A JSON-RPC message as received: an answer, a notification or (never from this server) a request. */
interface Incoming {
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** A JSON-RPC connection to the server, typed by the method map (`protocol/methods.ts`). */
export class RpcClient {
  private readonly key = randomBytes(16).toString('base64');
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<(params: never) => void>>();
  private nextId = 1;
  /** Bytes received and not parsed yet: the first chunk, then the later ones while they do not complete what is awaited. */
  private input: Buffer = Buffer.alloc(0);
  private later: Buffer[] = [];
  private laterBytes = 0;
  /** Bytes `input` must hold before parsing is worth trying again (the frame or head being received). */
  private awaited = 0;
  /** The fragments of the message being received. */
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private upgraded = false;
  /** Why no more requests can be made, once that is so. */
  private ended: string | undefined;
  private readonly opened: Promise<void>;
  private readonly gone: Promise<void>;
  private settleOpen: { resolve(): void; reject(error: Error): void } | undefined;

  private constructor(
    private readonly url: string,
    target: URL,
    private readonly socket: Socket,
    private readonly timeoutMs: number,
    token: string | undefined,
  ) {
    this.opened = new Promise<void>((resolve, reject) => {
      this.settleOpen = { resolve, reject };
    });
    this.socket.setNoDelay(true);
    this.gone = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('error', (error) => this.end(error.message));
    this.socket.on('close', () => this.end('the server closed the connection'));
    const lines = [
      `GET ${target.pathname}${target.search} HTTP/1.1`,
      `Host: ${target.host}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${this.key}`,
      'Sec-WebSocket-Version: 13',
      ...(token !== undefined ? [`Authorization: Bearer ${token}`] : []),
    ];
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** Opens a connection and completes the `initialize` handshake. */
  static async connect(url: string, options: RpcClientOptions = {}): Promise<RpcClient> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new Error(`cannot connect to ${url}: not a URL`);
    }
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:') throw new Error(`cannot connect to ${url}: not a ws: or wss: URL`);
    const timeoutMs = options.timeoutMs ?? 30_000;
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    let socket: Socket;
    if (target.protocol === 'wss:') {
      // Loaded only here: the server itself serves ws:, a wss: URL is a proxy in front of it.
      const { connect: connectTls } = await import('node:tls');
      socket = connectTls({ host, port: Number(target.port || 443), ...(isIP(host) === 0 ? { servername: host } : {}) });
    } else {
      socket = connectTcp({ host, port: Number(target.port || 80) });
    }
    const client = new RpcClient(url, target, socket, timeoutMs, options.token);
    const timer = setTimeout(() => client.end(`no answer within ${timeoutMs} ms`), timeoutMs);
    try {
      await client.opened;
    } finally {
      clearTimeout(timer);
    }
    await client.request('initialize', {
      channel: ROOT_CHANNEL,
      protocolVersions: [AHP_PROTOCOL_VERSION],
      clientId: options.clientId ?? `changeset-server-cli-${process.pid}`,
      initialSubscriptions: options.initialSubscriptions ?? [],
    });
    return client;
  }

  /**
   * Sends a request; rejects with {@link RemoteError} when the server
   * answers an error, and with an error naming the method when there is no
   * answer in time or the connection ends first. Params and result are
   * those of the method map (`protocol/methods.ts`); params may be left out
   * only where the map allows it.
   */
  request<M extends RequestMethod>(method: M, ...[params]: ParamsArgs<M>): Promise<ResultOf<M>> {
    if (this.ended !== undefined) return Promise.reject(new Error(`${method}: ${this.ended}`));
    const id = this.nextId++;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, {
        method,
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result as ResultOf<M>);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.sendMessage(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    });
  }

  /**
   * Calls `handler` with the params of every notification `method` the
   * server sends from now on (in the order it sent them), until the
   * returned disposable is disposed.
   */
  onNotification<N extends keyof ServerNotificationMap>(method: N, handler: (params: ServerNotificationMap[N]) => void): Disposable {
    let handlers = this.listeners.get(method);
    if (!handlers) this.listeners.set(method, (handlers = new Set()));
    const listener = handler as (params: never) => void;
    handlers.add(listener);
    return { dispose: () => handlers.delete(listener) };
  }

  /** Closes the connection (the closing handshake, bounded to a second); requests still waiting fail. */
  async close(): Promise<void> {
    if (this.ended === undefined) {
      this.send(OP_CLOSE, Buffer.from([0x03, 0xe8])); // 1000: normal closure
      this.end('the connection is closed', false);
    }
    const timer = setTimeout(() => this.socket.destroy(), 1000);
    await this.gone;
    clearTimeout(timer);
  }

  /** No more requests: pending ones fail with `reason`; the socket goes unless the closing handshake is under way. */
  private end(reason: string, destroy = true): void {
    if (this.ended === undefined) {
      this.ended = reason;
      this.settleOpen?.reject(new Error(`cannot connect to ${this.url}: ${reason}`));
      this.settleOpen = undefined;
      for (const [id, request] of this.pending) {
        this.pending.delete(id);
        request.reject(new Error(`${request.method}: ${reason}`));
      }
    }
    if (destroy) this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    if (this.input.length === 0) this.input = chunk;
    else {
      // A large message arrives in many chunks: they are joined once it is all there, not at each chunk.
      this.later.push(chunk);
      this.laterBytes += chunk.length;
      if (this.input.length + this.laterBytes < this.awaited) return;
      this.input = Buffer.concat([this.input, ...this.later]);
      this.later = [];
      this.laterBytes = 0;
    }
    if (!this.upgraded && !this.readUpgrade()) return;
    try {
      while (!this.socket.destroyed) {
        const frame = readFrame(this.input);
        if (typeof frame === 'number') {
          this.awaited = frame;
          return;
        }
        this.input = this.input.subarray(frame.size);
        this.awaited = 0;
        this.onFrame(frame.fin, frame.opcode, frame.payload);
      }
    } catch (error) {
      this.end((error as Error).message);
    }
  }

  /** Reads the upgrade response once it is all there; false while it is not (or when it refused). */
  private readUpgrade(): boolean {
    const headEnd = this.input.indexOf('\r\n\r\n');
    if (headEnd < 0) {
      if (this.input.length > MAX_HEAD_BYTES) this.refuse(`${this.url} answered with an oversized response`);
      return false;
    }
    const [statusLine = '', ...headerLines] = this.input.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
    if (status !== 101) {
      this.refuse(
        status === 401
          ? `${this.url} refused the token (HTTP 401)`
          : status === 403
            ? `${this.url} refused this origin (HTTP 403)`
            : `${this.url} answered HTTP ${status}`,
      );
      return false;
    }
    const headers = new Map<string, string>();
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const accept = createHash('sha1').update(`${this.key}${WEBSOCKET_GUID}`).digest('base64');
    if (
      headers.get('upgrade')?.toLowerCase() !== 'websocket' ||
      headers.get('sec-websocket-accept') !== accept ||
      headers.has('sec-websocket-extensions') ||
      headers.has('sec-websocket-protocol')
    ) {
      this.refuse(`${this.url} did not complete the WebSocket upgrade`);
      return false;
    }
    this.upgraded = true;
    this.input = this.input.subarray(headEnd + 4);
    this.settleOpen?.resolve();
    this.settleOpen = undefined;
    return true;
  }

  /** The upgrade failed: the message is the whole error (not prefixed by "cannot connect"). */
  private refuse(message: string): void {
    this.settleOpen?.reject(new Error(message));
    this.settleOpen = undefined;
    this.end(message);
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OP_TEXT:
      case OP_BINARY:
      case OP_CONTINUATION: {
        if ((opcode === OP_CONTINUATION) !== this.fragments.length > 0) throw new Error('the server sent a frame out of order');
        this.fragmentBytes += payload.length;
        if (this.fragmentBytes > MAX_MESSAGE_BYTES) throw new Error(`the server sent a message over ${MAX_MESSAGE_BYTES} bytes`);
        this.fragments.push(payload);
        if (!fin) return;
        const message = this.fragments.length === 1 ? payload : Buffer.concat(this.fragments);
        this.fragments = [];
        this.fragmentBytes = 0;
        this.deliver(message.toString('utf8'));
        return;
      }
      case OP_CLOSE:
        // The server's close: answered (unless it answers ours), then the socket ends once the server has closed it.
        if (this.ended === undefined) this.send(OP_CLOSE, payload.subarray(0, 2));
        this.end('the server closed the connection', false);
        this.socket.end();
        return;
      case OP_PING:
        this.send(OP_PONG, payload);
        return;
      case OP_PONG:
        return;
      default:
        throw new Error(`the server sent an unknown frame (opcode ${opcode})`);
    }
  }

  /** Hands an answer to its request and a notification to its listeners; what is neither is dropped. */
  private deliver(text: string): void {
    let message: Incoming;
    try {
      message = JSON.parse(text) as Incoming;
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    if (typeof message.method === 'string') {
      if (message.id === undefined) this.notify(message.method, message.params);
      else if (typeof message.id === 'number' || typeof message.id === 'string') {
        this.sendMessage({ jsonrpc: '2.0', id: message.id, error: { code: METHOD_NOT_FOUND, message: `Unhandled method ${message.method}` } });
      }
      return;
    }
    if (typeof message.id !== 'number') return;
    const request = this.pending.get(message.id);
    if (!request) return;
    this.pending.delete(message.id);
    const error = message.error;
    if (error !== undefined && error !== null) {
      request.reject(
        new RemoteError(
          request.method,
          typeof error.code === 'number' ? error.code : 0,
          typeof error.message === 'string' ? error.message : 'error',
          error.data,
        ),
      );
    } else {
      request.resolve(message.result);
    }
  }

  /** Calls the listeners of a notification; one that throws does not keep the others from it. */
  private notify(method: string, params: unknown): void {
    const handlers = this.listeners.get(method);
    if (!handlers) return;
    for (const handler of [...handlers]) {
      try {
        (handler as (params: unknown) => void)(params);
      } catch {
        // a listener's own failure is not the connection's
      }
    }
  }

  private sendMessage(message: object): void {
    this.send(OP_TEXT, Buffer.from(JSON.stringify(message), 'utf8'));
  }

  /** Writes one frame, masked as a client must (RFC 6455 §5.3). */
  private send(opcode: number, payload: Buffer): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    const length = payload.length;
    const head = length < 126 ? 2 : length < 0x10000 ? 4 : 10;
    const frame = Buffer.allocUnsafe(head + 4 + length);
    frame[0] = 0x80 | opcode;
    if (head === 2) frame[1] = 0x80 | length;
    else if (head === 4) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(length, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(length), 2);
    }
    const mask = randomBytes(4);
    mask.copy(frame, head);
    for (let i = 0; i < length; i++) frame[head + 4 + i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(frame);
  }
}

/**
 * One frame from the start of `input`; while it is incomplete, the number
 * of bytes `input` must hold for it (or for its length) to be read. Throws
 * on what a server may not send.
 */
function readFrame(input: Buffer): { fin: boolean; opcode: number; payload: Buffer; size: number } | number {
  if (input.length < 2) return 2;
  const first = input[0]!;
  const second = input[1]!;
  if ((first & 0x70) !== 0) throw new Error('the server sent a frame with reserved bits set');
  if ((second & 0x80) !== 0) throw new Error('the server sent a masked frame');
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (input.length < 4) return 4;
    length = input.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (input.length < 10) return 10;
    const long = input.readBigUInt64BE(2);
    if (long > BigInt(MAX_MESSAGE_BYTES)) throw new Error(`the server sent a message over ${MAX_MESSAGE_BYTES} bytes`);
    length = Number(long);
    offset = 10;
  }
  if (input.length < offset + length) return offset + length;
  return { fin: (first & 0x80) !== 0, opcode: first & 0x0f, payload: input.subarray(offset, offset + length), size: offset + length };
}
