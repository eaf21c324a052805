import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('changeset-server command', () => {
  // What --help and --version print and load: test/cli/client-modules.test.ts.
  it('rejects an unknown command with exit code 2', async () => {
    await expect(run(process.execPath, ['bin/changeset-server.js', 'nope'])).rejects.toMatchObject({ code: 2 });
  });
});
