import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChangesetState, InvokeChangesetOperationResult } from '../../protocol/index.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';
import { executeTestHooks } from '../../server/operations/execute.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const services: TestService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  temp.cleanup();
});

const SESSION = 'ahp-session:/undo-after-restart';
const SESSION_CHANGESET = 'ahp-changeset:/undo-after-restart/session';

describe('undo right after a restart', () => {
  it('is offered from the first moment the resumed session is seen, and works when invoked at once', async () => {
    const dir = temp.make();
    const stateDir = temp.make('state-');
    writeFiles(dir, { 'a.txt': 'one\n', 'b.txt': 'one\n' });
    const first = await startTestService({ stateDir });
    services.push(first);
    const client = await first.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href });
    await recordTurn(client, SESSION, 't1', () => writeFiles(dir, { 'a.txt': 'two\n', 'b.txt': 'two\n' }));
    const turn = 'ahp-changeset:/undo-after-restart/turn/t1';
    await subscribeReady(client, turn);
    await client.request('invokeChangesetOperation', { channel: turn, operationId: 'revert' }, { timeoutMs: 30_000 });
    await first.stop();
    services.pop();

    const second = await startTestService({ stateDir });
    services.push(second);
    await second.service.sessions.create({ id: 'undo-after-restart', workingDirectories: [dir] });
    // The session changeset as it is created, before anything more is read from the store: what the first subscriber gets.
    const opening = second.service.changesets.channel(SESSION_CHANGESET);
    const initial = second.service.changesets.stateOf(SESSION_CHANGESET) as ChangesetState;
    expect(initial.operations?.find((o) => o.id === 'undo')?.status).toBe('idle');
    const result: InvokeChangesetOperationResult = await second.service.operations.invoke({ channel: SESSION_CHANGESET, operationId: 'undo' });
    await opening;
    expect(result.message).toMatch(/^Undid the revert [^:]*: put back 2 files\b/);
    expect([readFileSync(join(dir, 'a.txt'), 'utf8'), readFileSync(join(dir, 'b.txt'), 'utf8')]).toEqual(['two\n', 'two\n']);
  });

  it('after an undo that was stopped and put back, offers the same undo again', async () => {
    const dir = temp.make();
    writeFiles(dir, { 'a.txt': 'one\n', 'b.txt': 'one\n' });
    const svc = await startTestService();
    services.push(svc);
    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href });
    await recordTurn(client, SESSION, 't1', () => writeFiles(dir, { 'a.txt': 'two\n', 'b.txt': 'two\n' }));
    const turn = 'ahp-changeset:/undo-after-restart/turn/t1';
    await subscribeReady(client, turn);
    await client.request('invokeChangesetOperation', { channel: turn, operationId: 'revert' }, { timeoutMs: 30_000 });

    // The undo writes a.txt, and finds b.txt saved before its next write: it stops and puts a.txt back.
    let savedAfter: string | undefined;
    executeTestHooks.betweenWrites = async () => {
      savedAfter = readFileSync(join(dir, 'a.txt'), 'utf8');
      writeFiles(dir, { 'b.txt': 'saved meanwhile\n' });
    };
    try {
      const stopped = await client.requestError('invokeChangesetOperation', { channel: SESSION_CHANGESET, operationId: 'undo' }, { timeoutMs: 30_000 });
      expect(savedAfter, 'a.txt when b.txt was saved').toBe('two\n');
      expect(stopped.message).toContain('b.txt');
    } finally {
      delete executeTestHooks.betweenWrites;
    }
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    writeFiles(dir, { 'b.txt': 'one\n' });

    const result = await client.request<{ message: string }>(
      'invokeChangesetOperation',
      { channel: SESSION_CHANGESET, operationId: 'undo' },
      { timeoutMs: 30_000 },
    );
    expect(result.message).toMatch(/^Undid the revert [^:]*: put back 2 files\b/);
    expect([readFileSync(join(dir, 'a.txt'), 'utf8'), readFileSync(join(dir, 'b.txt'), 'utf8')]).toEqual(['two\n', 'two\n']);
  });
});
