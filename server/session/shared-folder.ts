/**
 * Two agents in one folder: sessions of one server recording overlapping
 * directories at the same time (two Claude Code windows, or a subagent).
 * Each session's turn is the difference between its start and end
 * snapshots, so it shows every change made in the folder while it ran, the
 * other session's too. This module finds, for a turn, the turns of other
 * sessions that ran at the same time and changed the same files, and for
 * each such file which session's tool calls named it (`beforeEdit` paths on
 * the step records) while both ran: where exactly one did, the hooks say
 * who wrote it; otherwise the record cannot tell.
 *
 * Everything here is read from the sessions' records, so it is the same
 * after a restart (the server opens every stored session of its folders).
 * Automatic turns are left out: they are a person's edits noticed by the
 * file watcher, not an agent's, and record whatever changed.
 */
import type { AlsoChangedBy } from '../../protocol/extensions/timeline.js';
import { type Disposable, DisposableStore } from '../events.js';
import { isInsideDir } from '../paths.js';
import { SerialQueue } from '../serial-queue.js';
import type { RecordingSession } from './recording-session.js';
import type { SessionManager } from './session-manager.js';
import type { TurnRecord } from './turn-record.js';

/** Display paths an {@link AlsoChangedBy} lists at most. */
const LISTED_PATHS = 20;

/** A turn of a session. */
export interface SessionTurn {
  session: RecordingSession;
  turn: TurnRecord;
}

/** A file both turns of a {@link TurnOverlap} changed, and whose tool calls named it while both ran. */
export interface SharedFile {
  /** Absolute path. */
  absPath: string;
  /** A tool call of this turn named the file while both turns ran. */
  namedHere: boolean;
  /** A tool call of the other turn named the file while both turns ran. */
  namedThere: boolean;
}

/** Another session's turn that ran while this one did and changed some of the same files. */
export interface TurnOverlap {
  other: SessionTurn;
  /** When both turns ran, ms since the epoch. */
  from: number;
  to: number;
  /** The files both turns changed, sorted by path. */
  files: SharedFile[];
}

/**
 * Who changed one file of a turn, when turns of other sessions that ran at
 * the same time changed it too: `own` when the hooks say this session alone
 * wrote it (only its tool calls named the file), `other` when they say
 * another session did, `mixed` when they single out none (no tool call
 * named it, or several sessions' did): this turn first, then the others.
 */
export type FileWriters = { kind: 'own' } | { kind: 'other'; by: SessionTurn } | { kind: 'mixed'; candidates: SessionTurn[] };

/** The span a turn's changes were made in, ms since the epoch; undefined while it runs or for automatic turns. */
function spanOf(turn: TurnRecord): { from: number; to: number } | undefined {
  if (turn.automatic || !turn.after || turn.durationMs === undefined) return undefined;
  const from = Date.parse(turn.startedAt);
  return Number.isNaN(from) ? undefined : { from, to: from + turn.durationMs };
}

/** True when a directory of one list is, contains or lies in a directory of the other. */
export function foldersOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => isInsideDir(x, y) || isInsideDir(y, x)));
}

/**
 * The paths the turn's tool calls named whose writes may fall in
 * [from, to]: a step's tool writes after it is announced and before the
 * next step (or the turn's end).
 */
function namedDuring(turn: TurnRecord, from: number, to: number, end: number): Set<string> {
  const named = new Set<string>();
  const steps = turn.steps ?? [];
  for (let i = 0; i < steps.length; i++) {
    const stepFrom = Date.parse(steps[i]!.at);
    const next = steps[i + 1];
    const stepTo = next ? Date.parse(next.at) : end;
    if (stepFrom <= to && stepTo >= from) for (const p of steps[i]!.paths) named.add(p);
  }
  return named;
}

/** Absolute paths the turn changed (both sides of a rename). */
async function changedPaths(session: RecordingSession, turn: TurnRecord): Promise<Set<string>> {
  const out = new Set<string>();
  for (const change of await session.turnChanges(turn)) {
    out.add(change.absPath);
    if (change.oldAbsPath) out.add(change.oldAbsPath);
  }
  return out;
}

/**
 * The turns of the other sessions in `sessions` recording a directory that
 * overlaps this session's, that ran while `turn` did and changed some of
 * the files it changed. Empty for a turn still running and for automatic
 * turns.
 */
export async function overlapsOf(sessions: Iterable<RecordingSession>, session: RecordingSession, turn: TurnRecord): Promise<TurnOverlap[]> {
  const span = spanOf(turn);
  if (!span) return [];
  let mine: Set<string> | undefined;
  const out: TurnOverlap[] = [];
  for (const other of sessions) {
    if (other === session || other.isDisposed || !foldersOverlap(session.workingDirectories, other.workingDirectories)) continue;
    for (const otherTurn of other.turns) {
      const otherSpan = spanOf(otherTurn);
      if (!otherSpan || otherSpan.from > span.to || otherSpan.to < span.from) continue;
      mine ??= await changedPaths(session, turn);
      if (mine.size === 0) return [];
      const theirs = await changedPaths(other, otherTurn);
      const both = [...mine].filter((p) => theirs.has(p)).sort();
      if (both.length === 0) continue;
      const from = Math.max(span.from, otherSpan.from);
      const to = Math.min(span.to, otherSpan.to);
      const here = namedDuring(turn, from, to, span.to);
      const there = namedDuring(otherTurn, from, to, otherSpan.to);
      out.push({
        other: { session: other, turn: otherTurn },
        from,
        to,
        files: both.map((absPath) => ({ absPath, namedHere: here.has(absPath), namedThere: there.has(absPath) })),
      });
    }
  }
  return out;
}

/**
 * Who changed `absPath` in `turn`, given the turns of other sessions that
 * ran at the same time (see {@link FileWriters}); undefined when none of
 * them changed the file, and the turn's own record decides.
 */
export function writersOf(overlaps: readonly TurnOverlap[], self: SessionTurn, absPath: string): FileWriters | undefined {
  const others: SessionTurn[] = [];
  const named: SessionTurn[] = [];
  let namedHere = false;
  for (const o of overlaps) {
    const file = o.files.find((f) => f.absPath === absPath);
    if (!file) continue;
    if (!others.includes(o.other)) others.push(o.other);
    if (file.namedHere) namedHere = true;
    if (file.namedThere && !named.some((n) => n.session === o.other.session)) named.push(o.other);
  }
  if (others.length === 0) return undefined;
  if (namedHere && named.length === 0) return { kind: 'own' };
  if (!namedHere && named.length === 1) return { kind: 'other', by: named[0]! };
  return { kind: 'mixed', candidates: [self, ...others] };
}

/**
 * What a turn's row says of the other sessions' turns that ran with it:
 * each one that changed files of this turn the hooks do not put down to
 * this session alone, with those files. Empty when there is none.
 */
export function alsoChangedByOf(overlaps: readonly TurnOverlap[], self: SessionTurn): AlsoChangedBy[] {
  const out: AlsoChangedBy[] = [];
  for (const o of overlaps) {
    const paths = o.files
      .filter((f) => {
        const writers = writersOf(overlaps, self, f.absPath);
        return writers?.kind === 'mixed' || (writers?.kind === 'other' && writers.by.turn === o.other.turn);
      })
      .map((f) => f.absPath);
    if (paths.length === 0) continue;
    out.push({
      session: o.other.session.uri,
      sessionTitle: o.other.session.sessionState.title,
      turn: o.other.turn.index,
      turnId: o.other.turn.id,
      paths: paths.slice(0, LISTED_PATHS).map((p) => self.session.files.displayOf(p)),
      files: paths.length,
    });
  }
  return out;
}

/**
 * Keeps every turn's "also changed by" in its session's timeline: after a
 * turn ends, for it and for the turns of other sessions it ran with; when a
 * session is opened (after a restart the server opens every stored session
 * of its folders, so this is recomputed from both records rather than
 * stored); and when a session leaves, for the turns that named it.
 */
export function trackSharedFolders(manager: SessionManager): Disposable {
  const queue = new SerialQueue();
  const store = new DisposableStore();
  let stopped = false;

  const refresh = async (targets: readonly SessionTurn[]): Promise<void> => {
    const sessions = manager.list();
    const seen = new Set<TurnRecord>();
    const pending = [...targets];
    while (pending.length > 0) {
      const target = pending.shift()!;
      if (stopped || seen.has(target.turn) || target.session.isDisposed) continue;
      seen.add(target.turn);
      const overlaps = await overlapsOf(sessions, target.session, target.turn);
      target.session.timeline.alsoChangedBy(target.turn.id, alsoChangedByOf(overlaps, target));
      for (const o of overlaps) if (!seen.has(o.other.turn)) pending.push(o.other);
    }
  };
  const schedule = (targets: readonly SessionTurn[], cascade: boolean): void => {
    void queue
      .run(async () => {
        // A turn another session no longer has (forgotten, or its turns removed) leaves the rows that named it.
        const all = cascade ? [...targets, ...namingTurns(manager, targets)] : targets;
        await refresh(all);
      })
      .catch(() => undefined);
  };
  const follow = (session: RecordingSession): void => {
    const subs = new DisposableStore();
    subs.add(session.onTurnEnded((turn) => schedule([{ session, turn }], false)));
    // Restoring and removing later turns is the user's action: turns that named the removed ones say so no more.
    subs.add(
      session.onUserAction(() =>
        schedule(
          session.turns.map((turn) => ({ session, turn })),
          true,
        ),
      ),
    );
    subs.add(
      session.onDisposed(() => {
        subs.dispose();
        if (!stopped) schedule(namingSession(manager, session), false);
      }),
    );
    store.add(subs);
    if (session.turns.length > 0)
      schedule(
        session.turns.map((turn) => ({ session, turn })),
        false,
      );
  };
  for (const session of manager.list()) follow(session);
  store.add(manager.onSessionAdded(follow));
  return {
    dispose: () => {
      stopped = true;
      store.dispose();
    },
  };
}

/** The turns of other sessions whose rows name `session`. */
function namingSession(manager: SessionManager, session: RecordingSession): SessionTurn[] {
  const out: SessionTurn[] = [];
  for (const other of manager.list()) {
    if (other === session) continue;
    for (const turn of other.turns) {
      if (other.meta.turns[turn.id]?.alsoChangedBy?.some((a) => a.session === session.uri)) out.push({ session: other, turn });
    }
  }
  return out;
}

/** The turns of other sessions whose rows name a turn of these sessions. */
function namingTurns(manager: SessionManager, targets: readonly SessionTurn[]): SessionTurn[] {
  return [...new Set(targets.map((t) => t.session))].flatMap((s) => namingSession(manager, s));
}
