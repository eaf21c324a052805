import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { metaOf } from '../../server/changesets/changeset-files.js';
import { DEFAULT_NON_REPO_MAX_FILE_BYTES } from '../../server/snapshot/index.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { subscribeReady } from '../helpers/changesets.js';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';

const SESSION = 'ahp-session:/unread';

describe('a file that cannot be read at turn end is not a deletion', () => {
  const temp = new TempDirs();
  let t: TestService;
  let client: TestClient;
  let dir: string;

  beforeEach(async () => {
    // Not a repository: snapshots apply the default size limit.
    dir = temp.make('cs-unread-');
    writeFiles(dir, { 'data.txt': 'one\n', 'notes.txt': 'first\n', 'keep.txt': 'keep\n' });
    t = await startTestService();
    client = await t.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href });
  });

  afterEach(async () => {
    await t.stop();
    temp.cleanup();
  });

  async function turn(turnId: string, edit: () => void): Promise<TurnSummary> {
    await client.request('harness/turnStarted', { channel: SESSION, turnId });
    edit();
    return (await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: SESSION, turnId }, { timeoutMs: 60_000 })).summary;
  }

  it('grown past the size limit, or replaced by a FIFO, during a turn: not listed as deleted, reported with _meta', async () => {
    await turn('t1', () => writeFiles(dir, { 'data.txt': 'two\n', 'notes.txt': 'second\n' }));
    const summary = await turn('t2', () => {
      writeFileSync(join(dir, 'data.txt'), Buffer.alloc(DEFAULT_NON_REPO_MAX_FILE_BYTES + 1, 0x61));
      rmSync(join(dir, 'notes.txt'));
      execFileSync('mkfifo', [join(dir, 'notes.txt')]);
      writeFiles(dir, { 'keep.txt': 'kept\n' });
    });
    // Only the file that was read is a change of the turn; nothing is deleted.
    expect(summary.files.map((f) => f.path)).toEqual(['keep.txt']);
    const turn2: ChangesetState = await subscribeReady(client, 'ahp-changeset:/unread/turn/t2');
    expect(turn2.files.map((f) => [metaOf(f).path, metaOf(f).kind])).toEqual([['keep.txt', 'modified']]);

    // Since the session began both files changed (in turn 1): their after side is the content last read, and says why.
    const session: ChangesetState = await subscribeReady(client, 'ahp-changeset:/unread/session');
    const byPath = new Map(session.files.map((f) => [metaOf(f).path, metaOf(f)]));
    expect([...byPath.values()].map((m) => m.kind)).not.toContain('deleted');
    expect(byPath.get('data.txt')).toMatchObject({ kind: 'modified', afterUnread: 'oversized' });
    expect(byPath.get('notes.txt')).toMatchObject({ kind: 'modified', afterUnread: 'not-a-file' });
    expect(byPath.get('keep.txt')?.afterUnread).toBeUndefined();
  });
});
