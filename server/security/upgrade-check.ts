import type { IncomingMessage } from 'node:http';
import type { UpgradeCheck, UpgradeVerdict } from '../transport/http-server.js';
import { normalizeOrigin, ownOrigins, type Endpoint } from './origins.js';
import { BEARER_PROTOCOL_PREFIX, offeredProtocols } from './subprotocol.js';
import { tokensEqual } from './token.js';

/** Options of {@link createUpgradeCheck}. */
export interface UpgradeCheckOptions {
  /** The bearer token every upgrade must present; undefined turns authentication off (`--no-auth`). */
  token: string | undefined;
  /** Extra origins (`scheme://host[:port]`) whose pages may connect, besides the server's own. */
  allowedOrigins?: readonly string[];
  /** Where the server listens; read at each upgrade, so it may be set after the check is made. */
  endpoint: () => Endpoint | undefined;
}

/**
 * The origin of VS Code's desktop windows, whose agent host client connects
 * to remote hosts listed in `chat.remoteAgentHosts`. Exactly this one: no
 * other `vscode-file:` origin, and nothing of VS Code for the web.
 */
const VSCODE_DESKTOP_ORIGIN = 'vscode-file://vscode-app';

/** The query parameter VS Code's WebSocket transport carries its connection token in. */
const VSCODE_TOKEN_PARAMETER = 'tkn';

const FORBIDDEN: UpgradeVerdict = { ok: false, status: 403, reason: 'Forbidden' };
const UNAUTHORIZED: UpgradeVerdict = { ok: false, status: 401, reason: 'Unauthorized' };

/**
 * The gate in front of every WebSocket upgrade. A request carrying an
 * `Origin` header (a browser) must come from the server's own origin or an
 * allowed one (403 otherwise); then it must present the bearer token
 * (401 otherwise) in any of these places: `Authorization: Bearer <t>`,
 * a `token` (or VS Code's `tkn`) query parameter, or a `bearer.<t>`
 * WebSocket subprotocol.
 */
export function createUpgradeCheck(options: UpgradeCheckOptions): UpgradeCheck {
  const allowed = new Set<string>();
  for (const origin of options.allowedOrigins ?? []) {
    const normal = normalizeOrigin(origin);
    if (!normal) throw new Error(`not an origin: ${JSON.stringify(origin)} (expected scheme://host[:port])`);
    allowed.add(normal);
  }
  return (req) => {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== VSCODE_DESKTOP_ORIGIN) {
      const normal = normalizeOrigin(origin);
      const endpoint = options.endpoint();
      const own = endpoint ? ownOrigins(endpoint) : new Set<string>();
      if (!normal || !(own.has(normal) || allowed.has(normal))) return FORBIDDEN;
    }
    if (options.token === undefined) return { ok: true };
    const expected = options.token;
    return presentedTokens(req).some((t) => tokensEqual(t, expected)) ? { ok: true } : UNAUTHORIZED;
  };
}

/** Every token the request presents, from the three accepted carriers. */
function presentedTokens(req: IncomingMessage): string[] {
  const out: string[] = [];
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(auth);
    if (match) out.push(match[1]!);
  }
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    for (const name of ['token', VSCODE_TOKEN_PARAMETER]) for (const t of url.searchParams.getAll(name)) out.push(t);
  } catch {
    // an unparseable request target carries no token
  }
  for (const protocol of offeredProtocols(req)) {
    if (protocol.startsWith(BEARER_PROTOCOL_PREFIX)) out.push(protocol.slice(BEARER_PROTOCOL_PREFIX.length));
  }
  return out;
}
