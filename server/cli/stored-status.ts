/**
 * `status` with no server running: the sessions of a folder's store and
 * their last turns, read from the store itself (only reads: no lock,
 * nothing written, no server started), numbered as `--turn` takes them.
 */
import { sessionRefs } from '../store/checkpoint-format.js';
import { Checkpoints } from '../store/checkpoints.js';
import { readRef } from '../store/refs.js';
import { ShadowStore } from '../store/shadow-store.js';
import { workspaceLayout } from '../store/state-dir.js';
import { TreeReader } from '../store/tree.js';
import { readStoredSessions } from './stored-sessions.js';
import type { SessionListing } from './session-listing.js';

/** One turn of a stored session. */
export interface StoredTurn {
  /** Its number, as `--turn` takes it. */
  index: number;
  message?: string;
  /** How it ended; absent when it never ended (cut short). */
  state?: string;
  /** The commits its lines landed in, oldest first. */
  commits?: { oid: string; summary: string }[];
}

/** A stored session with its last turns (latest last). */
export interface StoredSessionStatus extends SessionListing {
  recentTurns: StoredTurn[];
}

/** The sessions of the store of `root` with their last `turns` turns each, newest session last. */
export async function readStoredStatus(stateDir: string, root: string, turns: number): Promise<StoredSessionStatus[]> {
  const listed = await readStoredSessions(stateDir, root);
  const { shadowDir } = workspaceLayout(stateDir, root);
  const objects = await ShadowStore.open({ shadowDir, workspaceObjectDirs: [] });
  try {
    const checkpoints = new Checkpoints(shadowDir, objects, new TreeReader(objects));
    const out: StoredSessionStatus[] = [];
    for (const session of listed) {
      const chain = await checkpoints.list(session.id);
      // Turns as the journal reads them back: a restore that removed turns cuts the list there.
      const all: { id: string; message?: string; state?: string }[] = [];
      for (const c of chain) {
        const cut = c.kind === 'safety' ? (c.details as { truncateAfter?: string | null } | undefined)?.truncateAfter : undefined;
        if (cut !== undefined) {
          const keep = cut === null ? 0 : all.findIndex((t) => t.id === cut) + 1;
          if (cut === null || keep > 0) all.splice(keep);
        } else if (c.kind === 'start' && c.turnId !== undefined) {
          all.push({ id: c.turnId, ...(c.turn?.message ? { message: c.turn.message } : {}) });
        } else if (c.kind === 'end' && c.turnId !== undefined) {
          const turn = all.find((t) => t.id === c.turnId);
          if (turn && c.turn?.state) turn.state = c.turn.state;
        }
      }
      const landed = await storedCommits(shadowDir, objects, session.id);
      const recentTurns = all.map((t, i) => ({
        index: i + 1,
        ...(t.message ? { message: t.message } : {}),
        ...(t.state ? { state: t.state } : {}),
        ...(landed.has(t.id) ? { commits: landed.get(t.id)! } : {}),
      }));
      out.push({ ...session, recentTurns: turns === 0 ? [] : recentTurns.slice(-turns) });
    }
    return out;
  } finally {
    await objects.close();
  }
}

/** The commits each turn's lines landed in (turn id → commits), as the session keeps them (`…/commits`). */
async function storedCommits(shadowDir: string, objects: ShadowStore, sessionId: string): Promise<Map<string, { oid: string; summary: string }[]>> {
  const out = new Map<string, { oid: string; summary: string }[]>();
  try {
    const oid = await readRef(shadowDir, `${sessionRefs(sessionId).prefix}commits`);
    if (oid === undefined) return out;
    const stored = JSON.parse(Buffer.from((await objects.readObject(oid)).content).toString('utf8')) as {
      commits?: { oid?: unknown; summary?: unknown; turns?: Record<string, unknown> }[];
    };
    for (const c of stored.commits ?? []) {
      if (typeof c.oid !== 'string' || typeof c.summary !== 'string' || typeof c.turns !== 'object' || c.turns === null) continue;
      for (const turnId of Object.keys(c.turns)) out.set(turnId, [...(out.get(turnId) ?? []), { oid: c.oid, summary: c.summary }]);
    }
  } catch {
    // Unreadable links are left out: status still shows the turns.
  }
  return out;
}

/** The stored record as `status` prints it. */
export function formatStoredStatus(sessions: readonly StoredSessionStatus[]): string {
  if (sessions.length === 0) return 'no sessions\n';
  const lines: string[] = [];
  for (const s of sessions) {
    lines.push(`${s.title}  (${s.state === 'ended' ? 'ended: kept for review' : 'not ended: resumed when a server starts'})`);
    lines.push(`  session id:  ${s.id}`);
    lines.push(`  directory:   ${s.directory}`);
    lines.push(`  turns:       ${s.turns}${s.recentTurns.length > 0 ? ' (latest last)' : ''}`);
    for (const t of s.recentTurns) lines.push(`    #${t.index} ${t.state ?? 'cut short'}${quote(t.message)}`);
    for (const t of s.recentTurns) for (const c of t.commits ?? []) lines.push(`    turn ${t.index} landed in ${c.oid.slice(0, 7)}${quote(c.summary)}`);
  }
  return `${lines.join('\n')}\n`;
}

function quote(message: string | undefined): string {
  if (!message) return '';
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return ` "${oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine}"`;
}
