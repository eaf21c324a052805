import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangesetServer, type ChangesetServerOptions } from '../../server/app.js';
import { createEndpointSecurity, endpointOfUrl, type EndpointSecurityOptions } from '../../server/security/index.js';

/** A server started in-process for one test. */
export interface TestServer {
  /** The running server (store, method registry, providers). */
  server: ChangesetServer;
  /** Its WebSocket URL. */
  url: string;
  /** The bearer token clients must present; undefined when the server runs without authentication. */
  token: string | undefined;
  /** The temporary state directory, removed by `stop`. */
  stateDir: string;
  /** Stops the server and removes the state directory. */
  stop(): Promise<void>;
}

/** Options of {@link startTestServer}. */
export interface TestServerOptions extends ChangesetServerOptions {
  /**
   * Locks the endpoint down as `serve` does (token, origin check, security
   * headers). Default: no authentication (`noAuth`), so protocol tests
   * connect without a token.
   */
  security?: Omit<EndpointSecurityOptions, 'host' | 'endpoint'>;
}

/** Starts a `ChangesetServer` on 127.0.0.1, port 0, with a fresh temporary state directory. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const stateDir = await mkdtemp(join(tmpdir(), 'changeset-server-test-'));
  const { security: securityOptions, ...serverOptions } = options;
  let server: ChangesetServer | undefined;
  const security = securityOptions
    ? createEndpointSecurity({ host: serverOptions.host ?? '127.0.0.1', ...securityOptions, endpoint: () => endpointOfUrl(server?.url) })
    : undefined;
  server = new ChangesetServer({
    host: '127.0.0.1',
    port: 0,
    stateDir,
    ...(security ? { checkUpgrade: security.checkUpgrade, selectProtocol: security.selectProtocol, handleHttpRequest: security.handleHttpRequest } : {}),
    ...serverOptions,
  });
  const { url } = await server.start();
  return {
    server,
    url,
    token: security?.token,
    stateDir,
    stop: async () => {
      await server.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
