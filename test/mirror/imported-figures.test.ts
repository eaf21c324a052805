/**
 * An imported session shows what the original showed: its title, and the
 * session's file and line counts (from its start to its end, the same as
 * `git diff --numstat` between them), whatever the local checkout holds.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT_CHANNEL, type ListSessionsResult, type SessionSummary } from '../../protocol/index.js';
import { importMirror } from '../../server/mirror/import.js';
import { ChangesetService } from '../../server/service.js';
import { TestClient } from '../helpers/client.js';
import { cloneAtStart, numstat, recordMirroredSession } from '../helpers/mirrored-session.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

async function listed(client: TestClient, uri: string): Promise<SessionSummary | undefined> {
  const list = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
  return list.items.find((s) => s.resource === uri);
}

describe('an imported session', () => {
  it('keeps the title the original had and counts its changes from its start to its end, as git diff --numstat does', async () => {
    // More lines added than removed, so counts with their signs swapped show.
    const mirrored = await recordMirroredSession(temp, { 'a.txt': 'a\nb\nc\n', 'gone.txt': 'x\ny\n' }, [
      { id: 't1', message: 'first prompt', edit: (repo) => writeFiles(repo, { 'a.txt': 'a\nB\nc\nd\ne\n', 'new.txt': '1\n2\n3\n4\n' }) },
      { id: 't2', message: 'second prompt', edit: (repo) => rmSync(join(repo, 'gone.txt')) },
    ]);
    cleanup.push(() => mirrored.stop());
    const expected = numstat(mirrored.repo, mirrored.start, 'HEAD');
    expect(expected).toEqual({ additions: 7, deletions: 3, files: 3 });
    expect(mirrored.original.changes).toEqual(expected);

    // Machine B: a clone as it was before the session, in a folder of another name, with a new session of its own.
    const checkout = cloneAtStart(temp, mirrored);
    const stateB = temp.make('state-b-');
    const imported = await importMirror({ url: mirrored.url, stateDir: stateB, workspaceDir: checkout, env: mirrored.env });
    expect(imported.imported).toEqual([{ sessionId: mirrored.sessionId, turns: 2 }]);
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: stateB, log: () => undefined });
    const { url } = await service.start();
    cleanup.push(() => service.stop());
    const fresh = await service.openWorkspace([checkout]);
    await service.openHistory([checkout]);
    const client = await TestClient.connect(url);
    await client.initialize();
    cleanup.push(() => client.close());
    const uri = mirrored.original.resource;
    await expect.poll(async () => (await listed(client, uri))?.changes).toEqual(expected);
    const copy = (await listed(client, uri))!;
    expect(copy.title).toBe(mirrored.original.title);
    expect(copy.title).not.toBe((await listed(client, fresh.uri))!.title);
    expect(copy.createdAt).toBe(mirrored.original.createdAt);
    expect(copy._meta).toMatchObject({ firstPrompt: 'first prompt', turnCount: 2 });
  }, 120_000);
});
