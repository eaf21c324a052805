import { createMessageConnection, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import WebSocket from 'ws';
import { AHP_PROTOCOL_VERSION, ROOT_CHANNEL, type ServerNotificationMap, type URI } from '../../protocol/index.js';
import type { ParamsOf, RequestMethod, ResultOf } from '../../protocol/methods.js';
import { WsMessageReader, WsMessageWriter } from '../transport/ws-adapters.js';
import { RemoteError } from './remote-error.js';

/** A request's params as arguments: optional when the method map allows none. */
type ParamsArgs<M extends RequestMethod> = undefined extends ParamsOf<M> ? [params?: ParamsOf<M>] : [params: ParamsOf<M>];

/** Options of {@link RpcClient.connect}. */
export interface RpcClientOptions {
  /** Bearer token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Bound on connecting and on each request, in milliseconds (default 30 s). */
  timeoutMs?: number;
  /** Client id for `initialize`. */
  clientId?: string;
  /** Channels to subscribe to during `initialize`. */
  initialSubscriptions?: URI[];
}

/**
 * A small AHP client for the command line: connects, initializes, sends
 * requests and hands notifications to listeners. JSON-RPC framing is done by
 * `vscode-jsonrpc` over the same WebSocket adapters the server uses.
 */
export class RpcClient {
  private constructor(
    private readonly socket: WebSocket,
    private readonly connection: MessageConnection,
    private readonly timeoutMs: number,
  ) {}

  /** Opens a connection and completes the `initialize` handshake. */
  static async connect(url: string, options: RpcClientOptions = {}): Promise<RpcClient> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const headers = options.token !== undefined ? { authorization: `Bearer ${options.token}` } : undefined;
    const socket = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: timeoutMs, ...(headers ? { headers } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_req, res) => {
        socket.terminate();
        const status = res.statusCode ?? 0;
        reject(
          new Error(
            status === 401
              ? `${url} refused the token (HTTP 401)`
              : status === 403
                ? `${url} refused this origin (HTTP 403)`
                : `${url} answered HTTP ${status}`,
          ),
        );
      });
      socket.once('error', (err) => reject(new Error(`cannot connect to ${url}: ${err.message}`)));
    });
    const reader = new WsMessageReader();
    const writer = new WsMessageWriter((message) => socket.send(JSON.stringify(message)));
    socket.on('message', (data) => {
      try {
        reader.deliver(JSON.parse(data.toString()));
      } catch {
        // not JSON-RPC: nothing to deliver
      }
    });
    socket.on('close', () => {
      reader.end();
      writer.end();
    });
    socket.on('error', () => undefined);
    const connection = createMessageConnection(reader, writer);
    connection.listen();
    const client = new RpcClient(socket, connection, timeoutMs);
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
   * answers an error. Params and result are those of the method map
   * (`protocol/methods.ts`); params may be left out only where the map
   * allows it.
   */
  async request<M extends RequestMethod>(method: M, ...[params]: ParamsArgs<M>): Promise<ResultOf<M>> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method}: no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const call = params === undefined ? this.connection.sendRequest<ResultOf<M>>(method) : this.connection.sendRequest<ResultOf<M>>(method, params);
      return await Promise.race([call, timeout]);
    } catch (error) {
      if (error instanceof ResponseError) throw new RemoteError(method, error.code, error.message, error.data);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Calls `handler` for every notification `method` the server sends. */
  onNotification<N extends keyof ServerNotificationMap>(method: N, handler: (params: ServerNotificationMap[N]) => void): void {
    this.connection.onNotification(method, (params: ServerNotificationMap[N]) => handler(params));
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    this.connection.dispose();
    if (this.socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.socket.terminate();
        resolve();
      }, 1000);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.close(1000);
    });
  }
}
