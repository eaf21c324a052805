import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { WorkspaceMirror } from '../../server/mirror/workspace-mirror.js';
import { openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

const TOKEN = 'tok-3f9a1c77e2';

async function remoteRepo(): Promise<{ server: GitHttpServer; bare: string; url: string }> {
  const root = temp.make('remote-');
  execFileSync('git', ['init', '-q', '--bare', 'mirror.git'], { cwd: root });
  const server = await GitHttpServer.start({ root, token: TOKEN });
  cleanup.push(() => server.stop());
  return { server, bare: `${root}/mirror.git`, url: server.url('mirror.git') };
}

async function storeWithCheckpoint(): Promise<{ store: WorkspaceStore; repo: string }> {
  const repo = makeRepo(temp.make(), { 'a.txt': 'committed\n', 'dir/b.txt': 'b\n' });
  const store = await openWorkspaceStore({ stateDir: temp.make('state-'), workspaceDir: repo });
  cleanup.push(() => store.close());
  // The tree of HEAD: every blob lives only in the workspace repository.
  const tree = git(repo, ['rev-parse', 'HEAD^{tree}']);
  await store.writeCheckpoint({ sessionId: 's1', kind: 'start', turnId: 't1', tree });
  const blob = await store.writeObject('blob', Buffer.from('new in the store\n'));
  const root = await store.readTree(tree);
  const { serializeTree } = await import('../../server/store/tree.js');
  const tree2 = await store.writeObject('tree', serializeTree([...root.map((e) => ({ mode: e.mode, name: e.name, oid: e.oid })), { mode: '100644', name: 'c.txt', oid: blob }]));
  await store.writeCheckpoint({ sessionId: 's1', kind: 'end', turnId: 't1', tree: tree2, entries: { hello: 1 } });
  return { store, repo };
}

describe('pushing checkpoints', () => {
  it('pushes every object a session reaches, including blobs only the workspace repository holds', async () => {
    const { server, bare, url } = await remoteRepo();
    const { store } = await storeWithCheckpoint();
    const mirror = new WorkspaceMirror(store, mirrorRemote(url, { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN }), { retryBaseMs: 50 });
    await mirror.syncNow();
    const status = await mirror.status();
    expect(status.lastError).toBeUndefined();
    expect(status.pendingRefs).toBe(0);
    const refs = execFileSync('git', ['--git-dir', bare, 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' });
    expect(refs).toContain('/manifest');
    execFileSync('git', ['--git-dir', bare, 'fsck', '--strict', '--no-dangling']);
    expect(server.requests.some((r) => r.status === 401)).toBe(true);
  });
});

describe('importing', () => {
  it('brings a mirrored session into another directory, ended, with its paths moved', async () => {
    const { url } = await remoteRepo();
    const { store, repo } = await storeWithCheckpoint();
    await new WorkspaceMirror(store, mirrorRemote(url, { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN })).syncNow();
    const { importMirror } = await import('../../server/mirror/import.js');
    const clone = temp.make('clone-');
    const stateDir = temp.make('state-b-');
    const result = await importMirror({ url, stateDir, workspaceDir: clone, env: { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN } });
    expect(result.imported).toEqual([{ sessionId: 's1', turns: 1 }]);
    expect(result.mirrored.path).toBe(repo);
    const b = await openWorkspaceStore({ stateDir, workspaceDir: clone });
    try {
      const sessions = await b.listSessions();
      expect(sessions).toMatchObject([{ sessionId: 's1', live: false }]);
      const chain = await b.listSessionCheckpoints('s1');
      expect(chain.map((c) => c.kind)).toEqual(['start', 'end']);
      expect(chain[1]!.tree).toBe((await store.listSessionCheckpoints('s1'))[1]!.tree);
      expect(await b.readChangeEntries('s1', 't1')).toEqual({ hello: 1 });
    } finally {
      await b.close();
    }
  });
});
