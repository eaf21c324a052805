import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.js';
import { tryUpgrade } from '../helpers/upgrade.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function get(url: string, method = 'GET'): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    request(url, { method }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** Sends `GET <target>` exactly as written (no URL parsing on the way) and reads the answer. */
function getRaw(port: number, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const head = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (!status || head < 0) return reject(new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(status[1]), body: text.slice(head + 4) });
    });
    socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  });
}

describe('endpoint security', () => {
  let t: TestServer | undefined;
  const dirs: string[] = [];

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an upgrade without a token or with a wrong one (401), before any JSON-RPC', async () => {
    t = await startTestServer({ security: {} });
    expect(t.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await tryUpgrade(t.url)).status).toBe(401);
    expect((await tryUpgrade(`${t.url}?token=wrong`)).status).toBe(401);
    expect((await tryUpgrade(t.url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await tryUpgrade(t.url, { headers: { authorization: `Basic ${t.token}` } })).status).toBe(401);
    expect((await tryUpgrade(t.url, { protocols: ['bearer.wrong'] })).status).toBe(401);
    expect((await tryUpgrade(`${t.url}?token=${t.token}x`)).status).toBe(401);
    expect(t.server.connectionCount).toBe(0);
  });

  it('accepts the token in the Authorization header, the query string and a subprotocol', async () => {
    t = await startTestServer({ security: {} });
    const token = t.token!;
    expect((await tryUpgrade(t.url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(101);
    expect((await tryUpgrade(`${t.url}?token=${encodeURIComponent(token)}`)).status).toBe(101);

    // A subprotocol-only client gets the token protocol echoed (RFC 6455 requires one to be selected) ...
    expect(await tryUpgrade(t.url, { protocols: [`bearer.${token}`] })).toEqual({ status: 101, protocol: `bearer.${token}` });
    // ... and a client offering another protocol gets that one instead of its token back.
    expect(await tryUpgrade(t.url, { protocols: [`bearer.${token}`, 'ahp'] })).toEqual({ status: 101, protocol: 'ahp' });

    const client = await TestClient.connect(t.url, { token });
    expect((await client.initialize()).protocolVersion).toBe('0.6.0');
    await client.close();
  });

  it('uses the token it is given', async () => {
    t = await startTestServer({ security: { token: 'given-token-1234' } });
    expect(t.token).toBe('given-token-1234');
    expect((await tryUpgrade(`${t.url}?token=given-token-1234`)).status).toBe(101);
  });

  it('refuses a foreign Origin with 403 even with the right token, and accepts its own origin', async () => {
    t = await startTestServer({ security: {} });
    const auth = { authorization: `Bearer ${t.token}` };
    const port = new URL(t.url).port;
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: 'http://evil.example' } })).status).toBe(403);
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: `http://evil.example:${port}` } })).status).toBe(403);
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: 'null' } })).status).toBe(403);
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: `http://127.0.0.1:${Number(port) + 1}` } })).status).toBe(403);
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: `http://127.0.0.1:${port}` } })).status).toBe(101);
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: `http://localhost:${port}` } })).status).toBe(101);
  });

  it('accepts an origin listed with --allow-origin', async () => {
    t = await startTestServer({ security: { allowedOrigins: ['http://ide.example:8080'] } });
    const auth = { authorization: `Bearer ${t.token}` };
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: 'http://ide.example:8080' } })).status).toBe(101);
    expect((await tryUpgrade(t.url, { headers: { ...auth, origin: 'http://ide.example:8081' } })).status).toBe(403);
  });

  it('without auth, still checks the Origin', async () => {
    t = await startTestServer({ security: { noAuth: true } });
    expect(t.token).toBeUndefined();
    expect((await tryUpgrade(t.url)).status).toBe(101);
    expect((await tryUpgrade(t.url, { headers: { origin: 'http://evil.example' } })).status).toBe(403);
  });

  it('refuses --no-auth on a host that is not loopback', async () => {
    await expect(startTestServer({ host: '0.0.0.0', security: { noAuth: true } })).rejects.toThrow(/loopback/);
  });

  it('sends a strict CSP, nosniff, no-referrer and no-store on the page', async () => {
    t = await startTestServer({ security: {} });
    const http = t.url.replace('ws://', 'http://');
    const page = await get(`${http}?token=${t.token}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(
      `default-src 'self'; connect-src 'self' ${t.url.replace(/\/$/, '')}; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-store');
    expect((await get(`${http}missing.js`)).status).toBe(404);
    expect((await get(http, 'POST')).status).toBe(405);
  });

  it('serves the viewer directory with content types, and nothing outside it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cs-viewer-'));
    dirs.push(root);
    const viewer = join(root, 'viewer');
    mkdirSync(join(viewer, 'assets'), { recursive: true });
    writeFileSync(join(viewer, 'index.html'), '<!doctype html><title>viewer</title>');
    writeFileSync(join(viewer, 'assets', 'app.js'), 'console.log(1);');
    writeFileSync(join(viewer, 'assets', 'app.css'), 'body{}');
    writeFileSync(join(root, 'secret.txt'), 'secret');
    symlinkSync(join(root, 'secret.txt'), join(viewer, 'link.txt'));
    t = await startTestServer({ security: { staticDir: viewer } });
    const http = t.url.replace('ws://', 'http://');

    const index = await get(`${http}?token=${t.token}`);
    expect(index.body).toContain('<title>viewer</title>');
    expect(index.headers['cache-control']).toBe('no-store');
    expect(index.headers['content-security-policy']).toContain("script-src 'self'");

    const js = await get(`${http}assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    expect((await get(`${http}assets/app.css`)).headers['content-type']).toBe('text/css; charset=utf-8');

    // Paths that climb out of the viewer directory to secret.txt beside it. They
    // go out as raw request lines: a URL client would resolve the dots itself
    // and send `/secret.txt`, so only the server's own handling is tested.
    const port = Number(new URL(t.url).port);
    expect(await getRaw(port, '/assets/app.js')).toEqual({ status: 200, body: 'console.log(1);' });
    const climbs = [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E/secret.txt',
      '/.%2e/secret.txt',
      '/assets/%2e%2e/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/%2e%2e%2fsecret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/..%5csecret.txt',
      `http://127.0.0.1:${port}/../secret.txt`,
    ];
    for (const target of climbs) {
      expect({ target, ...(await getRaw(port, target)) }).toEqual({ target, status: 404, body: 'Not Found\n' });
    }
    // Not even a path: refused before it reaches the viewer's files.
    expect((await getRaw(port, '../secret.txt')).status).toBe(400);
    expect((await get(`${http}link.txt`)).status).toBe(404);
    expect((await get(`${http}assets`)).status).toBe(404);
  });
});
