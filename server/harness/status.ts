import type { ChangeTrackingStats } from '../snapshot/change-tracking.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { RetentionRun } from '../session/workspace-root.js';
import type { TurnEndState, TurnRecord } from '../session/turn-record.js';

/** One turn as `harness/status` reports it. */
export interface TurnStatus {
  /** The turn id. */
  turnId: string;
  /** 1-based position in the session. */
  index: number;
  /** The prompt or description, when one was given. */
  message?: string;
  /** ISO 8601 start time. */
  startedAt: string;
  /** How it ended; absent while it is active. */
  state?: TurnEndState;
  /** Milliseconds from start to end, once ended. */
  durationMs?: number;
  /** Changed-file and line totals, once ended. */
  changes?: { files: number; added: number; deleted: number };
  /** What the timeline calls it: the prompt, or for automatic turns what it touched. */
  title?: string;
  /** Recorded without a harness. */
  automatic?: true;
}

/** One session as `harness/status` reports it. */
export interface SessionStatusInfo {
  /** The session URI. */
  channel: string;
  /** Its chat channel. */
  chat: string;
  /** Its title. */
  title: string;
  /** The agent recording into it, when a harness said so. */
  agent?: string;
  /** When it ended (ISO 8601); it records no more, and stays reviewable and revertable. */
  endedAt?: string;
  /** The user's own actions (reverts, restores, undos), oldest first (at most `limit`). */
  userActions?: { at: string; text: string; files: string[] }[];
  /** Working directories (real paths). */
  workingDirectories: string[];
  /** ISO 8601 creation time. */
  createdAt: string;
  /** The turn being recorded, if any. */
  activeTurn?: TurnStatus;
  /** Number of turns recorded so far, the active one included. */
  turnCount: number;
  /** The most recent turns, oldest first (at most `limit`). */
  turns: TurnStatus[];
  /** Each working directory's shadow store: bytes on disk, the budget retention keeps it under, and what retention last did. */
  stores: StoreStatus[];
  /** Each working directory's change-driven snapshots (absent when watching is off). */
  snapshots?: SnapshotTrackingStatus[];
}

/** What the snapshots of one working directory trusted the file watcher for, and what verification found it missed. */
export interface SnapshotTrackingStatus extends ChangeTrackingStats {
  dir: string;
}

/** Result of `harness/status`. */
export interface StatusResult {
  /** Live sessions in creation order (only the one asked for, when `channel` was given). */
  sessions: SessionStatusInfo[];
}

/** Default number of recent turns listed per session. */
export const DEFAULT_STATUS_TURNS = 10;

export function turnStatusOf(turn: TurnRecord): TurnStatus {
  const out: TurnStatus = { turnId: turn.id, index: turn.index, startedAt: turn.startedAt };
  if (turn.message !== undefined) out.message = turn.message;
  if (turn.state !== undefined) out.state = turn.state;
  if (turn.durationMs !== undefined) out.durationMs = turn.durationMs;
  if (turn.summary) out.changes = { files: turn.summary.total, added: turn.summary.added, deleted: turn.summary.deleted };
  if (turn.automatic) out.automatic = true;
  return out;
}

export async function sessionStatusOf(session: RecordingSession, limit: number): Promise<SessionStatusInfo> {
  const active = session.activeTurnId !== undefined ? session.turn(session.activeTurnId) : undefined;
  const out: SessionStatusInfo = {
    channel: session.uri,
    chat: session.chatUri,
    title: session.sessionState.title,
    workingDirectories: session.workingDirectories,
    createdAt: session.createdAt,
    turnCount: session.turns.length,
    turns: session.turns.slice(Math.max(0, session.turns.length - limit)).map(turnStatusOf),
    stores: await Promise.all(session.files.list().map(async (r) => storeStatusOf(r.dir, await r.storeSize(), r.store.budgetBytes, r.lastRetentionRun))),
  };
  if (active) out.activeTurn = turnStatusOf(active);
  const tracking = session.files
    .list()
    .flatMap((r) => (r.changeTracking ? [{ dir: r.dir, ...r.changeTracking, lastMissed: [...r.changeTracking.lastMissed] }] : []));
  if (tracking.length > 0) out.snapshots = tracking;
  const meta = session.meta;
  for (const t of out.turns) {
    const title = meta.turns[t.turnId]?.title;
    if (title) t.title = title;
  }
  if (meta.agent) out.agent = meta.agent;
  if (session.endedAt) out.endedAt = session.endedAt;
  if (meta.userActions.length > 0) out.userActions = meta.userActions.slice(-Math.max(limit, 1)).map((a) => ({ at: a.at, text: a.text, files: a.files }));
  return out;
}

/** One store in `harness/status`. */
export interface StoreStatus {
  dir: string;
  bytes: number;
  budgetBytes: number;
  /** The last retention pass that had work to do in this process (over budget or sessions past their age), if any. */
  lastRetention?: RetentionStatus;
}

/** What one retention pass did. */
export interface RetentionStatus {
  /** ISO 8601 time it finished. */
  at: string;
  /** Store size before and after, in bytes. */
  bytesBefore: number;
  bytesAfter: number;
  /** Ended sessions dropped (the space they alone held was reclaimed in the same pass). */
  sessionsDropped: number;
  /** Ended sessions kept because nothing of theirs could be removed yet. */
  sessionsKept: number;
  /** Objects removed. */
  objectsRemoved: number;
  /** Packs before and after (the pass compacts them into one). */
  packsBefore: number;
  packsAfter: number;
  /** The store is still over its budget (live sessions and recent objects only). */
  overBudget: boolean;
}

function storeStatusOf(dir: string, bytes: number, budgetBytes: number, run: RetentionRun | undefined): StoreStatus {
  const out: StoreStatus = { dir, bytes, budgetBytes };
  if (run) {
    out.lastRetention = {
      at: run.at,
      bytesBefore: run.sizeBefore,
      bytesAfter: run.sizeAfter,
      sessionsDropped: run.droppedSessions.length,
      sessionsKept: run.sessionsKept,
      objectsRemoved: run.objectsRemoved,
      packsBefore: run.packsBefore,
      packsAfter: run.packsAfter,
      overBudget: run.overBudget,
    };
  }
  return out;
}
