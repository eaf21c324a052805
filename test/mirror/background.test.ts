import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MirrorService } from '../../server/mirror/mirror-service.js';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import type { WorkspaceMirrorStatus } from '../../protocol/index.js';
import { ChangesetService } from '../../server/service.js';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

const TOKEN = 'bg-token-77c1e0f3a2';

async function setup(files: Record<string, string> = { 'a.txt': 'a\n' }, env: NodeJS.ProcessEnv = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN }) {
  const remoteRoot = temp.make('remote-');
  const bare = `${remoteRoot}/mirror.git`;
  execFileSync('git', ['init', '-q', '--bare', bare]);
  const remote = await GitHttpServer.start({ root: remoteRoot, token: TOKEN });
  cleanup.push(() => remote.stop());
  const repo = makeRepo(temp.make('work-'), files);
  const stateDir = temp.make('state-');
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const { url } = await service.start();
  const lines: string[] = [];
  /** Called with each line the mirror logs, as it logs it. */
  const onLine: ((line: string) => void)[] = [];
  const mirror = new MirrorService(service.sessions, {
    remote: mirrorRemote(remote.url('mirror.git'), env),
    stateDir,
    timing: { debounceMs: 20, retryBaseMs: 100, retryMaxMs: 400 },
    log: (line) => {
      lines.push(line);
      for (const listener of onLine) listener(line);
    },
  });
  service.server.register(mirror.methods());
  cleanup.push(async () => {
    await service.stop();
    await mirror.stop(0);
  });
  const session = await service.openWorkspace([repo]);
  const client = await TestClient.connect(url);
  await client.initialize();
  cleanup.push(() => client.close());
  return { remote, bare, repo, stateDir, service, mirror, session, client, lines, onLine };
}

async function waitFor(mirror: MirrorService, done: (w: WorkspaceMirrorStatus) => boolean, timeoutMs = 20_000): Promise<WorkspaceMirrorStatus> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [w] = (await mirror.status()).workspaces;
    if (w && done(w)) return w;
    if (Date.now() > until) throw new Error(`timed out: ${JSON.stringify(w)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The one session head a repository holds under `pattern`. */
const headIn = (gitDir: string, pattern: string): string =>
  execFileSync('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(objectname)', pattern], { encoding: 'utf8' }).trim();

describe('mirroring in the background', () => {
  it('retries with growing delays while the remote is down and catches up once it is back', async () => {
    const { remote, bare, stateDir, mirror, session, client, lines, onLine } = await setup();
    await waitFor(mirror, (w) => w.pendingRefs === 0 && w.lastSuccessAt !== undefined);
    const delays = new Map<string, number>();
    const delayOf = (w: WorkspaceMirrorStatus | undefined): void => {
      if (w?.lastErrorAt && w.nextRetryAt) delays.set(w.lastErrorAt, Date.parse(w.nextRetryAt) - Date.parse(w.lastErrorAt));
    };
    // Each failure's delay read when it is logged, as well as by the polling below: on a loaded machine a poll every
    // 25 ms can miss a 100 ms retry.
    const sampled: Promise<void>[] = [];
    onLine.push((line) => {
      if (line.includes('retrying in')) sampled.push(mirror.status().then((status) => delayOf(status.workspaces[0])));
    });
    await remote.stop();
    // The lines logged when the status was read: another retry may fail before the checks below run.
    let retryLines: string[] = [];
    // Polled from before the turn, whose push fails first.
    const failingSoon = waitFor(mirror, (w) => {
      delayOf(w);
      retryLines = lines.filter((l) => l.includes('retrying in'));
      return w.failures >= 4;
    });
    await recordTurn(client, session.uri, 't1', () => undefined);
    const failing = await failingSoon;
    await Promise.all(sampled);
    expect(failing.pendingRefs).toBeGreaterThan(0);
    expect(failing.pendingSessions).toEqual([{ session: session.id, refs: failing.pendingRefs }]);
    expect(failing.lastError).toMatch(/ECONNREFUSED|connect/);
    expect(failing.nextRetryAt).toEqual(expect.any(String));
    // Delays double up to the cap: 100, 200, 400, 400 ms, each up to a quarter shorter.
    const seen = [...delays.values()];
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(70);
    expect(Math.max(...seen)).toBeLessThanOrEqual(401);
    expect(Math.max(...seen)).toBeGreaterThan(2 * Math.min(...seen));
    expect(retryLines).toHaveLength(failing.failures);

    await remote.restart();
    const caughtUp = await waitFor(mirror, (w) => w.pendingRefs === 0 && w.lastError === undefined);
    expect(caughtUp.failures).toBe(0);
    const shadow = execFileSync('sh', ['-c', `echo "${stateDir}"/workspaces/*/shadow.git`], { encoding: 'utf8' }).trim();
    expect(headIn(bare, 'refs/changeset-server/mirror/*/sessions/*/head')).toBe(headIn(shadow, 'refs/changeset-server/sessions/*/head'));
  });

  it('never makes a turn wait for the remote: turnEnded answers while the push hangs', async () => {
    const { remote, mirror, session, client } = await setup();
    await waitFor(mirror, (w) => w.pendingRefs === 0 && w.lastSuccessAt !== undefined);
    const timed = async (turnId: string, file: string): Promise<number> => {
      const started = Date.now();
      await recordTurn(client, session.uri, turnId, () => writeFiles(session.workingDirectories[0]!, { [file]: `${turnId}\n` }));
      return Date.now() - started;
    };
    const answered = await timed('t0', 'c.txt');
    remote.stall = true;
    const elapsed = await timed('t1', 'a.txt');
    // The turn is answered while its push is still waiting for the remote.
    const [hanging] = (await mirror.status()).workspaces;
    expect(hanging!.pushing).toBe(true);
    expect(hanging!.pendingRefs).toBeGreaterThan(0);
    expect(elapsed).toBeLessThan(answered + 5000);
    // And a remote that never answers does not hold up stopping.
    const stopping = Date.now();
    await mirror.stop(100);
    expect(Date.now() - stopping).toBeLessThan(2000);
  });

  it("sends a turn's new objects only, not the whole workspace again", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`src/module-${i}.js`] = `export const value${i} = '${randomBytes(300).toString('base64')}';\n`;
    const { remote, mirror, session, client } = await setup(files);
    await recordTurn(client, session.uri, 't1', () => writeFiles(session.workingDirectories[0]!, { 'src/module-7.js': 'changed\n' }));
    await waitFor(mirror, (w) => w.pendingRefs === 0 && !w.pushing && w.lastSuccessAt !== undefined);
    const sent = () => remote.requests.filter((r) => r.method === 'POST' && r.url.endsWith('git-receive-pack')).reduce((n, r) => n + r.bytes, 0);
    const first = sent();
    await recordTurn(client, session.uri, 't2', () => writeFiles(session.workingDirectories[0]!, { 'src/module-9.js': 'changed too\n' }));
    await waitFor(mirror, (w) => w.pendingRefs === 0 && !w.pushing);
    const second = sent() - first;
    expect(first).toBeGreaterThan(80_000);
    expect(second).toBeLessThan(first / 10);
  });

  it('reports a refused token without the token, and sends it as a bearer token when told to', async () => {
    const wrong = await setup(undefined, { CHANGESET_SERVER_MIRROR_TOKEN: 'not-the-token-1234' });
    const refused = await waitFor(wrong.mirror, (w) => w.failures >= 1);
    expect(refused.lastError).toContain('refused the token');
    expect(JSON.stringify(refused)).not.toContain('not-the-token-1234');
    expect(wrong.lines.join('\n')).not.toContain('not-the-token-1234');

    const bearer = await setup(undefined, { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN, CHANGESET_SERVER_MIRROR_AUTH: 'bearer' });
    await waitFor(bearer.mirror, (w) => w.pendingRefs === 0 && w.lastSuccessAt !== undefined);
    expect(bearer.remote.requests.filter((r) => r.status === 200).every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });
});

describe('what is mirrored', () => {
  it('pushes the safety checkpoint an operation writes, and the end of a session', async () => {
    const { bare, mirror, session, client, service } = await setup();
    await recordTurn(client, session.uri, 't1', () => writeFiles(session.workingDirectories[0]!, { 'a.txt': 'by the agent\n' }));
    const uri = expandChangesetUri(changesetUriTemplate(session.id, 'turn'), { turnId: 't1' });
    await subscribeReady(client, uri);
    await client.request('invokeChangesetOperation', { channel: uri, operationId: 'revert' }, { timeoutMs: 20_000 });
    await waitFor(mirror, (w) => w.pendingRefs === 0 && !w.pushing);
    const manifestRefs = () =>
      execFileSync('git', ['--git-dir', bare, 'show', `${headIn(bare, 'refs/changeset-server/mirror/*/manifest')}:refs`], { encoding: 'utf8' });
    expect(manifestRefs()).toMatch(/\/safety\/000002$/m);
    await service.sessions.dispose(session.uri);
    await waitFor(mirror, (w) => w.pendingRefs === 0 && !w.pushing);
    expect(manifestRefs()).toMatch(/\/ended$/m);
  });
});
