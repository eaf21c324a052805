import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { startServe, type Ready, type ServeProcess } from '../cli/serve-process.js';
import { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { serveInProcess, type InProcess } from './killed-operation.js';

useMemoryTempDir();

const temp = new TempDirs();
const servers: ServeProcess[] = [];
const restarted: InProcess[] = [];
const services: TestService[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop('SIGKILL');
  for (const r of restarted.splice(0)) await r.stop();
  for (const svc of services.splice(0)) await svc.stop();
  temp.cleanup();
});

async function serve(repo: string, stateDir: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; ready: Ready; client: TestClient }> {
  const server = await startServe([repo, '--port', '0', '--state-dir', stateDir], env);
  servers.push(server);
  const client = await TestClient.connect(server.ready.url, { token: server.ready.token! });
  await client.initialize();
  return { child: server.child, ready: server.ready, client };
}

const big = (tag: string) => `${tag}\n`.repeat(20_000);

const ready = subscribeReady;

/**
 * Rounds killed at a random moment in the test of set and random points:
 * one here (the set points already reach every write and the kill mid-write
 * of both operations); a soak run sets more (`FAULT_RANDOM_ROUNDS=200`, as
 * `npm run soak` does).
 */
const RANDOM_ROUNDS = Number(process.env['FAULT_RANDOM_ROUNDS'] ?? 1);

/** Whether a file starts with "old" (its first bytes only: the waits poll twelve files of 300 kB); one being swapped is briefly absent and counts as not. */
function startsOld(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(3);
    return readSync(fd, head, 0, 3, 0) === 3 && head.toString('latin1') === 'old';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The workspace the killed operations start from: twelve large files, every one rewritten (old → new) by turn t1. */
interface Recorded {
  repo: string;
  stateDir: string;
  names: string[];
  session: string;
  sid: string;
  turnUri: string;
  /** The files as turn t1 left them. */
  preOperation: string[];
}

/**
 * Turn t1 is recorded once for the file, by a server stopped cleanly after;
 * the workspace and state directory are copied aside, and {@link fresh} puts
 * the copy back at the same paths (the state directory knows its workspace
 * by its path) for each test and round, as a fresh recording would leave them.
 */
const kept = new TempDirs();
let recorded: Recorded;
let copies: string;
beforeAll(async () => {
  const names = Array.from({ length: 12 }, (_, i) => `d${i % 3}/f${i}.txt`);
  const repo = makeRepo(kept.make(), Object.fromEntries(names.map((n) => [n, big(`old ${n}`)])));
  copies = kept.make('kept-');
  // Recorded in this process (what is stored is the same as serve's): the kills below are of separate servers.
  const recorder = await startTestService();
  const stateDir = recorder.stateDir;
  const session = (await recorder.service.openWorkspace([repo])).uri;
  const client = await recorder.client();
  const sid = session.slice('ahp-session:/'.length);
  await client.request('harness/turnStarted', { channel: session, turnId: 't1' }, { timeoutMs: 30_000 });
  writeFiles(repo, Object.fromEntries(names.map((n) => [n, big(`new ${n}`)])));
  await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 30_000 });
  const turnUri = expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 't1' });
  await ready(client, turnUri);
  await client.close();
  await recorder.service.stop();
  for (const [dir, copy] of [
    [repo, 'repo'],
    [stateDir, 'state'],
  ] as const)
    execFileSync('cp', ['-a', dir, join(copies, copy)]);
  // Put back by fresh(); removed after the file with the rest.
  kept.add(stateDir);
  recorded = { repo, stateDir, names, session, sid, turnUri, preOperation: names.map((n) => readFileSync(join(repo, n), 'utf8')) };
}, 120_000);
afterAll(() => kept.cleanup());

/** The recorded workspace and state directory put back from their copies. */
function fresh(): Recorded {
  for (const [dir, copy] of [
    [recorded.repo, 'repo'],
    [recorded.stateDir, 'state'],
  ] as const) {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    execFileSync('cp', ['-a', join(copies, copy), dir]);
  }
  return recorded;
}

describe('fault tolerance', () => {
  it(
    'after SIGKILL at set and random points and a restart: no stray temporary file, every file whole, undo exact',
    async () => {
      /**
       * Kill once this many files are written (a set point, checked to land mid-write: after the first write, in
       * the middle, before the last), or at a random moment.
       */
      const killPoints: (number | 'random')[] = [1, 6, 11, ...Array.from({ length: RANDOM_ROUNDS }, () => 'random' as const)];
      for (let round = 0; round < killPoints.length; round++) {
        const killAt = killPoints[round]!;
        const { repo, stateDir, names, sid, turnUri, preOperation } = fresh();
        // At a set point the operation holds once that many files are written, so the kill lands exactly there however
        // loaded the machine; a random moment gets a short pause after each write.
        const first = await serve(
          repo,
          stateDir,
          killAt === 'random' ? { CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS: '25' } : { CHANGESET_SERVER_TEST_HOLD_AFTER_WRITES: String(killAt) },
        );
        await ready(first.client, turnUri);
        // The set points alternate the two operations, starting with a restore; a random moment picks one.
        const operation = (killAt === 'random' ? Math.random() < 0.5 : round % 2 === 1) ? 'revert' : 'restore-checkpoint';
        const what = `round ${round}: ${operation} killed at ${killAt}`;
        void first.client.request('invokeChangesetOperation', { channel: turnUri, operationId: operation }, { timeoutMs: 60_000 }).catch(() => undefined);
        // Files the operation has rewritten (back to "old"); one being swapped is briefly absent and counts as not yet.
        const written = () => names.filter((n) => startsOld(join(repo, n))).length;
        if (killAt === 'random') await new Promise((r) => setTimeout(r, Math.random() * 350));
        else {
          const deadline = Date.now() + 20_000;
          while (written() < killAt) {
            if (Date.now() > deadline) throw new Error(`the ${operation} never wrote ${killAt} files`);
            await new Promise((r) => setTimeout(r, 2));
          }
        }
        first.child.kill('SIGKILL');
        await new Promise((r) => first.child.once('exit', r));
        if (killAt !== 'random') {
          // The kill landed mid-write, exactly at the set point: that many files written, not all.
          const atKill = written();
          expect(atKill, what).toBe(killAt);
          expect(atKill, what).toBeLessThan(names.length);
        }

        // The restart, as serve opens the folder: in this process (nothing kills it), so a round starts one process, not two.
        const second = await serveInProcess(repo, stateDir);
        restarted.push(second);
        expect(second.sessionUri, what).toBe(recorded.session);
        // The restart removed what the killed operation left in the tree.
        expect(spawnSync('find', [repo, '-name', '.changeset-*'], { encoding: 'utf8' }).stdout, what).toBe('');
        const now = names.map((n) => readFileSync(join(repo, n), 'utf8'));
        now.forEach((text, i) => {
          expect([big(`old ${names[i]}`), big(`new ${names[i]}`)], what).toContain(text);
        });
        const sessionCs = changesetUriTemplate(sid, 'session');
        const state = await ready(second.client, sessionCs);
        const undoable = state.operations!.find((o) => o.id === 'undo')!.status !== 'disabled';
        // Killed mid-write, the operation had taken its safety checkpoint: undo is offered and says what it undid.
        if (killAt !== 'random') expect(undoable, what).toBe(true);
        if (undoable) {
          const undo = await second.client.request<{ message: string }>(
            'invokeChangesetOperation',
            { channel: sessionCs, operationId: 'undo' },
            { timeoutMs: 30_000 },
          );
          if (killAt !== 'random') {
            expect(undo.message, what).toMatch(
              operation === 'revert' ? /^Undid the revert [^:]*: put back \d+ files?/ : /^Undid the restore to the start of turn \d+: put back \d+ files?/,
            );
          }
        }
        // Killed before its safety checkpoint, the operation wrote nothing; after it, undo puts back every byte.
        expect(
          names.map((n) => readFileSync(join(repo, n), 'utf8')),
          what,
        ).toEqual(preOperation);
        await restarted.pop()!.stop();
        await servers.pop()!.stop('SIGKILL');
      }
    },
    60_000 + 30_000 * (3 + RANDOM_ROUNDS),
  );

  it('a conflict writes nothing, in a plain directory too', async () => {
    const dir = temp.make();
    writeFiles(dir, { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    // Nothing is killed here: the server runs in this process.
    const svc = await startTestService();
    services.push(svc);
    const session = (await svc.service.openWorkspace([dir])).uri;
    const client = await svc.client();
    const sid = session.slice('ahp-session:/'.length);
    await client.request('harness/turnStarted', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    writeFiles(dir, { 'a.txt': 'A\n', 'b.txt': 'B\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    writeFiles(dir, { 'b.txt': 'edited by hand\n' });
    const turnUri = expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 't1' });
    await ready(client, turnUri);
    const error = await client.requestError('invokeChangesetOperation', { channel: turnUri, operationId: 'revert' }, { timeoutMs: 20_000 });
    expect(error.message).toContain('b.txt');
    expect([readFileSync(join(dir, 'a.txt'), 'utf8'), readFileSync(join(dir, 'b.txt'), 'utf8')]).toEqual(['A\n', 'edited by hand\n']);
    const ok = await client.request<{ message: string }>(
      'invokeChangesetOperation',
      { channel: turnUri, operationId: 'revert', target: { kind: 'resource', resource: (await ready(client, turnUri)).files[0]!.id } },
      { timeoutMs: 20_000 },
    );
    expect(ok.message).toBe('Reverted 1 file');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('a\n');
  });
});
