import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = 'ahp-root://';

describe('bad input on one connection never affects another', () => {
  let t: TestServer;
  let bystander: TestClient;

  beforeEach(async () => {
    t = await startTestServer({ limits: { maxFrameBytes: 64 * 1024, maxConsecutiveBadFrames: 8 } });
    bystander = await TestClient.connect(t.url);
    await bystander.initialize();
  });

  afterEach(async () => {
    await bystander.close();
    await t.stop();
  });

  async function expectBystanderHealthy(): Promise<void> {
    await expect(bystander.request('ping', { channel: ROOT })).resolves.toBeNull();
    const fresh = await TestClient.connect(t.url);
    const result = await fresh.initialize();
    expect(result.protocolVersion).toBe('0.6.0');
    await fresh.close();
  }

  it('answers malformed JSON with -32700 and id null', async () => {
    const c = await TestClient.connect(t.url);
    c.sendRaw('{"jsonrpc":"2.0","id":1,"method":');
    const reply = await c.waitForMessage((m) => 'error' in m);
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    await expect(c.request('ping', { channel: ROOT })).resolves.toBeNull();
    await c.close();
    await expectBystanderHealthy();
  });

  it('answers JSON that is not JSON-RPC with -32600', async () => {
    const c = await TestClient.connect(t.url);
    c.sendRaw('{"hello":"world"}');
    c.sendRaw('[{"jsonrpc":"2.0","id":7,"method":"ping"}]');
    c.sendRaw('{"jsonrpc":"1.0","id":9,"method":"ping"}');
    c.sendRaw('42');
    await c.waitForMessage(() => c.received.length >= 4);
    const errors = c.received.map((m) => m['error'] as { code: number });
    expect(errors.map((e) => e.code)).toEqual([-32600, -32600, -32600, -32600]);
    expect(c.received[2]).toMatchObject({ id: 9 });
    await expect(c.request('ping', { channel: ROOT })).resolves.toBeNull();
    await c.close();
    await expectBystanderHealthy();
  });

  it('answers an unknown method with -32601', async () => {
    const c = await TestClient.connect(t.url);
    await c.initialize();
    const error = await c.requestError('noSuchMethod', { channel: ROOT });
    expect(error.code).toBe(-32601);
    expect(error.message).toContain('noSuchMethod');
    await c.close();
    await expectBystanderHealthy();
  });

  it('answers bad params with -32602 naming the field', async () => {
    const c = await TestClient.connect(t.url);
    await c.initialize();
    const error = await c.requestError('subscribe', { channel: 42 });
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('channel');
    const missing = await c.requestError('subscribe', {});
    expect(missing.code).toBe(-32602);
    expect(missing.message).toContain('channel');
    await c.close();
    await expectBystanderHealthy();
  });

  it('closes a connection that sends an oversized frame with 1009', async () => {
    const c = await TestClient.connect(t.url);
    await c.initialize();
    c.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { channel: ROOT, pad: 'x'.repeat(100 * 1024) } }));
    const { code } = await c.waitForClose();
    expect(code).toBe(1009);
    await expectBystanderHealthy();
  });

  it('closes a connection that sends a binary frame with 1003', async () => {
    const c = await TestClient.connect(t.url);
    await c.initialize();
    c.sendRaw(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { channel: ROOT } })), { binary: true });
    const { code } = await c.waitForClose();
    expect(code).toBe(1003);
    await expectBystanderHealthy();
  });

  it('closes a connection flooding garbage with 1008 after the configured count', async () => {
    const c = await TestClient.connect(t.url);
    for (let i = 0; i < 1000; i++) c.sendRaw(`garbage ${i}`);
    const { code } = await c.waitForClose();
    expect(code).toBe(1008);
    // Exactly maxConsecutiveBadFrames error responses were sent before the close.
    expect(c.received.length).toBe(8);
    await expectBystanderHealthy();
  });

  it('resets the bad-frame count after a good frame', async () => {
    const c = await TestClient.connect(t.url);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 7; i++) c.sendRaw('nope');
      await expect(c.request('ping', { channel: ROOT })).resolves.toBeNull();
    }
    expect(c.isOpen).toBe(true);
    await c.close();
  });
});
