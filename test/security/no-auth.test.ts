import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../cli/serve-process.js';
import { TempDirs } from '../helpers/workspace.js';

describe('--no-auth', () => {
  const temp = new TempDirs();
  afterEach(() => temp.cleanup());

  for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
    it(`makes serve refuse to start on ${host}, with a clear message and a non-zero exit`, async () => {
      const result = await run(['serve', temp.make(), '--host', host, '--no-auth', '--state-dir', temp.make()]);
      expect(result.code).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(result.stderr).toContain(`--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost); refusing to serve ${host} without a token`);
      expect(result.stdout).toBe('');
    });
  }
});
