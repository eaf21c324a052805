import { describe } from 'vitest';
import { run } from '../cli/serve-process.js';
import { it } from '../helpers/per-test.js';

// Each refusal is its own process and directories: they run side by side.
describe.concurrent('--no-auth', { timeout: 120_000 }, () => {
  for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
    it(`makes serve refuse to start on ${host}, with a clear message and a non-zero exit`, async ({ temp, expect }) => {
      const result = await run(['serve', temp.make(), '--host', host, '--no-auth', '--state-dir', temp.make()]);
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(result.stderr).toContain(`--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost); refusing to serve ${host} without a token`);
      expect(result.stdout).toBe('');
    });
  }
});
