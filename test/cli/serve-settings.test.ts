import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TempDirs } from '../helpers/workspace.js';
import { run } from './serve-process.js';

describe('serve with a setting it cannot run with', () => {
  const temp = new TempDirs();
  afterEach(() => temp.cleanup());

  it('refuses a mirror that is not smart HTTP with exit code 2, before it creates its state directory', async () => {
    const stateDir = join(temp.make(), 'state');
    const result = await run(['serve', temp.make(), '--state-dir', stateDir, '--mirror', 'ftp://example.com/mirror.git']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'changeset-server serve: mirror URL must be http:// or https:// (smart HTTP), file:// or a path of a bare repository, got ftp:\n',
    );
    expect(result.stdout).toBe('');
    expect(existsSync(stateDir)).toBe(false);
  });

  it('names the security problem first when the mirror from the environment is bad too', async () => {
    const stateDir = join(temp.make(), 'state');
    const result = await run(['serve', temp.make(), '--state-dir', stateDir, '--no-auth', '--host', '0.0.0.0'], {
      env: { CHANGESET_SERVER_MIRROR: 'not a url' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^changeset-server serve: --no-auth is only allowed on a loopback host .*\n$/);
    expect(result.stderr).not.toContain('mirror');
    expect(existsSync(stateDir)).toBe(false);
  });
});
