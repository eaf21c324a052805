import { describe, expect, it } from 'vitest';
import { ROOT_CHANNEL } from '../../protocol/index.js';
import { useServerPerTest } from '../helpers/server-per-test.js';

/**
 * Version selection as AHP's versioning rules have it: peers of the same
 * pre-1.0 minor version are compatible, so any 0.6.x a client offers is
 * spoken and answered as offered; a version of another minor is never
 * selected, however the client offers it.
 */
describe('protocol version selection', () => {
  const t = useServerPerTest();
  const connect = () => t.connect();

  it('accepts a client that offers only a later patch of 0.6 and answers with the entry it offered', async () => {
    const c = await connect();
    const result = await c.initialize({ protocolVersions: ['0.6.1'] });
    expect(result.protocolVersion).toBe('0.6.1');
    // The connection is served: the root snapshot came with the handshake and requests are answered.
    expect(result.snapshots?.map((s) => s.resource)).toEqual([ROOT_CHANNEL]);
    await expect(c.request('ping', { channel: ROOT_CHANNEL })).resolves.toBeNull();
  });

  it("follows the client's order among the 0.6 versions it offers and skips the others", async () => {
    const first = await connect();
    expect((await first.initialize({ protocolVersions: ['0.7.0', '0.6.4', '0.6.0'] })).protocolVersion).toBe('0.6.4');
    const second = await connect();
    expect((await second.initialize({ protocolVersions: ['1.0.0', '0.6.0', '0.6.9'] })).protocolVersion).toBe('0.6.0');
  });

  for (const offered of [['0.7.0'], ['0.9.0'], ['0.8.0', '0.7.0'], ['1.6.0'], ['0.5.9']]) {
    it(`refuses ${offered.join(', ')} with -32005 and closes, never claiming a version it does not speak`, async () => {
      const c = await connect();
      const error = await c.requestError('initialize', { channel: ROOT_CHANNEL, protocolVersions: offered, clientId: 'newer' });
      expect(error.code).toBe(-32005);
      expect(error.data).toEqual({ supportedVersions: ['0.6.0'] });
      expect(error.message).toContain(offered.join(', '));
      expect((await c.waitForClose()).code).toBe(1000);
    });
  }

  for (const malformed of ['0.6', '0.6.1-beta.1', 'v0.6.0', '0.6.01', '0.06.0', '0.6.0+build', ' 0.6.0']) {
    it(`does not take ${JSON.stringify(malformed)} for a 0.6 version: versions are MAJOR.MINOR.PATCH with nothing else`, async () => {
      const c = await connect();
      const error = await c.requestError('initialize', { channel: ROOT_CHANNEL, protocolVersions: [malformed], clientId: 'odd' });
      expect(error.code).toBe(-32005);
    });
  }
});
