import { chmodSync, lstatSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const SESSION = 'ahp-session:/private-store';

/** Permission bits of every directory and regular file under `root` (itself included), by path relative to `root`. */
function modesUnder(root: string): { dirs: Map<string, number>; files: Map<string, number> } {
  const dirs = new Map<string, number>();
  const files = new Map<string, number>();
  const visit = (path: string): void => {
    const st = lstatSync(path);
    const rel = relative(root, path) || '.';
    if (st.isDirectory()) {
      dirs.set(rel, st.mode & 0o7777);
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (st.isFile()) {
      files.set(rel, st.mode & 0o7777);
    }
  };
  visit(root);
  return { dirs, files };
}

function notPrivate(root: string): string[] {
  const { dirs, files } = modesUnder(root);
  const wrong: string[] = [];
  for (const [path, mode] of dirs) if (mode !== 0o700) wrong.push(`dir ${path} ${mode.toString(8)}`);
  for (const [path, mode] of files) if (mode !== 0o600) wrong.push(`file ${path} ${mode.toString(8)}`);
  return wrong;
}

function loosen(root: string): void {
  const { dirs, files } = modesUnder(root);
  for (const path of dirs.keys()) chmodSync(join(root, path), 0o755);
  for (const path of files.keys()) chmodSync(join(root, path), 0o644);
}

describe('the store is private to the user', () => {
  const temp = new TempDirs();
  let previousUmask: number;
  let service: TestService | undefined;
  let repo: string;
  let stateDir: string;

  beforeEach(() => {
    previousUmask = process.umask(0o022);
    repo = makeRepo(temp.make('cs-private-repo-'), { 'a.txt': 'one\n', '.gitignore': '.env\n' });
    writeFiles(repo, { '.env': 'SECRET=1\n' });
    // Not created yet: the server makes it, under the umask above.
    stateDir = join(temp.make('cs-private-state-'), 'state');
  });

  afterEach(async () => {
    await service?.stop();
    service = undefined;
    process.umask(previousUmask);
    temp.cleanup();
  });

  async function recordSession(turnIds: string[]): Promise<void> {
    service = await startTestService({ stateDir });
    const client = await service.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href }).catch(() => undefined);
    for (const turnId of turnIds) {
      await client.request('harness/turnStarted', { channel: SESSION, turnId });
      await client.request('harness/beforeEdit', { channel: SESSION, turnId, paths: ['.env'], tool: 'Write' });
      writeFileSync(join(repo, '.env'), `SECRET=${turnId}\n`);
      writeFileSync(join(repo, 'a.txt'), `edited in ${turnId}\n`);
      await client.request('harness/turnEnded', { channel: SESSION, turnId });
    }
    // A review flag is written to the state directory too.
    const uri = `ahp-changeset:/private-store/turn/${turnIds.at(-1)!}`;
    const state: ChangesetState = await subscribeReady(client, uri);
    client.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [state.files[0]!.id], reviewed: true });
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/filesReviewChanged');
    await vi.waitFor(() => expect(readdirSync(join(stateDir, 'reviews')).filter((n) => n.endsWith('.json'))).toHaveLength(1));
  }

  it('writes every directory 0700 and every file 0600 under umask 022', async () => {
    await recordSession(['t1', 't2', 't3']);
    const { dirs, files } = modesUnder(stateDir);
    expect([...files.keys()].some((p) => p.endsWith('.pack'))).toBe(true);
    expect([...files.keys()].some((p) => p.startsWith('reviews/'))).toBe(true);
    expect([...files.keys()].some((p) => p.endsWith('stat-cache.bin'))).toBe(true);
    expect(dirs.size).toBeGreaterThan(5);
    expect(notPrivate(stateDir)).toEqual([]);
    await service!.stop();
    service = undefined;
    expect(notPrivate(stateDir)).toEqual([]);
  });

  it('tightens a store left readable by others when it is opened again', async () => {
    await recordSession(['t1']);
    await service!.stop();
    service = undefined;
    loosen(stateDir);
    expect(notPrivate(stateDir).length).toBeGreaterThan(10);

    await recordSession(['t2']);
    expect(notPrivate(stateDir)).toEqual([]);
  });
});
