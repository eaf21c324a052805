import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { CloseCode, type TransportLimits } from './limits.js';
import type { WsPeer } from './ws-peer.js';

/** Verdict of an upgrade check: accept, or refuse with an HTTP status. */
export type UpgradeVerdict = { ok: true } | { ok: false; status: number; reason: string };

/**
 * Decides whether an HTTP upgrade request may become an AHP connection
 * (authentication and origin checks hook in here). Runs before the
 * WebSocket handshake completes.
 */
export type UpgradeCheck = (req: IncomingMessage) => UpgradeVerdict | Promise<UpgradeVerdict>;

/**
 * Chooses the WebSocket subprotocol to echo from those a client offers
 * (`false` for none); see `ws`'s `handleProtocols`.
 */
export type ProtocolSelector = (offered: Set<string>, req: IncomingMessage) => string | false;

/** Serves plain HTTP requests (anything that is not a WebSocket upgrade). */
export type HttpRequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Options for the HTTP + WebSocket listener. */
export interface HttpTransportOptions {
  /** Interface to bind, e.g. `127.0.0.1`. */
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Bounds applied to every WebSocket peer. */
  limits: TransportLimits;
  /** Upgrade gate; the default accepts every request. */
  checkUpgrade?: UpgradeCheck;
  /** Plain HTTP handler; the default serves a short text page on `GET /`. */
  handleHttpRequest?: HttpRequestHandler;
  /** Subprotocol selection; the default echoes the first offered one. */
  selectProtocol?: ProtocolSelector;
  /** Request methods whose responses must precede later frames (see `WsPeerOptions`). */
  isOrderedResponseMethod?: (method: string) => boolean;
  /** Called once per accepted WebSocket with its peer. */
  onPeer: (peer: WsPeer, req: IncomingMessage) => void;
}

const allowAll: UpgradeCheck = () => ({ ok: true });

/**
 * HTTP server that upgrades `/` to WebSocket and wraps each socket in a
 * `WsPeer`. Plain requests go to a pluggable handler.
 */
export class HttpTransportServer {
  private readonly http: Server;
  /**
   * `ws` and the peer (with `vscode-jsonrpc` under it), loaded at the first
   * upgrade a check accepts: `serve` answers sooner, and a server no client
   * reaches never loads them.
   */
  private upgrades: Promise<{ wss: WebSocketServer; WsPeer: typeof WsPeer }> | undefined;
  private readonly sockets = new Set<WebSocket>();
  private readonly peers = new Set<WsPeer>();

  constructor(private readonly options: HttpTransportOptions) {
    const handle = options.handleHttpRequest ?? placeholderPage;
    this.http = createServer((req, res) => handle(req, res));
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.upgrade(req, socket, head);
    });
  }

  /** Starts listening; resolves with the bound address. */
  listen(): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.http.once('error', onError);
      this.http.listen(this.options.port, this.options.host, () => {
        this.http.off('error', onError);
        resolve(this.http.address() as AddressInfo);
      });
    });
  }

  /** Number of open WebSocket connections. */
  get connectionCount(): number {
    return this.sockets.size;
  }

  /**
   * Sends every client a 1001 close frame, waits briefly for the close
   * handshakes, then stops the HTTP server.
   */
  async close(graceMs = 1000): Promise<void> {
    // What was sent before the close goes out before the close frame.
    for (const peer of this.peers) peer.flush();
    const closing = [...this.sockets].map(
      (socket) =>
        new Promise<void>((resolve) => {
          if (socket.readyState === socket.CLOSED) return resolve();
          socket.once('close', () => resolve());
          socket.close(CloseCode.GoingAway, 'server shutting down');
        }),
    );
    const timer = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(closing), timer]);
    for (const socket of this.sockets) socket.terminate();
    const upgrades = await this.upgrades;
    if (upgrades) await new Promise<void>((resolve) => upgrades.wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/') {
      refuse(socket, 404, 'Not Found');
      return;
    }
    let verdict: UpgradeVerdict;
    try {
      verdict = await (this.options.checkUpgrade ?? allowAll)(req);
    } catch {
      verdict = { ok: false, status: 500, reason: 'Internal Server Error' };
    }
    if (!verdict.ok) {
      refuse(socket, verdict.status, verdict.reason);
      return;
    }
    const { wss, WsPeer } = await this.loadUpgrades();
    wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      const peer = new WsPeer(ws, {
        limits: this.options.limits,
        ...(this.options.isOrderedResponseMethod ? { isOrderedResponseMethod: this.options.isOrderedResponseMethod } : {}),
      });
      this.peers.add(peer);
      peer.onClose(() => this.peers.delete(peer));
      this.options.onPeer(peer, req);
    });
  }

  private loadUpgrades(): Promise<{ wss: WebSocketServer; WsPeer: typeof WsPeer }> {
    this.upgrades ??= Promise.all([import('ws'), import('./ws-peer.js')]).then(([{ WebSocketServer }, { WsPeer }]) => ({
      wss: new WebSocketServer({
        noServer: true,
        maxPayload: this.options.limits.maxFrameBytes,
        perMessageDeflate: false,
        ...(this.options.selectProtocol ? { handleProtocols: this.options.selectProtocol } : {}),
      }),
      WsPeer,
    }));
    return this.upgrades;
  }
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason.replace(/[\r\n]/g, ' ')}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Default page: says what the endpoint is. */
function placeholderPage(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET' && (req.url ?? '/').split('?')[0] === '/') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('changeset-server: connect over WebSocket at this address to speak AHP 0.6.\n');
    return;
  }
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  res.end('Not Found\n');
}
