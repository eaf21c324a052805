import type { HttpRequestHandler, ProtocolSelector, UpgradeCheck } from '../transport/http-server.js';
import { isLoopbackHost } from './loopback.js';
import type { Endpoint } from './origins.js';
import { createStaticHandler } from './static-handler.js';
import { selectProtocol } from './subprotocol.js';
import { generateToken, tokenProblem } from './token.js';
import { createUpgradeCheck } from './upgrade-check.js';

/** How the endpoint is locked down. */
export interface EndpointSecurityOptions {
  /** The interface the server binds; `noAuth` is refused unless it is a loopback one. */
  host: string;
  /** Bearer token to require; a random one is made when omitted (and `noAuth` is not set). */
  token?: string;
  /** Accept upgrades without a token. Only allowed on a loopback host. */
  noAuth?: boolean;
  /** Origins besides the server's own whose pages may connect. */
  allowedOrigins?: readonly string[];
  /** Directory of the built web viewer served over HTTP. */
  staticDir?: string;
  /** Where the server listens, once it does. */
  endpoint: () => Endpoint | undefined;
}

/** The hooks to pass to the server, and the token clients need. */
export interface EndpointSecurity {
  /** The bearer token clients present; undefined with `noAuth`. */
  token: string | undefined;
  /** Upgrade gate: origin (403) then token (401). */
  checkUpgrade: UpgradeCheck;
  /** Subprotocol selection for clients that offer `bearer.<token>`. */
  selectProtocol: ProtocolSelector;
  /** Static viewer files with the security headers. */
  handleHttpRequest: HttpRequestHandler;
}

/** A setting that would leave the endpoint open; the server refuses to start. */
class InsecureConfigurationError extends Error {}

/** Builds the endpoint's security hooks; throws {@link InsecureConfigurationError} for unsafe settings. */
export function createEndpointSecurity(options: EndpointSecurityOptions): EndpointSecurity {
  if (options.noAuth && !isLoopbackHost(options.host)) {
    throw new InsecureConfigurationError(
      `--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost); refusing to serve ${options.host} without a token`,
    );
  }
  if (options.noAuth && options.token !== undefined) throw new InsecureConfigurationError('--no-auth and a token cannot be combined');
  if (options.token !== undefined) {
    const problem = tokenProblem(options.token);
    if (problem) throw new InsecureConfigurationError(problem);
  }
  const token = options.noAuth ? undefined : (options.token ?? generateToken());
  return {
    token,
    checkUpgrade: createUpgradeCheck({
      token,
      endpoint: options.endpoint,
      ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
    }),
    selectProtocol,
    handleHttpRequest: createStaticHandler({
      endpoint: options.endpoint,
      ...(options.staticDir !== undefined ? { staticDir: options.staticDir } : {}),
    }),
  };
}

/** The endpoint of a started server from its WebSocket URL. */
export function endpointOfUrl(url: string | undefined): Endpoint | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port) };
}
