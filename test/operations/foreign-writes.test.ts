import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AhpErrorCodes, changesetUriTemplate, expandChangesetUri, JsonRpcErrorCodes } from '../../protocol/index.js';
import { readDiskFile } from '../../server/disk/workspace-file.js';
import { executePlan } from '../../server/operations/execute.js';
import { ChangesetService } from '../../server/service.js';
import { run, startServe } from '../cli/serve-process.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { GitHttpServer } from '../helpers/git-http-server.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { mirrorSession } from '../mirror/crafted-mirror.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

// Run `npm run build` first: the CLI cases start the built binary.
const temp = new TempDirs();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  temp.cleanup();
});

const TOKEN = 'foreign-writes-token-51c0';
const ENV = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

describe('symbolic links from an imported session', () => {
  it('a restore lists links pointing outside the working directory in its dry run and does not create them, unless --allow-outside-symlinks', async () => {
    const root = temp.make('remote-');
    execFileSync('git', ['init', '-q', '--bare', join(root, 'links.git')]);
    const remote = await GitHttpServer.start({ root, token: TOKEN });
    cleanup.push(() => remote.stop());
    const url = remote.url('links.git');
    // Turn 1 of the mirrored session removed three links its start had: one inside, two leading out.
    const machineA = makeRepo(temp.make('machine-a-'), { 'a.txt': 'one\n' });
    const { sessionId } = await mirrorSession(url, ENV, {
      stateDir: temp.make('state-a-'),
      workspaceDir: machineA,
      sessionId: 'links-session',
      before: { 'a.txt': 'one\n', 'docs/readme': { link: '../a.txt' }, passwd: { link: '/etc/passwd' }, 'docs/up': { link: '../../outside/target' } },
      after: { 'a.txt': 'two\n' },
    });
    const checkout = makeRepo(temp.make('checkout-'), { 'a.txt': 'two\n' });
    const state = temp.make('state-b-');
    const imported = await run(['import', url, '--workspace', checkout, '--state-dir', state], { env: ENV });
    expect(imported.code).toBe(0);

    const serve = await startServe([checkout, '--state-dir', state]);
    cleanup.push(() => serve.stop());
    const target = ['--session', `ahp-session:/${sessionId}`, '--url', serve.ready.url, '--token', serve.ready.token!];

    const dry = await run(['restore', '--turn', '1', '--dry-run', '--json', ...target]);
    expect(dry.code).toBe(0);
    const planned = JSON.parse(dry.stdout) as { files: { path: string; action: string }[]; skipped: { path: string; reason: string }[] };
    expect(planned.files).toEqual(
      expect.arrayContaining([
        { path: 'docs/readme', action: 'create' },
        { path: 'a.txt', action: 'write' },
      ]),
    );
    expect(planned.files.map((f) => f.path)).not.toEqual(expect.arrayContaining(['passwd']));
    expect(planned.skipped).toEqual(
      expect.arrayContaining([
        {
          path: 'passwd',
          reason: expect.stringMatching(
            /^a symbolic link to "\/etc\/passwd", outside the working directory, from an imported session: .*--allow-outside-symlinks/,
          ),
        },
        { path: 'docs/up', reason: expect.stringMatching(/^a symbolic link to "\.\.\/\.\.\/outside\/target", outside the working directory/) },
      ]),
    );
    const human = await run(['restore', '--turn', '1', '--dry-run', ...target]);
    expect(human.stdout).toContain('skipped passwd: a symbolic link to "/etc/passwd", outside the working directory');

    const restored = await run(['restore', '--turn', '1', ...target]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain('skipped docs/up: a symbolic link to "../../outside/target"');
    expect(readFileSync(join(checkout, 'a.txt'), 'utf8')).toBe('one\n');
    expect(readlinkSync(join(checkout, 'docs/readme'))).toBe('../a.txt');
    expect(isLink(join(checkout, 'passwd'))).toBe(false);
    expect(isLink(join(checkout, 'docs/up'))).toBe(false);

    // Asked for by name, they are created.
    const allowed = await run(['restore', '--turn', '1', '--allow-outside-symlinks', ...target]);
    expect(allowed.code).toBe(0);
    expect(readlinkSync(join(checkout, 'passwd'))).toBe('/etc/passwd');
    expect(readlinkSync(join(checkout, 'docs/up'))).toBe('../../outside/target');

    // The flag over the protocol is checked like every parameter.
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    cleanup.push(() => client.close());
    await client.initialize();
    const channel = expandChangesetUri(changesetUriTemplate(sessionId, 'turn'), { turnId: 't1' });
    await subscribeReady(client, channel);
    await expect(
      client.request('invokeChangesetOperation', { channel, operationId: 'restore-checkpoint', _meta: { allowOutsideSymlinks: 'yes' } }),
    ).rejects.toMatchObject({
      code: JsonRpcErrorCodes.InvalidParams,
      message: expect.stringContaining('params._meta.allowOutsideSymlinks must be a boolean'),
    });
  }, 90_000);
});

describe('paths inside .git, from a session recorded here', () => {
  const SID = 'dotgit-local';
  const SESSION = `ahp-session:/${SID}`;

  async function recordedDotGitTurn(): Promise<{ service: ChangesetService; client: TestClient; dir: string; config: string }> {
    const dir = makeRepo(temp.make('work-'), { 'a.txt': 'one\n' });
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: temp.make('state-'), log: () => undefined });
    const { url } = await service.start();
    cleanup.push(() => service.stop());
    const client = await TestClient.connect(url);
    cleanup.push(() => client.close());
    await client.initialize();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 30_000 });
    // An agent announced and edited the repository's own config in turn 1 (a capture: snapshots never see .git).
    const config = join(dir, '.git', 'config');
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1', message: 'edit' }, { timeoutMs: 30_000 });
    await client.request('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [config, 'a.txt'], tool: 'Edit' }, { timeoutMs: 30_000 });
    writeFileSync(config, `${readFileSync(config, 'utf8')}[user]\n\tname = agent\n`);
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' }, { timeoutMs: 60_000 });
    return { service, client, dir, config };
  }

  it('restore and revert skip them with the reason, in the dry run too, and never write them', async () => {
    const { client, dir, config } = await recordedDotGitTurn();
    // The user then sets their own config; no operation may write over it.
    const mine = `${readFileSync(config, 'utf8')}[core]\n\tmine = yes\n`;
    writeFileSync(config, mine);
    const channel = expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' });
    await subscribeReady(client, channel);
    for (const operationId of ['restore-checkpoint', 'revert']) {
      const dry = await client.request<{ _meta: { skipped: { path: string; reason: string }[] } }>(
        'invokeChangesetOperation',
        { channel, operationId, _meta: { dryRun: true } },
        { timeoutMs: 30_000 },
      );
      expect(dry._meta.skipped, operationId).toContainEqual({
        path: '.git/config',
        reason: expect.stringMatching(/^"\.git" is a \.git directory .*: git never writes there, and neither does any operation$/),
      });
    }
    const done = await client.request<{ message: string }>('invokeChangesetOperation', { channel, operationId: 'restore-checkpoint' }, { timeoutMs: 30_000 });
    expect(done.message).toContain('skipped .git/config (".git" is a .git directory');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(config, 'utf8')).toBe(mine);
  }, 60_000);

  it('executePlan refuses a plan that would write inside .git, naming the file, before anything is written', async () => {
    const { service, dir, config } = await recordedDotGitTurn();
    const session = service.sessions.get(SESSION)!;
    const before = readFileSync(config);
    const safetyBefore = (await session.safety.list()).length;
    const current = await readDiskFile(config);
    const plan = {
      writes: [
        {
          absPath: join(dir, 'a.txt'),
          root: 0,
          display: 'a.txt',
          current: await readDiskFile(join(dir, 'a.txt')),
          next: { content: Buffer.from('planted\n'), mode: '100644' as const },
        },
        { absPath: config, root: 0, display: '.git/config', current, next: { content: Buffer.from('[core]\n\tfsmonitor = false\n'), mode: '100644' as const } },
      ],
      conflicts: [],
      unchanged: [],
      skipped: [],
      userEdited: [],
    };
    await expect(executePlan(session, plan, { operation: 'revert', changeset: 'test' })).rejects.toMatchObject({
      code: AhpErrorCodes.PermissionDenied,
      message: expect.stringContaining('.git/config'),
    });
    expect(readFileSync(config)).toEqual(before);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('two\n');
    expect((await session.safety.list()).length).toBe(safetyBefore);
  }, 60_000);
});
