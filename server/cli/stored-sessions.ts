import { Checkpoints } from '../store/checkpoints.js';
import { ShadowStore } from '../store/shadow-store.js';
import { workspaceLayout } from '../store/state-dir.js';
import { TreeReader } from '../store/tree.js';
import { folderName, localTime, type SessionListing } from './session-listing.js';

/** The reason of the checkpoint holding a session's start (as the session journal writes it). */
const SESSION_START = 'session start';

/** What the session-start checkpoint records that a listing needs. */
interface StartDetails {
  title?: string;
  createdAt?: string;
  workingDirectories?: string[];
  agent?: string;
}

/** The names people know agents by (as session titles give them). */
const AGENT_NAMES: Record<string, string> = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor', 'gemini-cli': 'Gemini CLI' };

/**
 * The sessions the store of `root` holds, read from the store itself with no
 * server running: only reads (no lock, nothing written), so `sessions` after
 * `stop` starts nothing. Newest last.
 */
export async function readStoredSessions(stateDir: string, root: string): Promise<SessionListing[]> {
  const { shadowDir } = workspaceLayout(stateDir, root);
  const objects = await ShadowStore.open({ shadowDir, workspaceObjectDirs: [] });
  try {
    const checkpoints = new Checkpoints(shadowDir, objects, new TreeReader(objects));
    const out: SessionListing[] = [];
    for (const stored of await checkpoints.listSessions()) {
      const chain = await checkpoints.list(stored.sessionId);
      const start = chain.find((c) => c.kind === 'safety' && c.reason === SESSION_START);
      if (!start) continue;
      const details = (start.details ?? {}) as StartDetails;
      // Turns as the journal reads them back: a restore that removed turns cuts the list there.
      const turns: { id: string; message?: string }[] = [];
      for (const c of chain) {
        const cut = c.kind === 'safety' ? (c.details as { truncateAfter?: string | null } | undefined)?.truncateAfter : undefined;
        if (cut !== undefined) {
          const keep = cut === null ? 0 : turns.findIndex((t) => t.id === cut) + 1;
          if (cut === null || keep > 0) turns.splice(keep);
        } else if (c.kind === 'start' && c.turnId !== undefined) {
          turns.push({ id: c.turnId, ...(c.turn?.message ? { message: c.turn.message } : {}) });
        }
      }
      const startedAt = details.createdAt ?? start.createdAt;
      const directory = details.workingDirectories?.[0] ?? root;
      out.push({
        id: stored.sessionId,
        title: titleOf(details, turns[0]?.message, directory, startedAt),
        state: stored.live ? 'recording' : 'ended',
        turns: turns.length,
        startedAt,
        directory,
      });
    }
    return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  } finally {
    await objects.close();
  }
}

/** The title a server would give the session (the one recorded at its start, or the agent's with the first prompt). */
function titleOf(details: StartDetails, firstPrompt: string | undefined, dir: string, createdAt: string): string {
  if (details.agent) {
    const prompt = firstPrompt?.replace(/\s+/g, ' ').trim();
    const shown = prompt ? (prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt) : folderName(dir);
    return `${AGENT_NAMES[details.agent] ?? details.agent} — ${shown}`;
  }
  return details.title ?? `${folderName(dir)} — ${localTime(createdAt)}`;
}
