import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashObject, workspaceLayout } from '../../server/store/index.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const SESSION = 'ahp-session:/containment';
const PERMISSION_DENIED = -32009;

describe('harness/beforeEdit only captures inside the working directories', () => {
  const temp = new TempDirs();
  let t: TestService;
  let client: TestClient;
  let repo: string;
  let outside: string;

  beforeEach(async () => {
    repo = makeRepo(temp.make('cs-contain-repo-'), { '.gitignore': '.env\n', 'a.txt': 'a\n' });
    writeFiles(repo, { '.env': 'TOKEN=before\n' });
    // Reached through symlinks inside the repository, so the temporary-directory skip never applies to it.
    outside = temp.make('cs-contain-outside-');
    writeFiles(outside, { 'secret.txt': 'outside secret 7d1f0c\n' });
    t = await startTestService();
    client = await t.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' });
  });

  afterEach(async () => {
    await t.stop();
    temp.cleanup();
  });

  /** True when the session's store holds a blob with exactly this content (asked of stock git). */
  function storeHolds(content: Buffer): boolean {
    const shadow = workspaceLayout(t.stateDir, repo).shadowDir;
    try {
      execFileSync('git', ['--git-dir', shadow, 'cat-file', '-e', hashObject('blob', content)], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  async function endTurn(): Promise<TurnSummary> {
    return (await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: SESSION, turnId: 't1' })).summary;
  }

  it('refuses /etc/passwd with PermissionDenied and copies nothing, even alongside a path inside', async () => {
    const error = await client.requestError('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['.env', '/etc/passwd'], tool: 'Write' });
    expect(error.code).toBe(PERMISSION_DENIED);
    expect(error.message).toBe("/etc/passwd resolves outside the session's working directories");
    expect(storeHolds(readFileSync('/etc/passwd'))).toBe(false);
    // The whole request was refused: the ignored .env was not captured either, so its edit is not in the turn.
    writeFileSync(join(repo, '.env'), 'TOKEN=after\n');
    expect((await endTurn()).files.map((f) => f.path)).toEqual([]);
    expect(storeHolds(Buffer.from('TOKEN=before\n'))).toBe(false);
  });

  it('refuses a path through a symlinked directory that leads outside', async () => {
    symlinkSync(outside, join(repo, 'linked'));
    const error = await client.requestError('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['linked/secret.txt'] });
    expect(error.code).toBe(PERMISSION_DENIED);
    expect(error.message).toContain('linked/secret.txt resolves outside');
    expect(storeHolds(readFileSync(join(outside, 'secret.txt')))).toBe(false);
  });

  it('refuses a symlinked file leading outside, and a new file under such a link', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(repo, 'secret-link.txt'));
    symlinkSync(outside, join(repo, 'linked'));
    for (const path of ['secret-link.txt', 'linked/new-dir/new.txt', 'sub/../../../../../../../../etc/passwd']) {
      const error = await client.requestError('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [path] });
      expect(error.code, path).toBe(PERMISSION_DENIED);
    }
    expect(storeHolds(readFileSync(join(outside, 'secret.txt')))).toBe(false);
  });

  it('still captures paths inside, and the connection keeps serving after a refusal', async () => {
    await client.requestError('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['/etc/passwd'] });
    const { captured } = await client.request<{ captured: string[] }>('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['.env'], tool: 'Write' });
    expect(captured).toEqual([join(repo, '.env')]);
    writeFileSync(join(repo, '.env'), 'TOKEN=after\n');
    expect((await endTurn()).files.map((f) => f.path)).toEqual(['.env']);
    expect(storeHolds(Buffer.from('TOKEN=before\n'))).toBe(true);
  });
});
