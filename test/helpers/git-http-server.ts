/**
 * A real smart-HTTP git server for tests: `git http-backend` (the CGI program
 * that ships with git) run once per request behind a Node HTTP server bound
 * to 127.0.0.1, with bare repositories under a temporary root. Requests must
 * carry the token (HTTP basic password, or bearer) unless none is set.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const HTTP_BACKEND = join(execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(), 'git-http-backend');

/** Options of {@link GitHttpServer.start}. */
export interface GitHttpServerOptions {
  /** Directory holding the bare repositories (`<root>/<name>.git`). */
  root: string;
  /** Token every request must present; none: anyone may fetch and push. */
  token?: string;
  /** Port to listen on (0: a free one). */
  port?: number;
}

/** One request as the server saw it (for asserting what clients sent). */
export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  status: number;
  /** Bytes of the request body. */
  bytes: number;
}

/**
 * Node's client keeps connections alive between requests (every import in a
 * test process shares them), and a server closing an idle one after its
 * default 5 s can race a request sent on it: the request then fails with
 * ECONNRESET. A file's tests share one server, so idle connections stay
 * open until it stops.
 */
function keepIdleConnections(server: Server): void {
  server.keepAliveTimeout = 0;
}

export class GitHttpServer {
  readonly requests: SeenRequest[] = [];
  /** While set, requests are held unanswered (a remote that hangs). */
  stall = false;
  private readonly stalled: ServerResponse[] = [];

  private constructor(
    private server: Server,
    readonly port: number,
    private readonly options: GitHttpServerOptions,
  ) {}

  static async start(options: GitHttpServerOptions): Promise<GitHttpServer> {
    let instance: GitHttpServer | undefined;
    const server = createServer((req, res) => instance!.handle(req, res));
    keepIdleConnections(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    instance = new GitHttpServer(server, (server.address() as AddressInfo).port, options);
    return instance;
  }

  /** The URL of a repository under the root. */
  url(repo: string): string {
    return `http://127.0.0.1:${this.port}/${repo}`;
  }

  /** Stops listening and drops open connections (the remote is down). */
  async stop(): Promise<void> {
    for (const res of this.stalled.splice(0)) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Listens again on the same port (the remote is back). */
  async restart(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    keepIdleConnections(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  private authorised(header: string | undefined): boolean {
    const token = this.options.token;
    if (token === undefined) return true;
    if (!header) return false;
    if (header === `Bearer ${token}`) return true;
    if (!header.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    return decoded.slice(decoded.indexOf(':') + 1) === token;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, status: 0, bytes: 0 };
    req.on('data', (chunk: Buffer) => (seen.bytes += chunk.length));
    this.requests.push(seen);
    if (this.stall) {
      this.stalled.push(res);
      return;
    }
    if (!this.authorised(req.headers.authorization)) {
      seen.status = 401;
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('token required\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const child = spawn(HTTP_BACKEND, [], {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: this.options.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method ?? 'GET',
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        // http-backend serves receive-pack (push) only to an authenticated user.
        REMOTE_USER: 'mirror',
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // http-backend may answer (an error) before reading the whole body.
    child.stdin.on('error', () => undefined);
    req.pipe(child.stdin);
    child.stderr.resume();
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const crlf = head.indexOf('\r\n\r\n');
      const lf = head.indexOf('\n\n');
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
      if (end < 0) return;
      headersDone = true;
      const headerText = head.subarray(0, end).toString('latin1');
      const body = head.subarray(end + (end === crlf ? 4 : 2));
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of headerText.split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      seen.status = status;
      res.writeHead(status, headers);
      if (body.length > 0) res.write(body);
    });
    child.on('close', () => {
      if (!headersDone) {
        seen.status = 502;
        res.writeHead(502).end('http-backend failed\n');
      } else {
        res.end();
      }
    });
  }
}
