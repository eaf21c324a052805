import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_svc, c) => (client = c));

const SESSION = 'ahp-session:/restore-dirs';

describe('restore-checkpoint and the directories of later turns', () => {
  it('removes the directories later turns made once emptied, and keeps one that still holds a file of the user', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', '.gitignore': '*.log\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await recordTurn(client, SESSION, 't1', () =>
      writeFiles(repo, { 'new/deep/er/x.txt': 'x\n', 'new/y.txt': 'y\n', 'other/sub/z.txt': 'z\n', 'a.txt': 'A\n' }),
    );
    await recordTurn(client, SESSION, 't2', () => writeFiles(repo, { 't2dir/inner/q.txt': 'q\n' }));
    // The user's own file, ignored, in a directory turn 1 made.
    writeFiles(repo, { 'other/sub/mine.log': 'the user\n' });

    const turn = 'ahp-changeset:/restore-dirs/turn/t1';
    await subscribeReady(client, turn);
    await client.request('invokeChangesetOperation', { channel: turn, operationId: 'restore-checkpoint' }, { timeoutMs: 30_000 });

    for (const gone of ['new', 't2dir', 'other/sub/z.txt']) expect(existsSync(join(repo, gone)), gone).toBe(false);
    expect(readdirSync(join(repo, 'other', 'sub'))).toEqual(['mine.log']);
    expect(readdirSync(repo).sort()).toEqual(['.git', '.gitignore', 'a.txt', 'other']);
  });
});
