import { isLoopbackHost, isWildcardHost, localAddresses, urlHost } from './loopback.js';

/** Where the server listens, once it does. */
export interface Endpoint {
  /** The interface the server is bound to, as given (`127.0.0.1`, `::1`, `0.0.0.0`, a name). */
  host: string;
  /** The bound TCP port. */
  port: number;
}

/** Normalises an origin (`scheme://host[:port]`) for comparison; undefined when it is not one. */
export function normalizeOrigin(origin: string): string | undefined {
  if (origin === 'null') return undefined;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * The origins a page served by this server can have: `http://HOST:PORT`,
 * plus the other loopback names when bound to loopback, plus every local
 * address when bound to a wildcard address.
 */
export function ownOrigins(endpoint: Endpoint): Set<string> {
  const hosts = new Set<string>([endpoint.host]);
  if (isLoopbackHost(endpoint.host)) for (const h of ['127.0.0.1', '::1', 'localhost']) hosts.add(h);
  if (isWildcardHost(endpoint.host)) for (const h of localAddresses()) hosts.add(h);
  const out = new Set<string>();
  for (const h of hosts) {
    const origin = normalizeOrigin(`http://${urlHost(h)}:${endpoint.port}`);
    if (origin) out.add(origin);
  }
  return out;
}
