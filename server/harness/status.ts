import type { SessionStatusInfo, StoreStatus, TurnStatus } from '../../protocol/index.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { RetentionRun } from '../session/workspace-root.js';
import type { TurnRecord } from '../session/turn-record.js';

// The wire types of `harness/status`, for the tests that read them.
export type { SessionStatusInfo, StatusResult, TurnStatus } from '../../protocol/index.js';

/** Default number of recent turns listed per session. */
export const DEFAULT_STATUS_TURNS = 10;

function turnStatusOf(turn: TurnRecord): TurnStatus {
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
  const preparing = session.preparing;
  if (preparing) out.preparing = { filesRead: preparing.done, ...(preparing.total !== undefined ? { filesExpected: preparing.total } : {}) };
  const tracking = session.files
    .list()
    .flatMap((r) => (r.changeTracking ? [{ dir: r.dir, ...r.changeTracking, lastMissed: [...r.changeTracking.lastMissed] }] : []));
  if (tracking.length > 0) out.snapshots = tracking;
  const meta = session.meta;
  for (const t of out.turns) {
    const title = meta.turns[t.turnId]?.title;
    if (title) t.title = title;
    const steps = meta.turns[t.turnId]?.steps;
    if (steps) t.steps = steps;
    const alsoChangedBy = meta.turns[t.turnId]?.alsoChangedBy;
    if (alsoChangedBy?.length) t.alsoChangedBy = alsoChangedBy;
    const commits = meta.turns[t.turnId]?.commits;
    if (commits?.length) t.commits = commits;
  }
  if (meta.agent) out.agent = meta.agent;
  if (session.endedAt) out.endedAt = session.endedAt;
  if (meta.userActions.length > 0) out.userActions = meta.userActions.slice(-Math.max(limit, 1)).map((a) => ({ at: a.at, text: a.text, files: a.files }));
  return out;
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
