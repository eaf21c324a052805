import type { IncomingMessage } from 'node:http';

/** Prefix of the subprotocol that carries the bearer token: `bearer.<token>`. */
export const BEARER_PROTOCOL_PREFIX = 'bearer.';

/** The subprotocols a WebSocket upgrade request offers, in order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return [];
  return header
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/**
 * Picks the subprotocol to echo (RFC 6455 §4.2.2: a client that offers
 * subprotocols fails the connection unless the server selects one). The
 * first offered protocol that is not a token is preferred, so the token is
 * not sent back when the client offers something else; a client offering
 * only `bearer.<token>` gets that one echoed.
 */
export function selectProtocol(offered: ReadonlySet<string>): string | false {
  let bearer: string | undefined;
  for (const protocol of offered) {
    if (!protocol.startsWith(BEARER_PROTOCOL_PREFIX)) return protocol;
    bearer ??= protocol;
  }
  return bearer ?? false;
}
