import { lstat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RootTrees } from '../changes/collect-changes.js';
import type { FileChange } from '../changes/file-change.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { TurnRecord } from '../session/turn-record.js';

/**
 * One stretch of a session's history in which a file changed and no turn
 * was recording: before the first turn, between two turns, after the last
 * turn (for an ended session, before or after it ended).
 */
export interface UnrecordedGap {
  /** When, in words: "edited between turn 1 and turn 2". */
  when: string;
  /** True for the stretch after the last recorded state (the last turn, or an operation since): today's file holds it. */
  afterLastTurn: boolean;
}

/** Where the history an operation reaches back to begins: the session's start, or a turn's start. */
export type HistoryFrom = 'start' | TurnRecord;

/**
 * The edits no turn made, file by file (absolute paths): every stretch of
 * history from `from` to `current` (today's files) in which a file changed
 * outside every turn, leaving out what operations (revert, restore,
 * discard, undo) wrote. The one place operations learn which files hold
 * work no turn recorded; each operation says what becomes of it.
 */
export async function unrecordedEdits(session: RecordingSession, from: HistoryFrom, current: readonly RootTrees[]): Promise<Map<string, UnrecordedGap[]>> {
  const out = new Map<string, UnrecordedGap[]>();
  const turns = session.turns.filter((t) => t.after);
  const first = from === 'start' ? 0 : turns.indexOf(from);
  if (first < 0) return out;
  const written = await operationWrites(session);
  const add = (changes: readonly FileChange[], gap: UnrecordedGap) => {
    for (const change of changes) {
      // A file as an operation left it is not an edit no turn made.
      const now = change.after ? `${change.after.mode} ${change.after.oid}` : null;
      for (const path of [change.absPath, change.oldAbsPath]) {
        if (path === undefined || written.get(path)?.has(path === change.absPath ? now : null)) continue;
        const list = out.get(path) ?? [];
        if (!list.some((g) => g.when === gap.when)) list.push(gap);
        out.set(path, list);
      }
    }
  };
  if (from === 'start' && turns.length > 0)
    add(await gapChanges(session, session.startTrees, turns[0]!), { when: 'edited before turn 1', afterLastTurn: false });
  for (let i = Math.max(first, 0); i + 1 < turns.length; i++) {
    add(await gapChanges(session, turns[i]!.after!, turns[i + 1]!), { when: `edited between turn ${i + 1} and turn ${i + 2}`, afterLastTurn: false });
  }
  const last = session.baselineTrees;
  if (!last) return out;
  const after = await session.files.changesBetween(last, current);
  const lastLabel = turns.length === 0 ? 'since the session started' : `after turn ${turns.length}, the last turn`;
  if (session.endedAt === undefined) {
    add(after, { when: `edited ${lastLabel}`, afterLastTurn: true });
    return out;
  }
  // An ended session: a file last changed once it ended is later work, one changed before is the session's own.
  const endedAt = Date.parse(session.endedAt);
  const later: FileChange[] = [];
  const before: FileChange[] = [];
  for (const change of after) ((await changedAfter(change, endedAt)) ? later : before).push(change);
  add(before, { when: `edited ${lastLabel}, before the session ended`, afterLastTurn: true });
  add(later, { when: 'changed since the session ended', afterLastTurn: true });
  return out;
}

/** The files that changed between a turn's end (`after`) and the start of the next turn. Cached: both are fixed once ended. */
const gapCache = new WeakMap<TurnRecord, { after: readonly RootTrees[]; changes: Promise<FileChange[]> }>();
function gapChanges(session: RecordingSession, after: readonly RootTrees[], next: TurnRecord): Promise<FileChange[]> {
  const cached = gapCache.get(next);
  if (cached?.after === after) return cached.changes;
  const changes = session.files.changesBetween(after, next.before);
  gapCache.set(next, { after, changes });
  changes.catch(() => gapCache.delete(next));
  return changes;
}

/** Every version ("mode oid", or null for a deletion) operations wrote at each path, from their safety checkpoints. */
async function operationWrites(session: RecordingSession): Promise<Map<string, Set<string | null>>> {
  const written = new Map<string, Set<string | null>>();
  for (const record of await session.safety.list()) {
    for (const p of record.details.paths) {
      if (p.result === undefined) continue;
      const set = written.get(p.absPath) ?? new Set();
      set.add(p.result ? `${p.result.mode} ${p.result.oid}` : null);
      written.set(p.absPath, set);
    }
  }
  return written;
}

/**
 * File systems stamp times from a clock that may lag the one `endedAt` was
 * read from by a tick: a file saved right after the session ended can carry
 * a time a few milliseconds before it.
 */
const CLOCK_TICK_MS = 100;

/** Whether a file was last written at or after `at` (a deleted file: whether its folder was). */
async function changedAfter(change: FileChange, at: number): Promise<boolean> {
  const path = change.after ? change.absPath : dirname(change.absPath);
  const stat = await lstat(path).catch(() => undefined);
  return stat !== undefined && stat.mtimeMs >= at - CLOCK_TICK_MS;
}

/** A gap list as a reason a person reads: "edited between turn 1 and turn 2 and after turn 3, the last turn". */
export function gapText(gaps: readonly UnrecordedGap[]): string {
  return gaps.map((g) => g.when).join(' and ');
}
