import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatState, SessionState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const SESSION = 'ahp-session:/presented-outside';
const PERMISSION_DENIED = -32009;
const SECRET = 'presented-secret-41b7d3';

describe('presented files outside the working directories', () => {
  const temp = new TempDirs();
  let t: TestService | undefined;

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    temp.cleanup();
  });

  async function start(serveOutsideFiles: boolean): Promise<{ client: TestClient; repo: string; outside: string }> {
    const repo = makeRepo(temp.make('cs-present-repo-'), { 'a.txt': 'a\n', 'docs/plan.txt': 'plan\n' });
    const outside = temp.make('cs-present-outside-');
    writeFiles(outside, { shadow: `${SECRET} shadow\n`, 'plan.txt': `${SECRET} plan\n` });
    t = await startTestService(serveOutsideFiles ? { serveOutsideFiles: true } : {});
    const client = await t.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' });
    return { client, repo, outside };
  }

  const read = (client: TestClient, path: string) =>
    client.request<{ data: string }>('resourceRead', { channel: 'ahp-root://', uri: pathToFileURL(path).href });
  const readError = (client: TestClient, path: string) => client.requestError('resourceRead', { channel: 'ahp-root://', uri: pathToFileURL(path).href });

  it('lists a presented file from outside but refuses its content without --serve-outside-files', async () => {
    const { client, outside } = await start(false);
    const chat = ((await client.subscribe(SESSION)).snapshot!.state as SessionState).defaultChat!;
    await client.subscribe(chat);
    const secretPath = join(outside, 'shadow');
    const { presented } = await client.request<{ presented: { path: string; uri: string }[] }>('harness/presentFiles', {
      channel: SESSION,
      turnId: 't1',
      files: [{ path: secretPath, description: 'a file from elsewhere' }],
    });
    expect(presented).toEqual([{ path: secretPath, uri: pathToFileURL(secretPath).href }]);
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });
    const parts = client.state<ChatState>(chat)!.turns.find((turn) => turn.id === 't1')!.responseParts;
    expect(parts.filter((p) => p.kind === 'contentRef').map((p) => (p as { uri: string }).uri)).toEqual([pathToFileURL(secretPath).href]);

    const error = await readError(client, secretPath);
    expect(error.code).toBe(PERMISSION_DENIED);
    expect(error.message).toBe(
      `${secretPath} lies outside the working directories; its content is shown only when the server is started with --serve-outside-files`,
    );
    expect(error.data).toMatchObject({ reason: 'outside' });
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });

  it('serves a presented file from outside when started with --serve-outside-files', async () => {
    const { client, outside } = await start(true);
    const secretPath = join(outside, 'shadow');
    await client.request('harness/presentFiles', { channel: SESSION, turnId: 't1', files: [{ path: secretPath }] });
    expect((await read(client, secretPath)).data).toBe(`${SECRET} shadow\n`);
  });

  it('refuses a presented file inside once a folder on its way links outside, even with --serve-outside-files', async () => {
    const { client, repo, outside } = await start(true);
    await client.request('harness/presentFiles', { channel: SESSION, turnId: 't1', files: [{ path: 'docs/plan.txt' }] });
    expect((await read(client, join(repo, 'docs/plan.txt'))).data).toBe('plan\n');
    rmSync(join(repo, 'docs'), { recursive: true });
    symlinkSync(outside, join(repo, 'docs'));
    const error = await readError(client, join(repo, 'docs/plan.txt'));
    expect(error.code).toBe(PERMISSION_DENIED);
    expect(error.data).toMatchObject({ reason: 'left-working-directory' });
    expect(error.message).toBe(
      'docs/plan.txt was presented but now leads outside the working directories (a folder on its way links elsewhere); it is not read',
    );
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });
});
