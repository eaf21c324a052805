import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';

const SESSION = 'ahp-session:/long-input';
const INVALID_PARAMS = -32602;
const LONG_NAME = 'n'.repeat(256);
/** 128 characters, 256 bytes: the limit counts bytes. */
const LONG_UTF8_NAME = 'é'.repeat(128);

describe('over-long ids and names are invalid params, not internal errors', () => {
  const temp = new TempDirs();
  let t: TestService;
  let client: TestClient;
  let repo: string;
  const logged: string[] = [];

  beforeEach(async () => {
    logged.length = 0;
    repo = makeRepo(temp.make('cs-long-input-'), { 'a.txt': 'a\n' });
    t = await startTestService({ log: (line: string) => logged.push(line) });
    client = await t.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  });

  afterEach(async () => {
    await t.stop();
    temp.cleanup();
  });

  async function expectInvalid(method: string, params: unknown, message: string): Promise<void> {
    const error = await client.requestError(method, params);
    expect(error).toEqual({ code: INVALID_PARAMS, message });
    // The connection still serves, and the server logged no failure.
    expect(await client.request('harness/status', { channel: SESSION, turns: 0 })).toBeTruthy();
    expect(logged).toEqual([]);
  }

  it('a turn id of 1,025 characters, for every harness method that takes one', async () => {
    const turnId = 't'.repeat(1025);
    await expectInvalid('harness/turnStarted', { channel: SESSION, turnId }, 'params.turnId must be at most 1024 characters');
    await expectInvalid('harness/beforeEdit', { channel: SESSION, turnId, paths: ['a.txt'] }, 'params.turnId must be at most 1024 characters');
    await expectInvalid('harness/turnEnded', { channel: SESSION, turnId }, 'params.turnId must be at most 1024 characters');
    // 1,024 characters is still a turn id.
    const longest = 't'.repeat(1024);
    expect(await client.request('harness/turnStarted', { channel: SESSION, turnId: longest })).toMatchObject({ turnId: longest });
    expect(await client.request('harness/turnEnded', { channel: SESSION, turnId: longest })).toBeTruthy();
  });

  it('a beforeEdit path with a component over 255 bytes', async () => {
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' });
    const component = 'params.paths[0] has a path component longer than 255 bytes';
    await expectInvalid('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [LONG_NAME] }, component);
    await expectInvalid('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [join(repo, LONG_UTF8_NAME, 'a.txt')] }, component);
    await expectInvalid(
      'harness/beforeEdit',
      { channel: SESSION, turnId: 't1', paths: ['a.txt', `${'d/'.repeat(2100)}x`] },
      'params.paths[1] is longer than 4096 bytes',
    );
    // 255 bytes is still a name.
    const longest = 'n'.repeat(255);
    expect(await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [longest] })).toEqual({ captured: [join(repo, longest)] });
  });

  it('createSession with a session id over 1,024 characters or a working directory component over 255 bytes', async () => {
    await expectInvalid(
      'createSession',
      { channel: `ahp-session:/${'s'.repeat(1025)}`, workingDirectory: pathToFileURL(repo).href },
      'params.channel must name a session id of at most 1024 characters',
    );
    await expectInvalid(
      'createSession',
      { channel: 'ahp-session:/other', workingDirectory: pathToFileURL(join(repo, LONG_UTF8_NAME)).href },
      'params.workingDirectory has a path component longer than 255 bytes',
    );
  });

  it('a session id too long for a file name once encoded still records and reviews', async () => {
    const channel = `ahp-session:/${'ü'.repeat(300)}`;
    expect(await client.request('createSession', { channel, workingDirectory: pathToFileURL(temp.make('cs-long-session-')).href })).toBeNull();
    expect(await client.request('harness/turnStarted', { channel, turnId: 't1' })).toBeTruthy();
    expect(await client.request('harness/turnEnded', { channel, turnId: 't1' })).toBeTruthy();
    expect(logged).toEqual([]);
  });

  it('an operation target whose resource has a component over 255 bytes', async () => {
    await expectInvalid(
      'invokeChangesetOperation',
      {
        channel: 'ahp-changeset:/long-input/session',
        operationId: 'revert',
        target: { kind: 'resource', resource: pathToFileURL(join(repo, LONG_NAME)).href },
      },
      'params.target.resource has a path component longer than 255 bytes',
    );
  });
});
