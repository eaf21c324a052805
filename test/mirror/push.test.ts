import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { WorkspaceMirror } from '../../server/mirror/workspace-mirror.js';
import { EMPTY_TREE_OID, openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

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
  const tree2 = await store.writeObject(
    'tree',
    serializeTree([...root.map((e) => ({ mode: e.mode, name: e.name, oid: e.oid })), { mode: '100644', name: 'c.txt', oid: blob }]),
  );
  await store.writeCheckpoint({ sessionId: 's1', kind: 'end', turnId: 't1', tree: tree2, entries: { hello: 1 } });
  return { store, repo };
}

describe('pushing checkpoints', () => {
  it('pushes every object a session reaches, including blobs only the workspace repository holds', async () => {
    const { server, bare, url } = await remoteRepo();
    const { store, repo } = await storeWithCheckpoint();
    const committed = git(repo, ['rev-parse', 'HEAD:a.txt']);
    const shadowIds = execFileSync('sh', ['-c', `for i in "${store.layout.shadowDir}"/objects/pack/*.idx; do git show-index < "$i"; done`], {
      encoding: 'utf8',
    });
    expect(shadowIds).not.toContain(committed);
    const mirror = new WorkspaceMirror(store, mirrorRemote(url, { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN }), { retryBaseMs: 50 });
    await mirror.syncNow();
    const status = await mirror.status();
    expect(status.lastError).toBeUndefined();
    expect(status.pendingRefs).toBe(0);
    const refs = execFileSync('git', ['--git-dir', bare, 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' });
    expect(refs).toContain('/manifest');
    execFileSync('git', ['--git-dir', bare, 'fsck', '--strict', '--no-dangling'], { stdio: 'ignore' });
    expect(execFileSync('git', ['--git-dir', bare, 'cat-file', 'blob', committed], { encoding: 'utf8' })).toBe('committed\n');
    expect(server.requests.some((r) => r.status === 401)).toBe(true);
  });
});

describe('importing', () => {
  it('brings a mirrored session into another directory, ended, with its paths moved', async () => {
    const { url } = await remoteRepo();
    const { store, repo } = await storeWithCheckpoint();
    await store.writeCheckpoint({
      sessionId: 's1',
      kind: 'safety',
      reason: 'revert',
      details: { paths: [{ absPath: `${repo}/a.txt`, root: 0 }], message: `${repo} is where it ran`, workingDirectories: [repo] },
      roots: [{ name: 'workspace', path: repo, tree: EMPTY_TREE_OID }],
      layout: 'multi',
    });
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
      expect(chain.map((c) => c.kind)).toEqual(['start', 'end', 'safety']);
      // Paths name the local directory now; text that merely mentions the old one is left alone.
      expect(chain[2]!.details).toEqual({ paths: [{ absPath: `${clone}/a.txt`, root: 0 }], message: `${repo} is where it ran`, workingDirectories: [clone] });
      expect(chain[2]!.roots).toEqual([{ name: 'workspace', path: clone, tree: EMPTY_TREE_OID }]);
      expect(chain[1]!.tree).toBe((await store.listSessionCheckpoints('s1'))[1]!.tree);
      expect(await b.readChangeEntries('s1', 't1')).toEqual({ hello: 1 });
    } finally {
      await b.close();
    }
  });
});

describe('importing, choosing and repeating', () => {
  it('keeps checkpoint ids when the directory is the same, leaves sessions the store has alone, and asks which workspace when the remote holds several', async () => {
    const { url } = await remoteRepo();
    const env = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };
    const { store, repo } = await storeWithCheckpoint();
    const other = await openWorkspaceStore({ stateDir: temp.make('state-o-'), workspaceDir: makeRepo(temp.make('other-'), { 'x.txt': 'x\n' }) });
    cleanup.push(() => other.close());
    await other.writeCheckpoint({ sessionId: 'o1', kind: 'start', turnId: 'x', tree: EMPTY_TREE_OID });
    await new WorkspaceMirror(store, mirrorRemote(url, env)).syncNow();
    await new WorkspaceMirror(other, mirrorRemote(url, env)).syncNow();
    const { importMirror, ImportError } = await import('../../server/mirror/import.js');

    // Two workspaces mirrored, and the directory's name matches neither: the user must choose.
    const elsewhere = temp.make('unrelated-');
    const stateDir = temp.make('state-b-');
    await expect(importMirror({ url, stateDir, workspaceDir: elsewhere, env })).rejects.toThrow(ImportError);
    await expect(importMirror({ url, stateDir, workspaceDir: elsewhere, env })).rejects.toThrow(/--from/);

    // Same directory, fresh state directory (a reinstall): the commits come back identical.
    const source = new WorkspaceMirror(store, mirrorRemote(url, env)).source;
    await store.close();
    const fresh = temp.make('state-c-');
    const first = await importMirror({ url, stateDir: fresh, workspaceDir: repo, env, from: source });
    expect(first.imported).toEqual([{ sessionId: 's1', turns: 1 }]);
    const again = await importMirror({ url, stateDir: fresh, workspaceDir: repo, env, from: source.replace(/-[0-9a-f]{16}$/, '') });
    expect(again).toMatchObject({ imported: [], skipped: ['s1'] });
    const ids = (dir: string) =>
      execFileSync('git', ['--git-dir', dir, 'for-each-ref', '--format=%(objectname) %(refname)', 'refs/changeset-server/sessions/'], { encoding: 'utf8' });
    const shadowOf = (state: string) => execFileSync('sh', ['-c', `echo "${state}"/workspaces/*/shadow.git`], { encoding: 'utf8' }).trim();
    // The only additions: the end marker, since the mirrored session was still live, and the mark of an imported session.
    const imported = ids(shadowOf(fresh))
      .split('\n')
      .filter((l) => !l.endsWith('/ended') && !l.endsWith('/imported'));
    expect(imported.join('\n')).toBe(ids(store.layout.shadowDir));
    expect(ids(shadowOf(fresh))).toMatch(/\/s1\/ended$/m);
  });
});
