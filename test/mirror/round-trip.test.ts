import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, ROOT_CHANNEL, SessionStatus, type ListSessionsResult } from '../../protocol/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import type { MirrorStatus } from '../../server/mirror/mirror-service.js';
import { run, startServe, type ServeProcess } from '../cli/serve-process.js';
import { run as runInProcess } from '../helpers/cli-in-process.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

// Run `npm run build` first: these tests start the built binary for `serve`; the other commands run in the test's process.
const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

const TOKEN = 'mirror-token-5b8e0d2a9c41';
const TOKEN_ENV = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };

/** Every file under a directory (`.git` left out), relative path → bytes. */
function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.set(relative(dir, full), readFileSync(full));
    }
  };
  walk(dir);
  return out;
}

/** Every file under a directory that contains `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && readFileSync(full).includes(needle)) found.push(full);
    }
  };
  walk(dir);
  return found;
}

async function connect(serve: ServeProcess): Promise<TestClient> {
  const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
  await client.initialize();
  cleanup.push(() => client.close());
  return client;
}

async function waitUntilPushed(client: TestClient, timeoutMs = 30_000): Promise<MirrorStatus> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = await client.request<MirrorStatus>('mirror/status', {});
    const done = status.workspaces.length > 0 && status.workspaces.every((w) => w.pendingRefs === 0 && !w.pushing && w.lastSuccessAt !== undefined);
    if (done) return status;
    if (Date.now() > until) throw new Error(`not pushed in time: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('checkpoints mirrored to a git remote', () => {
  it('a session mirrored from one state directory is imported into a fresh one and restores byte-exactly; remote branches untouched; the token never on disk', async () => {
    // A remote that already holds a project branch and a tag.
    const remoteRoot = temp.make('remote-');
    const bare = join(remoteRoot, 'project.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    const project = makeRepo(temp.make('project-'), { 'README.md': '# project\n', 'src/app.js': 'console.log(1);\n' });
    git(project, ['push', '-q', bare, 'main']);
    git(project, ['tag', 'v1']);
    git(project, ['push', '-q', bare, 'v1']);
    const forEachRef = (pattern: string) =>
      execFileSync('git', ['--git-dir', bare, 'for-each-ref', '--format=%(objectname) %(refname)', pattern], { encoding: 'utf8' });
    const branchesBefore = forEachRef('refs/heads/') + forEachRef('refs/tags/');
    const remote = await GitHttpServer.start({ root: remoteRoot, token: TOKEN });
    cleanup.push(() => remote.stop());
    const url = remote.url('project.git');

    // Machine A: record two turns with the mirror on.
    const stateA = temp.make('state-a-');
    const serveA = await startServe([project, '--state-dir', stateA, '--mirror', url], TOKEN_ENV);
    cleanup.push(() => serveA.stop());
    const a = await connect(serveA);
    const session = serveA.ready.sessions[0]!;
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256));
    await recordTurn(
      a,
      session,
      't1',
      () => {
        writeFiles(project, { 'src/app.js': 'console.log(2);\n', 'assets/logo.bin': binary, 'notes/ünïcode.txt': 'crlf\r\nline\r\n' });
        chmodSync(join(project, 'src/app.js'), 0o755);
      },
      'first prompt',
    );
    const afterTurn1 = filesOf(project);
    const modeAfterTurn1 = statSync(join(project, 'src/app.js')).mode & 0o777;
    await recordTurn(a, session, 't2', () => writeFiles(project, { 'src/app.js': 'console.log(3);\n', 'README.md': '# changed\n' }), 'second prompt');

    const pushed = await waitUntilPushed(a);
    expect(pushed.url).toBe(url);
    const human = await runInProcess(['status', '--url', serveA.ready.url, '--token', serveA.ready.token!]);
    expect(human.stdout).toContain(`mirror: ${url}`);
    expect(human.stdout).toContain('up to date');
    await a.close();
    expect(await serveA.stop()).toBe(0);

    // Only the mirror's namespace was written; the project's branch and tag are as they were.
    expect(forEachRef('refs/heads/') + forEachRef('refs/tags/')).toBe(branchesBefore);
    const allRefs = forEachRef('refs/')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[1]!);
    expect(allRefs.filter((r) => !r.startsWith('refs/changeset-server/mirror/'))).toEqual(['refs/heads/main', 'refs/tags/v1']);
    execFileSync('git', ['--git-dir', bare, 'fsck', '--no-dangling'], { stdio: 'ignore' });
    // Pushes that carried no token were turned away before the token was sent.
    expect(remote.requests.some((r) => r.status === 401)).toBe(true);
    expect(remote.requests.filter((r) => r.method === 'POST').every((r) => r.authorization !== undefined)).toBe(true);

    // The token is in no file of the state directory and in nothing the server printed.
    expect(filesContaining(stateA, TOKEN)).toEqual([]);
    expect(serveA.stderr()).not.toContain(TOKEN);

    // Machine B: a fresh clone elsewhere, a fresh state directory.
    const checkout = join(temp.make('machine-b-'), 'project');
    execFileSync('git', ['clone', '-q', '-b', 'main', bare, checkout]);
    const stateB = temp.make('state-b-');
    const imported = await runInProcess(['import', url, '--workspace', checkout, '--state-dir', stateB, '--json'], { env: TOKEN_ENV });
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    const result = JSON.parse(imported.stdout) as { imported: { sessionId: string; turns: number }[]; mirrored: { path: string } };
    expect(result.imported).toEqual([{ sessionId: session.slice('ahp-session:/'.length), turns: 2, title: expect.stringMatching(/ — /) }]);
    expect(result.mirrored.path).toBe(project);
    expect(filesContaining(stateB, TOKEN)).toEqual([]);

    const serveB = await startServe([checkout, '--state-dir', stateB]);
    cleanup.push(() => serveB.stop());
    const b = await connect(serveB);
    const listed = await b.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
    const past = listed.items.find((s) => s.resource === session);
    expect(past).toBeDefined();
    expect(past!.status & SessionStatus.IsArchived).toBe(SessionStatus.IsArchived);
    expect(past!._meta).toMatchObject({ turnCount: 2, firstPrompt: 'first prompt' });
    const status = await b.request<StatusResult>('harness/status', { channel: session });
    expect(status.sessions[0]!.workingDirectories).toEqual([checkout]);

    // Browsable: the first turn's changeset lists its files.
    const sid = session.slice('ahp-session:/'.length);
    const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId });
    const turn1 = await subscribeReady(b, turnUri('t1'));
    expect(turn1.files.map((f) => (f._meta as { path?: string } | undefined)?.path ?? f.id).sort()).toEqual(
      expect.arrayContaining([expect.stringContaining('logo.bin'), expect.stringContaining('app.js')]),
    );

    // Restorable: the start of turn 2 is the end of turn 1, byte for byte, on machine B.
    await subscribeReady(b, turnUri('t2'));
    await b.request('invokeChangesetOperation', { channel: turnUri('t2'), operationId: 'restore-checkpoint' }, { timeoutMs: 30_000 });
    expect(filesOf(checkout)).toEqual(afterTurn1);
    expect(statSync(join(checkout, 'src/app.js')).mode & 0o777).toBe(modeAfterTurn1);
  }, 180_000);

  it('refuses a mirror URL with credentials in it, or not over HTTP, before starting', async () => {
    const state = temp.make('state-');
    const dir = temp.make('work-');
    // Both are refused before the server starts, so they can run together.
    const [withToken, ssh] = await Promise.all([
      run(['serve', dir, '--state-dir', state, '--mirror', `http://user:${TOKEN}@127.0.0.1:9/x.git`]),
      run(['serve', dir, '--state-dir', state], { env: { CHANGESET_SERVER_MIRROR: 'ssh://host/x.git' } }),
    ]);
    expect(withToken.code).toBe(2);
    expect(withToken.stderr).toContain('must not contain credentials');
    expect(withToken.stderr).not.toContain(TOKEN);
    expect(ssh.code).toBe(2);
    expect(ssh.stderr).toContain('http:// or https://');
  });

  it('import says what is wrong: no URL, an empty remote, a wrong token', async () => {
    const remoteRoot = temp.make('remote-');
    execFileSync('git', ['init', '-q', '--bare', join(remoteRoot, 'empty.git')]);
    const remote = await GitHttpServer.start({ root: remoteRoot, token: TOKEN });
    cleanup.push(() => remote.stop());
    // Three imports that each stop before writing anything, each in a state directory of its own.
    const [noUrl, empty, refused] = await Promise.all([
      runInProcess(['import', '--state-dir', temp.make('state-')]),
      runInProcess(['import', remote.url('empty.git'), '--state-dir', temp.make('state-'), '--workspace', temp.make('w-')], { env: TOKEN_ENV }),
      runInProcess(['import', remote.url('empty.git'), '--state-dir', temp.make('state-'), '--workspace', temp.make('w-'), '--json'], {
        env: { CHANGESET_SERVER_MIRROR_TOKEN: 'wrong-token-0000' },
      }),
    ]);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('mirror URL is missing');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('holds no mirrored sessions');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.message).toBe('the remote refused the token (HTTP 401)');
  });
});
