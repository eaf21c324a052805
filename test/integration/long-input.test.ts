import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';

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

  it('a session id too long for a file name once encoded still records, reviews, and keeps the review across a restart', async () => {
    const sessionId = 'ü'.repeat(300);
    const channel = `ahp-session:/${sessionId}`;
    const workspace = makeRepo(temp.make('cs-long-session-'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const stateDir = temp.make('cs-long-state-');
    const first = await startTestService({ stateDir, log: (line: string) => logged.push(line) });
    const recorder = await first.client();
    expect(await recorder.request('createSession', { channel, workingDirectory: pathToFileURL(workspace).href })).toBeNull();
    await recordTurn(recorder, channel, 't1', () => writeFiles(workspace, { 'a.txt': 'A\n', 'b.txt': 'B\n' }));
    const turnUri = expandChangesetUri(changesetUriTemplate(sessionId, 'turn'), { turnId: 't1' });
    const recorded = await subscribeReady(recorder, turnUri);
    expect(recorded.files.map((f) => [(f._meta as { path: string }).path, f.edit.diff])).toEqual([
      ['a.txt', { added: 1, removed: 1 }],
      ['b.txt', { added: 1, removed: 1 }],
    ]);
    recorder.dispatch(turnUri, { type: 'changeset/filesReviewChanged', files: [recorded.files[0]!.id], reviewed: true });
    const echo = await recorder.waitForEnvelope((e) => e.channel === turnUri && e.action.type === 'changeset/filesReviewChanged');
    expect(echo.rejectionReason).toBeUndefined();
    await first.stop();

    // The review was kept under the long id, not lost to a name the file system refuses.
    const second = await startTestService({ stateDir, log: (line: string) => logged.push(line) });
    try {
      const resumed = await second.service.openWorkspace([workspace]);
      expect(resumed.id).toBe(sessionId);
      const reviewer = await second.client();
      const after = await subscribeReady(reviewer, turnUri);
      expect(after.files.map((f) => [(f._meta as { path: string }).path, f.reviewed ?? false])).toEqual([
        ['a.txt', true],
        ['b.txt', false],
      ]);
    } finally {
      await second.stop();
    }
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
