import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('changeset-server command', () => {
  it('prints usage with --help and its version with --version, exits 0, and loads neither the server nor any dependency to do it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-module-log-'));
    try {
      await Promise.all(
        ['--version', '--help'].map(async (arg) => {
          const log = join(dir, `${arg.slice(2)}.log`);
          const env = { ...process.env, CHANGESET_SERVER_TEST_MODULE_LOG: log };
          // execFile rejects unless the exit code is 0.
          const { stdout } = await run(process.execPath, ['--import', './test/cli/module-log.mjs', 'bin/changeset-server.js', arg], { env });
          expect(stdout).toMatch(arg === '--version' ? /^changeset-server \d+\.\d+\.\d+\n$/ : /Usage: changeset-server/);
          const loaded = readFileSync(log, 'utf8')
            .split('\n')
            .filter((url) => url.startsWith('file:'))
            .map((url) => relative(process.cwd(), fileURLToPath(url)))
            .filter((m) => m !== join('test', 'cli', 'module-log.mjs'));
          expect(
            loaded.filter(
              (m) => !['bin/changeset-server.js', 'dist/server/cli/main.js', 'dist/server/cli/suggest.js', 'dist/server/client/package-root.js'].includes(m),
            ),
          ).toEqual([]);
        }),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects an unknown command with exit code 2', async () => {
    await expect(run(process.execPath, ['bin/changeset-server.js', 'nope'])).rejects.toMatchObject({ code: 2 });
  });
});
