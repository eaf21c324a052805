import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import type { HttpRequestHandler } from '../transport/http-server.js';
import { securityHeaders } from './headers.js';
import type { Endpoint } from './origins.js';

/** Options of {@link createStaticHandler}. */
export interface StaticHandlerOptions {
  /** Directory of the built web viewer (`index.html` and its assets); a minimal page is served when it does not exist. */
  staticDir?: string;
  /** Where the server listens, for the Content-Security-Policy; read per request. */
  endpoint: () => Endpoint | undefined;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/** The content type served for a file name. */
function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Serves the web viewer's static files with the security headers: `GET` and
 * `HEAD` only, `/` is `index.html`, nothing outside `staticDir` (symlinks
 * included). Without the directory, `/` is a minimal page saying how to
 * connect.
 */
export function createStaticHandler(options: StaticHandlerOptions): HttpRequestHandler {
  return (req, res) => {
    void serveRequest(req, res, options).catch(() => {
      if (!res.headersSent) send(res, req, options, 500, 'text/plain; charset=utf-8', 'Internal Server Error\n');
      else res.destroy();
    });
  };
}

async function serveRequest(req: IncomingMessage, res: ServerResponse, options: StaticHandlerOptions): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, req, options, 405, 'text/plain; charset=utf-8', 'Method Not Allowed\n');
    return;
  }
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
  } catch {
    send(res, req, options, 400, 'text/plain; charset=utf-8', 'Bad Request\n');
    return;
  }
  if (pathname.includes('\0')) {
    send(res, req, options, 400, 'text/plain; charset=utf-8', 'Bad Request\n');
    return;
  }
  const root = options.staticDir ? await realpath(options.staticDir).catch(() => undefined) : undefined;
  if (!root) {
    if (pathname === '/' || pathname === '/index.html') send(res, req, options, 200, 'text/html; charset=utf-8', MINIMAL_PAGE);
    else send(res, req, options, 404, 'text/plain; charset=utf-8', 'Not Found\n');
    return;
  }
  const file = await resolveInside(root, pathname === '/' ? '/index.html' : pathname);
  if (!file) {
    send(res, req, options, 404, 'text/plain; charset=utf-8', 'Not Found\n');
    return;
  }
  res.writeHead(200, {
    ...headersFor(req, options, contentTypeOf(file.path)),
    'content-type': contentTypeOf(file.path),
    'content-length': file.size,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file.path)
    .on('error', () => res.destroy())
    .pipe(res);
}

/** The real path of a regular file under `root` named by a URL path, or undefined. */
async function resolveInside(root: string, urlPath: string): Promise<{ path: string; size: number } | undefined> {
  const candidate = join(root, ...urlPath.split('/').filter((s) => s.length > 0));
  const real = await realpath(candidate).catch(() => undefined);
  if (!real) return undefined;
  const rel = relative(root, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  const info = await stat(real).catch(() => undefined);
  return info?.isFile() ? { path: real, size: info.size } : undefined;
}

function headersFor(req: IncomingMessage, options: StaticHandlerOptions, contentType: string) {
  const carriesToken = /[?&]token=/.test(req.url ?? '');
  return securityHeaders(options.endpoint(), { noStore: carriesToken || contentType.startsWith('text/html') });
}

function send(res: ServerResponse, req: IncomingMessage, options: StaticHandlerOptions, status: number, contentType: string, body: string): void {
  res.writeHead(status, {
    ...headersFor(req, options, contentType),
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

const MINIMAL_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>changeset-server</title></head>
<body>
<h1>changeset-server</h1>
<p>The web viewer is not built. Clients connect over WebSocket (AHP 0.6) at this address with the token the server printed.</p>
</body>
</html>
`;
