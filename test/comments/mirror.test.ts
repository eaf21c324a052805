/**
 * Review comments travel with a mirrored session: pushed with its
 * checkpoints and brought back by `import` on another machine, where they
 * list as they did; a mirror whose comments were crafted (control
 * characters for the terminal) is refused whole.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ReviewComment } from '../../protocol/index.js';
import { commentsRef } from '../../server/comments/comment-store.js';
import { importMirror } from '../../server/mirror/import.js';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { MirrorService } from '../../server/mirror/mirror-service.js';
import { ChangesetService } from '../../server/service.js';
import { readRef, writeRef } from '../../server/store/refs.js';
import { recordTurn } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { commentsCheck } from './comment-check.js';

useMemoryTempDir();

const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  temp.cleanup();
});

const TOKEN = 'comments-mirror-token-3c9d';
const ENV = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };
const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');

async function connect(url: string): Promise<TestClient> {
  const client = await TestClient.connect(url, { check: commentsCheck });
  await client.initialize();
  return client;
}

/**
 * Machine A: a session of one turn with two comments, mirrored; `craft`
 * may replace the stored comments with its own bytes before the push.
 * Returns the mirror's URL, the checkout of machine B and what A listed.
 */
async function mirroredWithComments(craft?: (comments: Buffer) => Buffer) {
  const remoteRoot = temp.make('remote-');
  execFileSync('git', ['init', '-q', '--bare', `${remoteRoot}/mirror.git`]);
  const remote = await GitHttpServer.start({ root: remoteRoot, token: TOKEN });
  cleanup.push(() => remote.stop());
  const url = remote.url('mirror.git');
  const repo = makeRepo(temp.make('ws1-'), { 'app.ts': lines(10) });
  const start = git(repo, ['rev-parse', 'HEAD']);
  const stateDir = temp.make('state-a-');
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const mirror = new MirrorService(service.sessions, {
    remote: mirrorRemote(url, ENV),
    stateDir,
    timing: { debounceMs: 20, retryBaseMs: 100, retryMaxMs: 400 },
    log: () => undefined,
  });
  const { url: wsUrl } = await service.start();
  const session = await service.openWorkspace([repo]);
  const client = await connect(wsUrl);
  let listed: ReviewComment[];
  try {
    await recordTurn(client, session.uri, 't1', () => writeFiles(repo, { 'app.ts': lines(10, { 3: 'changed' }) }));
    const changeset = expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId: 't1' });
    await client.request('comments/add', {
      channel: session.uri,
      anchor: { kind: 'lines', changeset, path: 'app.ts', side: 'after', startLine: 3, endLine: 3 },
      body: 'Why?',
    });
    await client.request('comments/add', { channel: session.uri, anchor: { kind: 'turn', turnId: 't1' }, body: 'Looks good', author: 'Ada' });
    await client.request('comments/resolve', { channel: session.uri, id: '2', by: 'agent', note: 'thanks' });
    listed = (await client.request<{ comments: ReviewComment[] }>('comments/list', { channel: session.uri, state: 'all' })).comments;
    if (craft) {
      const store = session.files.root(0).store;
      const stored = await store.readObject((await readRef(store.layout.shadowDir, commentsRef(session.id)))!);
      const oid = await store.writeObject('blob', craft(Buffer.from(stored.content)));
      await store.flush();
      await writeRef(store.layout.shadowDir, commentsRef(session.id), oid);
    }
    await mirror.syncNow();
    const [w] = (await mirror.status()).workspaces;
    expect(w?.pendingRefs).toBe(0);
  } finally {
    await client.close();
    await service.stop();
    await mirror.stop(0);
  }
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'what the session did']);
  const checkout = temp.make('ws2-');
  execFileSync('git', ['clone', '-q', repo, checkout]);
  git(checkout, ['reset', '-q', '--hard', start]);
  return { url, checkout, sessionUri: session.uri, listed };
}

describe('review comments in a mirror', () => {
  it('come back with an imported session as they were listed', async () => {
    const { url, checkout, sessionUri, listed } = await mirroredWithComments();
    const stateDir = temp.make('state-b-');
    await importMirror({ url, stateDir, workspaceDir: checkout, env: ENV });
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
    const { url: wsUrl } = await service.start();
    cleanup.push(() => service.stop());
    await service.openHistory([checkout]);
    const client = await connect(wsUrl);
    cleanup.push(() => client.close());
    const imported = (await client.request<{ comments: ReviewComment[] }>('comments/list', { channel: sessionUri, state: 'all' })).comments;
    expect(imported).toEqual(listed);
    expect(imported.map((c) => [c.body, c.state, c.now])).toEqual([
      ['Why?', 'open', { path: 'app.ts', startLine: 3, endLine: 3 }],
      ['Looks good', 'resolved', undefined],
    ]);
  });

  it('are refused whole when crafted', async () => {
    const edit = (change: (stored: { comments: Record<string, unknown>[] }) => void) => (bytes: Buffer) => {
      const stored = JSON.parse(bytes.toString('utf8')) as { comments: Record<string, unknown>[] };
      change(stored);
      return Buffer.from(JSON.stringify(stored));
    };
    // One crafted mirror end to end; every other shape the check refuses is in stored.test.ts.
    const cases: [string, (bytes: Buffer) => Buffer, string][] = [
      ['escape sequences', edit((s) => (s.comments[0]!['body'] = 'fine\u001b]0;pwned\u0007')), 'comment 1: its text must not contain control characters'],
    ];
    for (const [name, craft, problem] of cases) {
      const { url, checkout } = await mirroredWithComments(craft);
      const stateDir = temp.make('state-b-');
      const refused = await importMirror({ url, stateDir, workspaceDir: checkout, env: ENV }).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(refused, name).toMatch(/^refused, nothing was imported: in session .*, its review comments, /);
      expect(refused, name).toContain(problem);
    }
  });
});
