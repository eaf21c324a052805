/**
 * A session recorded on "machine A" with its checkpoints mirrored to a real
 * git server, ready to be imported elsewhere: what the import tests start
 * from. The project sits in a folder named `ws1-…`, so that an import into
 * another folder shows whether the title follows the original.
 */
import { execFileSync } from 'node:child_process';
import { ROOT_CHANNEL, type ListSessionsResult, type SessionSummary } from '../../protocol/index.js';
import { mirrorRemote } from '../../server/mirror/mirror-remote.js';
import { MirrorService } from '../../server/mirror/mirror-service.js';
import { ChangesetService } from '../../server/service.js';
import { TestClient } from './client.js';
import { GitHttpServer } from './git-http-server.js';
import { git, makeRepo, type TempDirs } from './workspace.js';

/** A mirrored, ended session, and how to import it. */
export interface MirroredSession {
  /** The mirror's URL and the environment carrying its token (for `importMirror`). */
  url: string;
  env: NodeJS.ProcessEnv;
  /** The project on machine A, with what the session did committed on top of `start`. */
  repo: string;
  /** The commit the session started from. */
  start: string;
  /** The session's id. */
  sessionId: string;
  /** The session as machine A listed it before it ended. */
  original: SessionSummary;
  /** Stops the git server (machine A is already stopped). */
  stop(): Promise<void>;
}

const TOKEN = 'mirrored-session-token-51f3';

/**
 * Records a session over a new repository holding `files` (each turn's
 * edit run between `harness/turnStarted` and `harness/turnEnded`), ends it,
 * waits until the mirror has it, and commits what it did.
 */
export async function recordMirroredSession(
  temp: TempDirs,
  files: Record<string, string>,
  turns: { id: string; message: string; edit: (repo: string) => void }[],
): Promise<MirroredSession> {
  const env = { CHANGESET_SERVER_MIRROR_TOKEN: TOKEN };
  const remoteRoot = temp.make('remote-');
  execFileSync('git', ['init', '-q', '--bare', `${remoteRoot}/mirror.git`]);
  const remote = await GitHttpServer.start({ root: remoteRoot, token: TOKEN });
  const url = remote.url('mirror.git');
  const repo = makeRepo(temp.make('ws1-'), files);
  const start = git(repo, ['rev-parse', 'HEAD']);
  const stateDir = temp.make('state-a-');
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  const mirror = new MirrorService(service.sessions, {
    remote: mirrorRemote(url, env),
    stateDir,
    timing: { debounceMs: 20, retryBaseMs: 100, retryMaxMs: 400 },
    log: () => undefined,
  });
  let client: TestClient | undefined;
  try {
    const { url: wsUrl } = await service.start();
    const session = await service.openWorkspace([repo]);
    client = await TestClient.connect(wsUrl);
    await client.initialize();
    for (const turn of turns) {
      await client.request('harness/turnStarted', { channel: session.uri, turnId: turn.id, message: turn.message }, { timeoutMs: 60_000 });
      turn.edit(repo);
      await client.request('harness/turnEnded', { channel: session.uri, turnId: turn.id }, { timeoutMs: 120_000 });
    }
    const list = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
    const original = list.items.find((s) => s.resource === session.uri)!;
    await service.sessions.dispose(session.uri);
    const until = Date.now() + 60_000;
    for (;;) {
      const [w] = (await mirror.status()).workspaces;
      if (w && w.pendingRefs === 0 && !w.pushing && w.lastSuccessAt !== undefined) break;
      if (Date.now() > until) throw new Error(`not mirrored in time: ${JSON.stringify(w)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'what the session did']);
    return { url, env, repo, start, sessionId: session.id, original, stop: () => remote.stop() };
  } catch (error) {
    await remote.stop();
    throw error;
  } finally {
    await client?.close().catch(() => undefined);
    await service.stop();
    await mirror.stop(0);
  }
}

/** A clone of the project as it was when the session started, in a folder named `ws2-…`. */
export function cloneAtStart(temp: TempDirs, mirrored: MirroredSession): string {
  const checkout = temp.make('ws2-');
  execFileSync('git', ['clone', '-q', mirrored.repo, checkout]);
  git(checkout, ['reset', '-q', '--hard', mirrored.start]);
  return checkout;
}

/** Additions, deletions and files of `git diff --numstat` between two commits, as a session summary counts them. */
export function numstat(repo: string, from: string, to: string): { additions: number; deletions: number; files: number } {
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
