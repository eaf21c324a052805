import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.js';
import { upgradeStatus } from '../helpers/upgrade.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('HTTP endpoint', () => {
  let t: TestServer;

  afterEach(async () => {
    await t.stop();
  });

  it('serves a placeholder page on GET / and 404 elsewhere', async () => {
    t = await startTestServer();
    const http = t.url.replace('ws://', 'http://');
    const page = await get(http);
    expect(page.status).toBe(200);
    expect(page.body).toContain('AHP');
    expect((await get(`${http}nothing-here`)).status).toBe(404);
  });

  it('upgrades only the root path', async () => {
    t = await startTestServer();
    expect(await upgradeStatus(`${t.url}elsewhere`)).toBe(404);
  });

  it('lets an upgrade check refuse connections with a status, keeping others', async () => {
    t = await startTestServer({
      checkUpgrade: (req) => (req.url?.includes('token=ok') ? { ok: true } : { ok: false, status: 401, reason: 'Unauthorized' }),
    });
    expect(await upgradeStatus(t.url)).toBe(401);
    const client = await TestClient.connect(`${t.url}?token=ok`);
    expect((await client.initialize()).protocolVersion).toBe('0.6.0');
    await client.close();
  });

  it('uses a replacement HTTP handler', async () => {
    t = await startTestServer({
      handleHttpRequest: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<p>viewer</p>');
      },
    });
    expect((await get(t.url.replace('ws://', 'http://'))).body).toBe('<p>viewer</p>');
  });
});
