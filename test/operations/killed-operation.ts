/**
 * A server killed in the middle of an operation's writes, and restarted:
 * shared by the killed-undo tests, which `npm run soak` runs with more
 * random rounds (`KILLED_UNDO_ROUNDS`), and the fault tests.
 *
 * The workspace holds `a.txt` and a number of files in four directories;
 * turn t1 changes all of them. Then two operations are recorded: a revert
 * of `a.txt` alone (the older), and a revert of the whole turn (the newer,
 * which writes every other file). Each file is at `v1` (before the turn)
 * or `v2` (after it).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState } from '../../protocol/index.js';
import { metaOf } from '../../server/changesets/changeset-files.js';
import { startServe, type ServeProcess } from '../cli/serve-process.js';
import { subscribeReady } from '../helpers/changesets.js';
import { ChangesetService } from '../../server/service.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';

export const PAUSE_ENV = 'CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS';
/** The operation holds once this many files are written, until the process is killed. */
export const HOLD_ENV = 'CHANGESET_SERVER_TEST_HOLD_AFTER_WRITES';

export type Version = 'v1' | 'v2' | 'missing' | 'other';

export interface Workspace {
  repo: string;
  stateDir: string;
  /** The files the turn revert writes (not `a.txt`). */
  names: string[];
  sessionUri: string;
  sessionChangeset: string;
  turnChangeset: string;
}

export interface Running {
  server: ServeProcess;
  client: TestClient;
}

const content = (name: string, v: 'v1' | 'v2') => `${v} of ${name}\n`.repeat(200);

export async function serve(repo: string, stateDir: string, env: Record<string, string> = {}): Promise<Running> {
  const server = await startServe([repo, '--port', '0', '--state-dir', stateDir], env);
  const client = await TestClient.connect(server.ready.url, { token: server.ready.token! });
  await client.initialize();
  return { server, client };
}

export async function kill(running: Running): Promise<void> {
  await running.server.stop('SIGKILL');
  await running.client.close().catch(() => undefined);
}

/** A server in this process over the state directory, as `serve` opens it (the session over `repo`, new or resumed). */
export interface InProcess {
  client: TestClient;
  sessionUri: string;
  /** Stops it cleanly. */
  stop(): Promise<void>;
}

/** For the steps that kill nothing (recording, an operation before the one killed): no process to start. */
export async function serveInProcess(repo: string, stateDir: string): Promise<InProcess> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const { url } = await service.start();
  try {
    const session = await service.openWorkspace([repo]);
    const client = await TestClient.connect(url);
    await client.initialize();
    return {
      client,
      sessionUri: session.uri,
      stop: async () => {
        await client.close().catch(() => undefined);
        await service.stop();
      },
    };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

/** Records turn t1 over `count` files plus `a.txt`, then reverts `a.txt` and then the whole turn; the server is stopped cleanly after. */
export async function prepare(repoDir: string, stateDir: string, count: number): Promise<Workspace> {
  const names = Array.from({ length: count }, (_, i) => `d${i % 4}/f${String(i).padStart(2, '0')}.txt`);
  const repo = makeRepo(repoDir, Object.fromEntries([...names, 'a.txt'].map((n) => [n, content(n, 'v1')])));
  const running = await serveInProcess(repo, stateDir);
  try {
    const sessionUri = running.sessionUri;
    const sid = sessionUri.slice('ahp-session:/'.length);
    const { client } = running;
    await client.request('harness/turnStarted', { channel: sessionUri, turnId: 't1' }, { timeoutMs: 30_000 });
    writeFiles(repo, Object.fromEntries([...names, 'a.txt'].map((n) => [n, content(n, 'v2')])));
    await client.request('harness/turnEnded', { channel: sessionUri, turnId: 't1' }, { timeoutMs: 30_000 });
    const turnChangeset = expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 't1' });
    const turn: ChangesetState = await subscribeReady(client, turnChangeset);
    const a = turn.files.find((f) => metaOf(f).path === 'a.txt')!;
    await client.request(
      'invokeChangesetOperation',
      { channel: turnChangeset, operationId: 'revert', target: { kind: 'resource', resource: a.id } },
      { timeoutMs: 30_000 },
    );
    await client.request('invokeChangesetOperation', { channel: turnChangeset, operationId: 'revert' }, { timeoutMs: 60_000 });
    return { repo, stateDir, names, sessionUri, sessionChangeset: changesetUriTemplate(sid, 'session'), turnChangeset };
  } finally {
    await running.stop();
  }
}

/**
 * {@link prepare} once, with a copy of the workspace and the state directory
 * kept in `keptDir` as the clean stop left them. The returned function puts
 * that copy back at the same paths (the state directory knows its workspace
 * by its path) and returns the workspace, as a fresh `prepare` would; each
 * test or round calls it instead of recording and reverting the turn again.
 */
export async function prepareOnce(repoDir: string, stateDir: string, keptDir: string, count: number): Promise<() => Workspace> {
  const ws = await prepare(repoDir, stateDir, count);
  const kept = (dir: string) => join(keptDir, dir === ws.repo ? 'repo' : 'state');
  for (const dir of [ws.repo, ws.stateDir]) execFileSync('cp', ['-a', dir, kept(dir)]);
  return () => {
    for (const dir of [ws.repo, ws.stateDir]) {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
      execFileSync('cp', ['-a', kept(dir), dir]);
    }
    return { ...ws, names: [...ws.names] };
  };
}

export function versionOf(repo: string, name: string): Version {
  let text: string;
  try {
    text = readFileSync(join(repo, name), 'utf8');
  } catch {
    return 'missing';
  }
  return text === content(name, 'v1') ? 'v1' : text === content(name, 'v2') ? 'v2' : 'other';
}

export function versions(ws: Workspace): Version[] {
  return ws.names.map((n) => versionOf(ws.repo, n));
}

export function count(list: readonly Version[], v: Version): number {
  return list.filter((x) => x === v).length;
}

/** Our temporary names anywhere in the workspace (a restart must leave none). */
export function strayTemporaryFiles(repo: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      if (e.isDirectory()) visit(join(dir, e.name));
      else if (e.name.startsWith('.changeset-')) out.push(join(dir, e.name));
    }
  };
  visit(repo);
  return out;
}

/**
 * Starts `operationId` on `channel` in a separate server and kills it once
 * `after` files no longer hold `from`. With `hold`, the operation holds
 * there (it writes no further file), so the kill lands exactly after that
 * write; else the server pauses `pauseMs` between writes and the kill comes
 * `extraMs` later (0 kills in the pause, more can land inside the next
 * write). Returns how many files had changed when the process was gone.
 */
export async function killPartWay(
  ws: Workspace,
  opts: { channel: string; operationId: string; from: Version; after: number } & ({ hold: true } | { extraMs: number; pauseMs: number }),
): Promise<number> {
  const running = await serve(ws.repo, ws.stateDir, 'hold' in opts ? { [HOLD_ENV]: String(opts.after) } : { [PAUSE_ENV]: String(opts.pauseMs) });
  void running.client
    .request('invokeChangesetOperation', { channel: opts.channel, operationId: opts.operationId }, { timeoutMs: 120_000 })
    .catch(() => undefined);
  const deadline = Date.now() + 60_000;
  // Each look reads every file: a sixth of the pause between writes apart (5 ms at least) still lands the kill in it.
  const pollMs = 'hold' in opts ? 5 : Math.max(5, Math.floor(opts.pauseMs / 6));
  while (ws.names.length - count(versions(ws), opts.from) < opts.after) {
    if (Date.now() > deadline) throw new Error(`${opts.operationId} never wrote ${opts.after} files`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
  if (!('hold' in opts) && opts.extraMs > 0) await new Promise((r) => setTimeout(r, opts.extraMs));
  await kill(running);
  return ws.names.length - count(versions(ws), opts.from);
}
