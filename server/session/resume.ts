import { realpath } from 'node:fs/promises';
import { SESSION_START_REASON, type SessionStartDetails } from './session-journal.js';
import { WorkspaceRoot } from './workspace-root.js';

/**
 * The most recent session over exactly these working directories that was
 * not ended (a server stopped or crashed while recording it), so a restart
 * picks it up with its turns. Undefined when there is none.
 */
export async function findResumableSession(stateDir: string, workingDirectories: readonly string[]): Promise<string | undefined> {
  const dirs = await Promise.all(workingDirectories.map((d) => realpath(d)));
  const root = await WorkspaceRoot.acquire({ stateDir, dir: dirs[0]! });
  const store = root.store;
  try {
    const live = (await store.listSessions()).filter((s) => s.live);
    live.sort((a, b) => (b.lastCheckpointAt ?? '').localeCompare(a.lastCheckpointAt ?? ''));
    for (const candidate of live) {
      const chain = await store.listSessionCheckpoints(candidate.sessionId);
      const start = chain.find((c) => c.kind === 'safety' && c.reason === SESSION_START_REASON);
      const details = start?.details as SessionStartDetails | undefined;
      if (details && sameList(details.workingDirectories, dirs)) return candidate.sessionId;
    }
    return undefined;
  } finally {
    await root.release();
  }
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);
}
