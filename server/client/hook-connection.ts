/**
 * The agent hook's connection to the server: a WebSocket client (RFC 6455:
 * the upgrade, masked text frames out, no extensions) over `node:net`,
 * carrying JSON-RPC 2.0 requests, one message per text frame. It speaks
 * what every client speaks (`Authorization: Bearer <token>` on the upgrade,
 * `initialize` first) and loads nothing but Node's own modules: an agent
 * waits on the hook at every edit, and loading `ws` and `vscode-jsonrpc`
 * for the three requests an event makes cost more than the requests (see
 * docs/architecture.md, Dependencies). The CLI and the MCP server keep
 * `RpcClient` (notifications, subscriptions).
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import { AHP_PROTOCOL_VERSION } from '../../protocol/common/version.js';
import type { ParamsOf, RequestMethod, ResultOf } from '../../protocol/methods.js';
import { RemoteError } from './remote-error.js';

/** Options of {@link HookConnection.connect}. */
export interface HookConnectionOptions {
  /** Bearer token, sent as `Authorization: Bearer <token>`; none when the server runs without one. */
  token?: string;
  /** Bound on connecting and on each request, in milliseconds. */
  timeoutMs: number;
  /** Client id for `initialize`. */
  clientId: string;
}

/** RFC 6455 §1.3: appended to the key to make the accept value. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Largest upgrade response read. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Largest message read (the server's own frame limit is far below). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

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

/** A JSON-RPC connection to the server for one hook event: requests only. */
export class HookConnection {
  private readonly socket: Socket;
  private readonly key = randomBytes(16).toString('base64');
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Bytes received and not parsed yet. */
  private input: Buffer = Buffer.alloc(0);
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
    private readonly options: HookConnectionOptions,
  ) {
    this.opened = new Promise<void>((resolve, reject) => {
      this.settleOpen = { resolve, reject };
    });
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    this.socket = connect({ host, port: Number(target.port || 80) });
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
      ...(options.token !== undefined ? [`Authorization: Bearer ${options.token}`] : []),
    ];
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** Opens a connection and completes the `initialize` handshake. */
  static async connect(url: string, options: HookConnectionOptions): Promise<HookConnection> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new Error(`cannot connect to ${url}: not a URL`);
    }
    if (target.protocol !== 'ws:') throw new Error(`cannot connect to ${url}: not a ws: URL`);
    const connection = new HookConnection(url, target, options);
    const timer = setTimeout(() => connection.end(`no answer within ${options.timeoutMs} ms`), options.timeoutMs);
    try {
      await connection.opened;
    } finally {
      clearTimeout(timer);
    }
    await connection.request('initialize', {
      channel: ROOT_CHANNEL,
      protocolVersions: [AHP_PROTOCOL_VERSION],
      clientId: options.clientId,
      initialSubscriptions: [],
    });
    return connection;
  }

  /** Sends a request; rejects with {@link RemoteError} when the server answers an error. */
  request<M extends RequestMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    if (this.ended !== undefined) return Promise.reject(new Error(`${method}: ${this.ended}`));
    const id = this.nextId++;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
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
      this.send(OP_TEXT, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params }), 'utf8'));
    });
  }

  /** Closes the connection (the closing handshake, bounded to a second). */
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
      for (const [id, request] of this.pending) {
        this.pending.delete(id);
        request.reject(new Error(`${request.method}: ${reason}`));
      }
    }
    if (destroy) this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.input = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk]);
    if (!this.upgraded && !this.readUpgrade()) return;
    try {
      while (this.ended === undefined || !this.socket.destroyed) {
        const frame = readFrame(this.input);
        if (!frame) return;
        this.input = this.input.subarray(frame.size);
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

  /** Hands an answer to its request; notifications and anything else are not the hook's business. */
  private deliver(text: string): void {
    let message: { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null || typeof message.id !== 'number') return;
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

/** One frame from the start of `input`, or undefined while it is incomplete; throws on what a server may not send. */
function readFrame(input: Buffer): { fin: boolean; opcode: number; payload: Buffer; size: number } | undefined {
  if (input.length < 2) return undefined;
  const first = input[0]!;
  const second = input[1]!;
  if ((first & 0x70) !== 0) throw new Error('the server sent a frame with reserved bits set');
  if ((second & 0x80) !== 0) throw new Error('the server sent a masked frame');
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (input.length < 4) return undefined;
    length = input.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (input.length < 10) return undefined;
    const long = input.readBigUInt64BE(2);
    if (long > BigInt(MAX_MESSAGE_BYTES)) throw new Error(`the server sent a message over ${MAX_MESSAGE_BYTES} bytes`);
    length = Number(long);
    offset = 10;
  }
  if (input.length < offset + length) return undefined;
  return { fin: (first & 0x80) !== 0, opcode: first & 0x0f, payload: input.subarray(offset, offset + length), size: offset + length };
}
