/**
 * An imported session shows what the original showed: its title, and the
 * session's file and line counts (from its start to its end, the same as
 * `git diff --numstat` between them), whatever the local checkout holds.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT_CHANNEL, type ListSessionsResult, type SessionSummary } from '../../protocol/index.js';
import { importMirror } from '../../server/mirror/import.js';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { MirrorService } from '../../server/mirror/mirror-service.js';
import { ChangesetService } from '../../server/service.js';
import { recordTurn } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

const TOKEN = 'figures-token-4c2d9e';
const ENV = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };

/** Additions, deletions and files of `git diff --numstat` between two commits. */
function numstat(repo: string, from: string, to: string): { additions: number; deletions: number; files: number } {
  const rows = git(repo, ['diff', '--numstat', from, to])
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'));
  return {
    additions: rows.reduce((n, r) => n + Number(r[0]), 0),
    deletions: rows.reduce((n, r) => n + Number(r[1]), 0),
    files: rows.length,
  };
}

async function start(stateDir: string): Promise<{ service: ChangesetService; url: string }> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const { url } = await service.start();
  cleanup.push(() => service.stop());
  return { service, url };
}

async function connect(url: string): Promise<TestClient> {
  const client = await TestClient.connect(url);
  await client.initialize();
  cleanup.push(() => client.close());
  return client;
}

async function listed(client: TestClient, uri: string): Promise<SessionSummary> {
  const list = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
  return list.items.find((s) => s.resource === uri)!;
}

describe('an imported session', () => {
  it('keeps the title the original had and counts its changes from its start to its end, as git diff --numstat does', async () => {
    const remoteRoot = temp.make('remote-');
    execFileSync('git', ['init', '-q', '--bare', `${remoteRoot}/mirror.git`]);
    const remote = await GitHttpServer.start({ root: remoteRoot, token: TOKEN });
    cleanup.push(() => remote.stop());

    // Machine A records a session in "ws1-…": more lines added than removed, so swapped signs show.
    const repo = makeRepo(temp.make('ws1-'), { 'a.txt': 'a\nb\nc\n', 'gone.txt': 'x\ny\n' });
    const start0 = git(repo, ['rev-parse', 'HEAD']);
    const stateA = temp.make('state-a-');
    const a = await start(stateA);
    const mirror = new MirrorService(a.service.sessions, {
      remote: mirrorRemote(remote.url('mirror.git'), ENV),
      stateDir: stateA,
      timing: { debounceMs: 20, retryBaseMs: 100, retryMaxMs: 400 },
      log: () => undefined,
    });
    cleanup.push(() => mirror.stop(0));
    const session = await a.service.openWorkspace([repo]);
    const client = await connect(a.url);
    await recordTurn(client, session.uri, 't1', () => writeFiles(repo, { 'a.txt': 'a\nB\nc\nd\ne\n', 'new.txt': '1\n2\n3\n4\n' }), 'first prompt');
    await recordTurn(client, session.uri, 't2', () => execFileSync('rm', [`${repo}/gone.txt`]), 'second prompt');
    const original = await listed(client, session.uri);
    await a.service.sessions.dispose(session.uri);
    const until = Date.now() + 30_000;
    for (;;) {
      const [w] = (await mirror.status()).workspaces;
      if (w && w.pendingRefs === 0 && !w.pushing && w.lastSuccessAt !== undefined) break;
      if (Date.now() > until) throw new Error(`not mirrored in time: ${JSON.stringify(w)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // What the session did, as git counts it.
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'the session']);
    const expected = numstat(repo, start0, 'HEAD');
    expect(expected).toEqual({ additions: 7, deletions: 3, files: 3 });
    expect(original.changes).toEqual(expected);

    // Machine B: a clone of the project before the session, in a folder of another name, with its own new session.
    const checkout = temp.make('ws2-');
    execFileSync('git', ['clone', '-q', repo, checkout]);
    git(checkout, ['reset', '-q', '--hard', start0]);
    const stateB = temp.make('state-b-');
    const imported = await importMirror({ url: remote.url('mirror.git'), stateDir: stateB, workspaceDir: checkout, env: ENV });
    expect(imported.imported).toEqual([{ sessionId: session.id, turns: 2 }]);
    const b = await start(stateB);
    const fresh = await b.service.openWorkspace([checkout]);
    await b.service.openHistory([checkout]);
    const clientB = await connect(b.url);
    await expect.poll(async () => (await listed(clientB, session.uri))?.changes).toEqual(expected);
    const copy = await listed(clientB, session.uri);
    expect(copy.title).toBe(original.title);
    expect(copy.title).not.toBe((await listed(clientB, fresh.uri)).title);
    expect(copy.createdAt).toBe(original.createdAt);
    expect(copy._meta).toMatchObject({ firstPrompt: 'first prompt', turnCount: 2 });
  }, 120_000);
});
