import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState } from '../../protocol/index.js';
import { workspaceLayout } from '../../server/store/index.js';
import { captureTestHooks } from '../../server/changes/capture.js';
import { subscribeReady } from '../helpers/changesets.js';
import { ChangesetService } from '../../server/service.js';
import { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const SID = 'contained-reads';
const SESSION = `ahp-session:/${SID}`;
const PERMISSION_DENIED = -32009;
/** In every file outside the workspace and nowhere inside it. */
const SECRET = 'outside-secret-5c9e21';

const uriOf = (kind: 'turn' | 'session', vars: Record<string, string> = {}) => expandChangesetUri(changesetUriTemplate(SID, kind), vars);

describe('reads of captured paths stay inside the working directory', () => {
  const temp = new TempDirs();
  let t: TestService;
  let client: TestClient;
  let repo: string;
  let outside: string;
  let swapper: ChildProcess | undefined;

  beforeEach(async () => {
    repo = makeRepo(temp.make('cs-read-repo-'), { '.gitignore': 'ignored\n', 'a.txt': 'a\n' });
    writeFiles(repo, { 'ignored/config.txt': 'inside config\n' });
    outside = temp.make('cs-read-outside-');
    writeFiles(outside, { 'config.txt': `${SECRET} config\n` });
    t = await startTestService();
    client = await t.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' });
  });

  afterEach(async () => {
    delete captureTestHooks.beforeRead;
    swapper?.kill('SIGKILL');
    swapper = undefined;
    await t.stop();
    temp.cleanup();
  });

  /** `ignored` becomes a symlink to the outside directory (as an agent's `rm -r ignored && ln -s … ignored` would leave it). */
  function swapIgnoredForLink(): void {
    rmSync(join(repo, 'ignored'), { recursive: true });
    symlinkSync(outside, join(repo, 'ignored'));
  }

  /** Every object of the session's store, as stock git prints them. */
  function storeObjects(): string {
    const shadow = workspaceLayout(t.stateDir, repo).shadowDir;
    return execFileSync('git', ['--git-dir', shadow, 'cat-file', '--batch-all-objects', '--batch'], { maxBuffer: 256 * 1024 * 1024 }).toString('latin1');
  }

  /** Every piece of content the changesets hand out, read back with `resourceRead`. */
  async function servedContent(changeset: ChangesetState): Promise<string> {
    let all = '';
    for (const file of changeset.files) {
      for (const side of [file.edit?.before, file.edit?.after]) {
        if (!side?.content) continue;
        const read = await client.request<{ data: string; encoding: string }>('resourceRead', { channel: 'ahp-root://', uri: side.content });
        all += read.encoding === 'base64' ? Buffer.from(read.data, 'base64').toString('latin1') : read.data;
      }
    }
    return all;
  }

  async function expectNoSecretAnywhere(): Promise<void> {
    expect(storeObjects()).not.toContain(SECRET);
    for (const uri of [uriOf('turn', { turnId: 't1' }), uriOf('session')]) {
      const changeset = await subscribeReady(client, uri);
      expect(JSON.stringify(changeset)).not.toContain(SECRET);
      expect(await servedContent(changeset)).not.toContain(SECRET);
    }
  }

  it('does not read a captured path at turn end once its directory was swapped for a link outside', async () => {
    const { captured } = await client.request<{ captured: string[] }>('harness/beforeEdit', {
      channel: SESSION,
      turnId: 't1',
      paths: ['ignored/config.txt'],
      tool: 'Write',
    });
    expect(captured).toEqual([join(repo, 'ignored/config.txt')]);
    swapIgnoredForLink();
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });

    await expectNoSecretAnywhere();
    // The captured content before the turn is kept; what the path leads to now is reported, not read.
    expect(storeObjects()).toContain('inside config');
    const turn = await subscribeReady(client, uriOf('turn', { turnId: 't1' }));
    const file = turn.files.find((f) => (f._meta as { path: string }).path === 'ignored/config.txt');
    expect(file?._meta).toMatchObject({ kind: 'deleted', captured: true, leftWorkingDirectory: true });
  });

  it('still says the path left the working directory after a restart', async () => {
    await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: ['ignored/config.txt'] });
    swapIgnoredForLink();
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });
    await t.service.stop();
    const again = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: t.stateDir, log: () => undefined });
    const next = await TestClient.connect((await again.start()).url);
    try {
      await next.initialize();
      await next.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
      const turn = await subscribeReady(next, uriOf('turn', { turnId: 't1' }));
      expect(turn.files.map((f) => f._meta)).toEqual([expect.objectContaining({ path: 'ignored/config.txt', kind: 'deleted', leftWorkingDirectory: true })]);
    } finally {
      await next.close();
      await again.stop();
    }
  });

  it('refuses a beforeEdit whose directory is swapped for a link between the check and the read', async () => {
    const session = t.service.sessions.require(SESSION);
    // The step is recorded once every path was checked; the first read is held until the directory is swapped.
    let checkedBeforeSwap: boolean | undefined;
    captureTestHooks.beforeRead = async () => {
      if (checkedBeforeSwap !== undefined) return;
      checkedBeforeSwap = (session.turn('t1')!.steps ?? []).length > 0;
      swapIgnoredForLink();
    };
    const error = await client.requestError(
      'harness/beforeEdit',
      { channel: SESSION, turnId: 't1', paths: ['a.txt', 'ignored/config.txt'], tool: 'Write' },
      { timeoutMs: 20_000 },
    );
    expect(checkedBeforeSwap).toBe(true);
    expect(error.code).toBe(PERMISSION_DENIED);
    expect(error.message).toBe("ignored/config.txt resolves outside the session's working directories");
    delete captureTestHooks.beforeRead;
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });
    await expectNoSecretAnywhere();
  });

  it('captures nothing from outside while a directory is swapped to and fro at random moments', async () => {
    const count = 30;
    writeFiles(repo, Object.fromEntries(Array.from({ length: count }, (_, i) => [`ignored/f${i}.txt`, `inside ${i}\n`])));
    writeFiles(outside, Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}.txt`, `${SECRET} ${i}\n`])));
    symlinkSync(outside, join(repo, 'ignored.link'));
    swapper = startSwapper(repo);
    let accepted = 0;
    for (let i = 0; i < count; i++) {
      try {
        await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [`ignored/f${i}.txt`] });
        accepted++;
      } catch (error) {
        expect((error as { code: number }).code, (error as Error).message).toBe(PERMISSION_DENIED);
      }
    }
    swapper.kill('SIGKILL');
    await new Promise((r) => swapper!.once('exit', r));
    settleSwap(repo);
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });
    expect(accepted).toBeGreaterThan(0);
    await expectNoSecretAnywhere();
  });
});

/**
 * A second process that swaps `ignored` between the real directory and a
 * symlink to the outside one, by renames, as fast as it can with random
 * gaps, until it is killed.
 */
function startSwapper(repo: string): ChildProcess {
  const script = `
    const fs = require('node:fs');
    const [dir, real, link] = ['ignored', 'ignored.real', 'ignored.link'].map((n) => require('node:path').join(process.argv[1], n));
    const gap = new Int32Array(new SharedArrayBuffer(4));
    const spin = () => Atomics.wait(gap, 0, 0, Math.random() * 2);
    for (;;) {
      try { fs.renameSync(dir, real); fs.renameSync(link, dir); spin(); fs.renameSync(dir, link); fs.renameSync(real, dir); spin(); } catch {}
    }`;
  return spawn(process.execPath, ['-e', script, repo], { stdio: 'ignore' });
}

/** Puts the real directory back at `ignored`, wherever the killed swapper left it. */
function settleSwap(repo: string): void {
  const at = (n: string) => join(repo, n);
  const isLink = (n: string) => lstatSync(at(n), { throwIfNoEntry: false })?.isSymbolicLink() === true;
  if (isLink('ignored')) renameSync(at('ignored'), at('ignored.link'));
  try {
    renameSync(at('ignored.real'), at('ignored'));
  } catch {
    mkdirSync(at('ignored'), { recursive: true });
  }
}
