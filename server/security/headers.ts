import type { OutgoingHttpHeaders } from 'node:http';
import { urlHost } from './loopback.js';
import type { Endpoint } from './origins.js';

/**
 * The Content-Security-Policy of every page the server sends: scripts,
 * styles and connections only to itself (the WebSocket endpoint included),
 * images also from `data:`, no framing, no `<base>`, no form posts.
 */
function contentSecurityPolicy(endpoint: Endpoint | undefined): string {
  const ws = endpoint ? ` ws://${urlHost(endpoint.host)}:${endpoint.port}` : '';
  return [
    "default-src 'self'",
    `connect-src 'self'${ws}`,
    "img-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * Headers on every HTTP response. Pages may carry the token in their URL,
 * so HTML (and anything requested with a token) is never stored by a cache.
 */
export function securityHeaders(endpoint: Endpoint | undefined, opts: { noStore: boolean }): OutgoingHttpHeaders {
  return {
    'content-security-policy': contentSecurityPolicy(endpoint),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': opts.noStore ? 'no-store' : 'no-cache',
  };
}
