import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { metaOf } from '../../server/changesets/changeset-files.js';
import { DEFAULT_NON_REPO_MAX_FILE_BYTES } from '../../server/snapshot/index.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest, startTestService } from '../helpers/service.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_svc, c) => (client = c));

const SESSION = 'ahp-session:/unrecorded';
const TURN = 'ahp-changeset:/unrecorded/turn/t1';
const REASON = 'was over the size limit when it was recorded, so its content is not known: left as it is';

interface Result {
  message: string;
  _meta?: { files?: { path: string }[]; skipped?: { path: string; reason: string }[] };
}

function invoke(channel: string, operationId: string, dryRun = false): Promise<Result> {
  return client.request<Result>('invokeChangesetOperation', { channel, operationId, ...(dryRun ? { _meta: { dryRun: true } } : {}) }, { timeoutMs: 60_000 });
}

describe('a file too large to record at the start, made smaller by a turn', () => {
  it('is shown as modified from an unrecorded version, and revert, restore and their dry runs skip it with the reason', async () => {
    // Not a repository: snapshots apply the file-size limit (50 MiB by default).
    const dir = temp.make('cs-unrecorded-');
    const big = join(dir, 'data.bin');
    writeFileSync(big, Buffer.alloc(DEFAULT_NON_REPO_MAX_FILE_BYTES + 10 * 1024 * 1024, 0x61));
    writeFiles(dir, { 'notes.txt': 'one\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 60_000 });
    // A turn that does not touch it first: change-driven snapshots from here on visit only what changed, and must still report it.
    await recordTurn(client, SESSION, 't0', () => writeFiles(dir, { 'notes.txt': 'zero\n' }));
    const shrunk = Buffer.alloc(1024 * 1024, 0x62);
    await recordTurn(client, SESSION, 't1', () => {
      writeFileSync(big, shrunk);
      writeFiles(dir, { 'notes.txt': 'two\n' });
    });

    for (const uri of [TURN, 'ahp-changeset:/unrecorded/session']) {
      const state: ChangesetState = await subscribeReady(client, uri);
      const data = state.files.map(metaOf).find((m) => m.path === 'data.bin');
      expect(data, uri).toMatchObject({ kind: 'modified', beforeUnread: 'oversized' });
    }

    const unchanged = () => expect(statSync(big).size === shrunk.length && readFileSync(big).equals(shrunk)).toBe(true);
    const dryRevert = await invoke(TURN, 'revert', true);
    expect(dryRevert._meta?.files?.map((f) => f.path)).toEqual(['notes.txt']);
    expect(dryRevert._meta?.skipped).toContainEqual({ path: 'data.bin', reason: REASON });
    const revert = await invoke(TURN, 'revert');
    expect(revert.message).toContain(`data.bin (${REASON})`);
    unchanged();
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('zero\n');
    await invoke('ahp-changeset:/unrecorded/session', 'undo');

    for (const operation of ['restore-checkpoint', 'restore-checkpoint-and-turns']) {
      const dry = await invoke(TURN, operation, true);
      expect(
        dry._meta?.files?.map((f) => f.path),
        operation,
      ).toEqual(['notes.txt']);
      expect(dry._meta?.skipped).toContainEqual({ path: 'data.bin', reason: REASON });
    }
    const restore = await invoke(TURN, 'restore-checkpoint');
    expect(restore.message).toContain(`data.bin (${REASON})`);
    unchanged();
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('zero\n');
  }, 120_000);

  it('is still known as unrecorded after a restart', async () => {
    const dir = temp.make('cs-unrecorded-');
    const stateDir = temp.make('state-');
    const big = join(dir, 'data.bin');
    writeFileSync(big, Buffer.alloc(DEFAULT_NON_REPO_MAX_FILE_BYTES + 1024, 0x61));
    const first = await startTestService({ stateDir });
    const c1 = await first.client();
    await c1.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 60_000 });
    const shrunk = Buffer.alloc(1024, 0x62);
    await recordTurn(c1, SESSION, 't1', () => writeFileSync(big, shrunk));
    await first.stop();

    const second = await startTestService({ stateDir });
    try {
      await second.service.sessions.create({ id: 'unrecorded', workingDirectories: [dir] });
      client = await second.client();
      const turn: ChangesetState = await subscribeReady(client, TURN);
      expect(turn.files.map(metaOf).find((m) => m.path === 'data.bin')).toMatchObject({ kind: 'modified', beforeUnread: 'oversized' });
      for (const operation of ['revert', 'restore-checkpoint']) {
        const dry = await invoke(TURN, operation, true);
        expect(dry._meta?.skipped, operation).toContainEqual({ path: 'data.bin', reason: REASON });
        expect(dry._meta?.files ?? [], operation).toEqual([]);
      }
      await invoke(TURN, 'restore-checkpoint');
      expect(readFileSync(big).equals(shrunk)).toBe(true);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
