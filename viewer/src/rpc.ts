/**
 * One JSON-RPC 2.0 connection over a WebSocket, one message per text frame.
 * Requests resolve with their result or reject with {@link RpcError};
 * notifications from the server go to a single handler. The socket is
 * replaceable: the session layer opens a new one after a drop and keeps
 * this object's listeners.
 */
import type { JsonRpcError } from '../../protocol/index.js';
import type { NotificationMethod, ParamsOf, RequestMethod, ResultOf } from '../../protocol/methods.js';

/** A JSON-RPC error response, as a throwable. */
export class RpcError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The error's structured detail, when the server sent one. */
  readonly data: unknown;

  constructor(
    readonly method: string,
    error: JsonRpcError,
  ) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

/** Thrown for requests that were in flight when the socket closed. */
export class ConnectionLost extends Error {}

interface Pending {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/** Receives server notifications: `action`, `root/sessionAdded`, … */
export type NotificationHandler = (method: string, params: unknown) => void;

/** A JSON-RPC peer on one WebSocket. */
export class RpcSocket {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedListeners: ((event: CloseEvent) => void)[] = [];

  private constructor(
    private readonly socket: WebSocket,
    private readonly onNotification: NotificationHandler,
  ) {
    socket.addEventListener('message', (event) => this.onMessage(event));
    socket.addEventListener('close', (event) => {
      for (const p of this.pending.values()) p.reject(new ConnectionLost(`connection closed (${event.code}) during ${p.method}`));
      this.pending.clear();
      for (const listener of this.closedListeners) listener(event);
    });
  }

  /** Opens a socket; rejects when it fails to open (e.g. the upgrade was refused). */
  static open(url: string, onNotification: NotificationHandler): Promise<RpcSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const failed = (): void => reject(new ConnectionLost(`could not connect to ${redact(url)}`));
      socket.addEventListener('error', failed, { once: true });
      socket.addEventListener(
        'open',
        () => {
          socket.removeEventListener('error', failed);
          resolve(new RpcSocket(socket, onNotification));
        },
        { once: true },
      );
    });
  }

  /** Calls `listener` once the socket has closed (after pending requests were rejected). */
  onClose(listener: (event: CloseEvent) => void): void {
    this.closedListeners.push(listener);
  }

  /** True while frames can be sent. */
  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends a request and resolves with its result; params and result are those of the method map (`protocol/methods.ts`). */
  request<M extends RequestMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    if (!this.isOpen) return Promise.reject(new ConnectionLost(`not connected (${method})`));
    const id = this.nextId++;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (r: unknown) => void, reject });
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** Sends a notification; returns false when the socket is not open (nothing was sent). */
  notify<M extends NotificationMethod>(method: M, params: ParamsOf<M>): boolean {
    if (!this.isOpen) return false;
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
    return true;
  }

  /** Closes the socket (normal closure). */
  close(): void {
    this.socket.close(1000);
  }

  private onMessage(event: MessageEvent): void {
    if (typeof event.data !== 'string') return;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(event.data) as Record<string, unknown>;
    } catch {
      return;
    }
    const id = message['id'];
    if (typeof id === 'number' && ('result' in message || 'error' in message)) {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if ('error' in message) p.reject(new RpcError(p.method, message['error'] as JsonRpcError));
      else p.resolve(message['result']);
      return;
    }
    if (typeof message['method'] === 'string' && !('id' in message)) this.onNotification(message['method'], message['params']);
  }
}

/** The URL without its token, for messages shown to the user. */
export function redact(url: string): string {
  return url.replace(/([?&]token=)[^&]*/g, '$1…');
}
