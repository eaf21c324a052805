import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('changeset-server command', () => {
  it('prints usage with --help and exits 0', async () => {
    const { stdout } = await run(process.execPath, ['bin/changeset-server.js', '--help']);
    expect(stdout).toContain('Usage: changeset-server');
  });

  it('rejects an unknown command with exit code 2', async () => {
    await expect(run(process.execPath, ['bin/changeset-server.js', 'nope'])).rejects.toMatchObject({ code: 2 });
  });
});
