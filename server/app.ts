import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT_CHANNEL, type Implementation, type RootNotificationMap, type RootState, type ServerNotificationMap } from '../protocol/index.js';
import { ChannelStore } from './channels/channel-store.js';
import { ServerSeqLease } from './channels/server-seq-lease.js';
import type { ClientConnection } from './connection/client-connection.js';
import { coreMethods } from './connection/core-methods.js';
import { MethodRegistry } from './connection/method-registry.js';
import type { checkParams } from './connection/params.js';
import { ProviderRegistry } from './connection/provider-registry.js';
import type { SessionProvider } from './connection/providers.js';
import type { ContentProviders, MethodTable } from './method-table.js';
import { HttpTransportServer, type HttpRequestHandler, type ProtocolSelector, type UpgradeCheck, type UpgradeVerdict } from './transport/http-server.js';
import { resolveTransportLimits, type TransportLimits } from './transport/limits.js';

/** Options for {@link ChangesetServer}. */
export interface ChangesetServerOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** TCP port; default 0 (a free port). */
  port?: number;
  /** Directory for the server's own data (object stores, persisted review state, where `serverSeq` counts on from after a restart). */
  stateDir?: string;
  /** Transport bounds; unset fields take the defaults. */
  limits?: Partial<TransportLimits>;
  /** Envelopes kept for `reconnect` replay; default 10,000. */
  replayLogSize?: number;
  /** Gate for WebSocket upgrades (authentication, origin checks); default accepts all. */
  checkUpgrade?: UpgradeCheck;
  /** Handler for plain HTTP requests; default serves a short placeholder page. */
  handleHttpRequest?: HttpRequestHandler;
  /** Picks the WebSocket subprotocol to echo (token-carrying subprotocols); default echoes the first offered. */
  selectProtocol?: ProtocolSelector;
  /** Receives diagnostics about unexpected handler failures; default writes to stderr. */
  log?: (line: string) => void;
}

/** Where a started server listens. */
export interface StartedServer {
  /** WebSocket URL, `ws://HOST:PORT/`. */
  url: string;
}

/**
 * The AHP server: HTTP + WebSocket transport, the channel store with the
 * root channel, and one {@link ClientConnection} per client. `service.ts`
 * plugs the other modules in: their method tables through `register`, their
 * content through `registerContentProviders`, the session commands through
 * `setSessionProvider`.
 */
export class ChangesetServer {
  /** The channel store: authoritative state, `serverSeq`, replay log, fan-out. */
  readonly store: ChannelStore;
  /** Methods served on every connection. */
  readonly methods = new MethodRegistry();
  /** Session and content providers. */
  readonly providers = new ProviderRegistry();
  /** Effective transport bounds. */
  readonly limits: TransportLimits;
  /** The state directory, when one was given. */
  readonly stateDir: string | undefined;

  private readonly options: ChangesetServerOptions;
  private readonly connections = new Set<ClientConnection>();
  private transport: HttpTransportServer | undefined;
  private startedUrl: string | undefined;

  constructor(options: ChangesetServerOptions = {}) {
    this.options = options;
    this.limits = resolveTransportLimits(options.limits);
    this.stateDir = options.stateDir;
    const lease = options.stateDir !== undefined ? ServerSeqLease.open(options.stateDir, (line) => this.log(line)) : undefined;
    this.store = new ChannelStore({
      ...(options.replayLogSize !== undefined ? { replayLogSize: options.replayLogSize } : {}),
      ...(lease ? { firstServerSeq: lease.first } : {}),
    });
    if (lease) this.store.onEnvelope((envelope) => lease.observe(envelope.serverSeq));
    const rootState: RootState = { agents: [] };
    this.store.createChannel(ROOT_CHANNEL, 'root', rootState);
    this.methods.register(coreMethods({ serverInfo: serverInfo(), providers: this.providers }));
  }

  /** The WebSocket URL once started. */
  get url(): string | undefined {
    return this.startedUrl;
  }

  /** Number of open client connections. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Starts listening. */
  async start(): Promise<StartedServer> {
    if (this.transport) throw new Error('server already started');
    const host = this.options.host ?? '127.0.0.1';
    // What a connection runs on (`vscode-jsonrpc`, the protocol's params checks) is loaded at the first upgrade the
    // check accepts, before the peer is handed over: the server answers sooner, and one no client reaches never loads it.
    let connections: ConnectionModules | undefined;
    const check = this.options.checkUpgrade;
    const transport = new HttpTransportServer({
      host,
      port: this.options.port ?? 0,
      limits: this.limits,
      isOrderedResponseMethod: (method) => this.methods.get(method)?.options.carriesSnapshots === true,
      checkUpgrade: async (req) => {
        const verdict: UpgradeVerdict = check ? await check(req) : { ok: true };
        if (verdict.ok) connections ??= await loadConnectionModules();
        return verdict;
      },
      onPeer: (peer) => {
        const connection = new connections!.ClientConnection(peer, {
          store: this.store,
          registry: this.methods,
          checkParams: connections!.checkParams,
          onInternalError: (method, err) => this.log(`${method}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
        });
        this.connections.add(connection);
        connection.onClose(() => this.connections.delete(connection));
      },
      ...(this.options.handleHttpRequest ? { handleHttpRequest: this.options.handleHttpRequest } : {}),
      ...(this.options.selectProtocol ? { selectProtocol: this.options.selectProtocol } : {}),
    });
    this.transport = transport;
    const address = await transport.listen();
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.startedUrl = `ws://${shownHost}:${address.port}/`;
    return { url: this.startedUrl };
  }

  /** Closes every client with 1001 (going away) and stops listening. */
  async stop(): Promise<void> {
    const transport = this.transport;
    if (!transport) return;
    this.transport = undefined;
    await transport.close();
    this.startedUrl = undefined;
  }

  /** Serves a module's methods on every connection (e.g. `invokeChangesetOperation`, `harness/turnStarted`). */
  register(table: MethodTable): void {
    this.methods.register(table);
  }

  /** Installs the provider behind `listSessions`, `createSession` and `disposeSession`. */
  setSessionProvider(provider: SessionProvider): void {
    this.providers.setSessionProvider(provider);
  }

  /** Routes `resourceRead` for each URI scheme to its provider. */
  registerContentProviders(providers: ContentProviders): void {
    for (const [scheme, provider] of Object.entries(providers)) this.providers.registerContentProvider(scheme, provider);
  }

  /**
   * Sends a root protocol notification (`root/sessionAdded`,
   * `root/sessionRemoved`, `root/sessionSummaryChanged`) to the clients
   * subscribed to `ahp-root://`, as AHP specifies.
   */
  notifyRoot<N extends keyof RootNotificationMap>(method: N, params: ServerNotificationMap[N]): void {
    this.store.notify(ROOT_CHANNEL, method, params);
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else process.stderr.write(`changeset-server: ${line}\n`);
  }
}

/** The modules each connection runs on. */
interface ConnectionModules {
  ClientConnection: typeof ClientConnection;
  checkParams: typeof checkParams;
}

async function loadConnectionModules(): Promise<ConnectionModules> {
  const [{ ClientConnection }, { checkParams }] = await Promise.all([import('./connection/client-connection.js'), import('./connection/params.js')]);
  return { ClientConnection, checkParams };
}

let cachedServerInfo: Implementation | undefined;

/** `{name, version}` from the package manifest (found by walking up from this module). */
function serverInfo(): Implementation {
  if (cachedServerInfo) return cachedServerInfo;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'changeset-server') {
        cachedServerInfo = { name: pkg.name, ...(pkg.version ? { version: pkg.version } : {}) };
        return cachedServerInfo;
      }
    } catch {
      // keep walking up
    }
    dir = dirname(dir);
  }
  cachedServerInfo = { name: 'changeset-server' };
  return cachedServerInfo;
}
