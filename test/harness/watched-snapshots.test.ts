/**
 * Change-driven snapshots as a harness sees them: turns over a socket whose
 * edits land right before `turnEnded` record exactly git's tree, and a
 * change the file watcher missed is found by the idle verification walk and
 * shown by `harness/status` and `changeset-server status`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatStatus } from '../../server/cli/status-command.js';
import type { StatusResult } from '../../server/harness/status.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';

const SESSION = 'ahp-session:/watched';

/** `git add -A && git write-tree` with a private index: the tree a turn end must record. */
function gitTree(repo: string): string {
  const tmp = mkdtempSync(join(tmpdir(), 'cs-watched-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    git(repo, ['add', '-A'], undefined, env);
    return git(repo, ['write-tree'], undefined, env).trim();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe('change-driven snapshots over a socket', () => {
  const temp = new TempDirs();
  let t: TestService;
  let client: TestClient;
  let repo: string;
  const previousIdle = process.env['CHANGESET_SERVER_VERIFY_IDLE_MS'];

  beforeEach(async () => {
    process.env['CHANGESET_SERVER_VERIFY_IDLE_MS'] = '300';
    const files: Record<string, string> = {};
    for (let i = 0; i < 50; i++) files[`src/m${i % 5}/f${i}.ts`] = `export const v${i} = ${i};\n`;
    repo = makeRepo(temp.make('cs-watched-repo-'), files);
    t = await startTestService();
    client = await TestClient.connect(t.url);
    await client.initialize();
    expect(await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href })).toBeNull();
  });

  afterEach(async () => {
    if (previousIdle === undefined) delete process.env['CHANGESET_SERVER_VERIFY_IDLE_MS'];
    else process.env['CHANGESET_SERVER_VERIFY_IDLE_MS'] = previousIdle;
    await client.close();
    await t.stop();
    temp.cleanup();
  });

  async function turn(id: string, edit: () => void): Promise<TurnSummary> {
    await client.request('harness/turnStarted', { channel: SESSION, turnId: id });
    edit();
    const ended = await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: SESSION, turnId: id });
    return ended.summary;
  }

  async function status(): Promise<StatusResult> {
    return client.request<StatusResult>('harness/status', { channel: SESSION });
  }

  it('records git’s tree when edits land right before turnEnded, following the watcher', async () => {
    for (let round = 0; round < 4; round++) {
      const summary = await turn(`turn-${round}`, () => {
        writeFileSync(join(repo, `src/m1/f${round}.ts`), `edited in round ${round}\n`);
        writeFileSync(join(repo, `src/new-${round}.ts`), 'new\n');
      });
      expect(summary.snapshot?.after).toBe(gitTree(repo));
      expect(summary.total).toBe(2);
    }
    const [tracking] = (await status()).sessions[0]!.snapshots!;
    expect(tracking!.incremental).toBeGreaterThanOrEqual(4);
    // Every turn after the first starts from the previous turn's end: nothing changed in between.
    expect(tracking!.reused).toBeGreaterThanOrEqual(3);
  });

  it('finds a change the watcher missed in the idle verification walk and shows the count in status', async () => {
    await turn('turn-1', () => writeFileSync(join(repo, 'src/m0/f0.ts'), 'seen\n'));
    const root = t.service.sessions.get(SESSION)!.files.root(0);
    root.watcher!.muteForTests(true);
    writeFileSync(join(repo, 'src/m2/f2.ts'), 'changed while the watcher was not listening\n');
    expect(await root.watcher!.sync()).toBe(true);
    root.watcher!.muteForTests(false);

    // A turn trusting the watcher cannot see it; the verification walk that runs once the directory is quiet does.
    await turn('turn-2', () => undefined);
    let info = (await status()).sessions[0]!;
    for (let i = 0; i < 100 && (info.snapshots?.[0]?.missed ?? 0) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      info = (await status()).sessions[0]!;
    }
    expect(info.snapshots![0]).toMatchObject({ missed: 1, lastMissed: ['src/m2/f2.ts'] });
    expect(info.snapshots![0]!.verifications).toBeGreaterThanOrEqual(1);
    expect(formatStatus({ sessions: [info] })).toMatch(/1 change the file watcher missed \(latest: src\/m2\/f2\.ts\)/);

    // The next turn starts from the corrected state and records exactly git's tree.
    const summary = await turn('turn-3', () => writeFileSync(join(repo, 'src/m3/f3.ts'), 'after verification\n'));
    expect(summary.snapshot?.after).toBe(gitTree(repo));
  });

  it('records git’s tree with watching turned off', async () => {
    await client.close();
    await t.stop();
    process.env['CHANGESET_SERVER_WATCH'] = 'off';
    try {
      t = await startTestService();
      client = await TestClient.connect(t.url);
      await client.initialize();
      expect(await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href })).toBeNull();
      const summary = await turn('turn-1', () => writeFileSync(join(repo, 'src/m4/f4.ts'), 'edited\n'));
      expect(summary.snapshot?.after).toBe(gitTree(repo));
      expect((await status()).sessions[0]!.snapshots).toBeUndefined();
    } finally {
      delete process.env['CHANGESET_SERVER_WATCH'];
    }
  });
});
