/**
 * Two agents in one folder: sessions of one server recording overlapping
 * directories at the same time (two Claude Code windows, or a subagent).
 * Each session's turn is the difference between its start and end
 * snapshots, so it shows every change made in the folder while it ran, the
 * other session's too, and a session's record shows the other's changes
 * between its own turns as edits no turn made.
 *
 * This module reads, for a change of a file seen in one session's record
 * over some time, which turns of the other sessions ran then and changed
 * that file, and what their tool calls say (the `beforeEdit` paths on their
 * step records): a tool call that named the file wrote it; a file tool
 * (Edit, Write…) that named others did not; a shell tool, a step naming
 * nothing, or a turn without steps may have. From that, who wrote the
 * change: the one turn that named the file, else the one turn that may
 * have, else `mixed` — never a guess.
 *
 * Everything is read from the sessions' records (turn times, steps, change
 * entries), so it is the same after a restart: the server opens every
 * stored session of its folders, and each turn's "also changed by" is
 * recomputed from both records then rather than stored. Automatic turns are
 * left out: they are a person's edits noticed by the file watcher, not an
 * agent's, and record whatever changed.
 */
import { isAbsolute, join } from 'node:path';
import { formatChangesetUri } from '../../protocol/changeset/uris.js';
import type { AlsoChangedBy } from '../../protocol/extensions/timeline.js';
import { type Disposable, DisposableStore } from '../events.js';
import { isInsideDir } from '../paths.js';
import { SerialQueue } from '../serial-queue.js';
import type { RecordingSession } from './recording-session.js';
import type { SessionManager } from './session-manager.js';
import type { StepRecord, TurnRecord } from './turn-record.js';

/** Display paths an {@link AlsoChangedBy} lists at most. */
const LISTED_PATHS = 20;

/** Whether a tool writes only the files it names (Edit, Write…), as provenance decides it. */
type WritesOnlyNamed = (tool: string | undefined) => boolean;

/** A turn of a session. */
interface SessionTurn {
  session: RecordingSession;
  turn: TurnRecord;
}

/** What a turn's tool calls say of one file over some time. */
type Role = 'named' | 'possible' | 'excluded';

/** A turn that ran while a file changed, what its tool calls say of the file, and the step that says it. */
interface Candidate extends SessionTurn {
  role: Role;
  /** The step that named the file, or the one step that may have written it. */
  step?: StepRecord;
}

/** A session's turn (and step) that wrote a change, named as provenance names authors. */
interface SharedWriter {
  session: { uri: string; title?: string; agent?: string };
  turn: { number: number; id: string; prompt?: string; at: string; changeset: string };
  step?: { index: number; tool?: string; paths: readonly string[]; at: string; changeset: string };
}

/** Who wrote a change when turns of other sessions ran while it was made: one turn the hooks single out, or several that may have. */
type SharedWriters = { kind: 'one'; writer: SharedWriter } | { kind: 'mixed'; writers: SharedWriter[] };

/** A change of a file seen in a session's record, as provenance describes it. */
interface SharedChange {
  session: { uri: string };
  /** The session's turn that recorded it; absent for a change between its turns. */
  turn?: { id: string };
  /** The file, as an absolute path. */
  file?: string;
  /** When the record last saw the file before the change, ISO 8601. */
  after?: string;
  /** When the record next saw it, ISO 8601. */
  before?: string;
}

/** The live sessions of every tracked server, by URI: what {@link sharedWriters} reads. */
const tracked = new Map<string, { session: RecordingSession; manager: SessionManager }>();

/** Ended turns' spans: provenance asks for them at every recorded change of a file. */
const spans = new WeakMap<TurnRecord, { from: number; to: number }>();

/** The span of a turn, ms since the epoch: to +∞ while it runs. */
function rawSpan(turn: TurnRecord): { from: number; to: number } {
  const kept = spans.get(turn);
  if (kept) return kept;
  const from = Date.parse(turn.startedAt);
  if (!turn.after || turn.durationMs === undefined) return { from, to: Number.POSITIVE_INFINITY };
  const span = { from, to: from + turn.durationMs };
  spans.set(turn, span);
  return span;
}

/** The span of a turn, ms since the epoch: to +∞ while it runs; undefined for automatic turns. */
function spanOf(turn: TurnRecord): { from: number; to: number } | undefined {
  if (turn.automatic) return undefined;
  const span = rawSpan(turn);
  return Number.isNaN(span.from) ? undefined : span;
}

/** Whether the session recorded turns over [from, to] (from its first turn's start to its last's end): past sessions are passed over at once. */
function recordedDuring(session: RecordingSession, from: number, to: number): boolean {
  const turns = session.turns;
  if (turns.length === 0) return false;
  return rawSpan(turns[0]!).from < to && rawSpan(turns[turns.length - 1]!).to > from;
}

/**
 * The session's turns that ran over [from, to], oldest first: its turns
 * follow one another, so the ones before the first that starts after `to`,
 * back to the first that ended before `from`.
 */
function turnsDuring(session: RecordingSession, from: number, to: number): TurnRecord[] {
  const turns = session.turns;
  let lo = 0;
  let hi = turns.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rawSpan(turns[mid]!).from < to) lo = mid + 1;
    else hi = mid;
  }
  const out: TurnRecord[] = [];
  for (let i = lo - 1; i >= 0 && rawSpan(turns[i]!).to > from; i--) out.push(turns[i]!);
  return out.reverse();
}

/** True when a directory of one list is, contains or lies in a directory of the other. */
function foldersOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => isInsideDir(x, y) || isInsideDir(y, x)));
}

const changedCache = new WeakMap<TurnRecord, ReadonlySet<string>>();

/**
 * The absolute paths an ended turn changed (both sides of a rename), from
 * its change entries, which are kept with the record; undefined while it runs.
 */
function changedFiles(session: RecordingSession, turn: TurnRecord): ReadonlySet<string> | undefined {
  if (!turn.after || !turn.entries) return undefined;
  let found = changedCache.get(turn);
  if (found) return found;
  const roots = session.files.list();
  const set = new Set<string>();
  const add = (p: string | undefined) => {
    if (p === undefined) return;
    if (isAbsolute(p)) return void set.add(p);
    // Entries are relative to the repository top, else the working directory.
    for (const root of roots) {
      const abs = join(root.repository?.workTree ?? root.dir, p);
      if (isInsideDir(root.dir, abs)) return void set.add(abs);
    }
  };
  for (const entry of turn.entries) {
    add(entry.path);
    add(entry.oldPath);
  }
  found = set;
  changedCache.set(turn, found);
  return found;
}

/**
 * What a turn's tool calls say of `file` over [from, to], and the step
 * that says it; undefined when the turn did not run then. A step's tool
 * writes after it is announced and before the next step (or the turn's
 * end); before the first step, or in a turn without steps, the record
 * cannot say.
 */
function roleOf(turn: TurnRecord, file: string, from: number, to: number, writesOnlyNamed: WritesOnlyNamed): Omit<Candidate, keyof SessionTurn> | undefined {
  const span = spanOf(turn);
  if (!span || !(span.from < to && span.to > from)) return undefined;
  const steps = turn.steps ?? [];
  const possible: StepRecord[] = [];
  let beforeSteps = steps.length === 0;
  if (steps.length > 0 && span.from < to && Date.parse(steps[0]!.at) > from) beforeSteps = true;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    const stepFrom = Date.parse(step.at);
    const stepTo = i + 1 < steps.length ? Date.parse(steps[i + 1]!.at) : span.to;
    if (!(stepFrom < to && stepTo > from)) continue;
    if (step.paths.includes(file)) return { role: 'named', step };
    if (!(writesOnlyNamed(step.tool) && step.paths.length > 0)) possible.push(step);
  }
  if (beforeSteps || possible.length > 0) return { role: 'possible', ...(!beforeSteps && possible.length === 1 ? { step: possible[0]! } : {}) };
  return { role: 'excluded' };
}

/**
 * The turns of the sessions sharing a folder with `session` (and of
 * `self`'s own, when given) that ran over [from, to] and changed `file`
 * (a turn still running only when a tool call of it named the file), each
 * with what its tool calls say; one per session, its last.
 */
function candidatesFor(
  sessions: readonly RecordingSession[],
  session: RecordingSession,
  self: TurnRecord | undefined,
  file: string,
  from: number,
  to: number,
  writesOnlyNamed: WritesOnlyNamed,
): Candidate[] {
  const out: Candidate[] = [];
  for (const other of sessions) {
    if (other === session) {
      if (!self) continue;
    } else if (other.isDisposed || !recordedDuring(other, from, to) || !foldersOverlap(session.files.dirs, other.files.dirs)) continue;
    const turns = other === session ? [self!] : turnsDuring(other, from, to);
    let last: Candidate | undefined;
    for (const turn of turns) {
      const role = roleOf(turn, file, from, to, writesOnlyNamed);
      if (!role) continue;
      // The record's own turn saw the change; another's counts when its changes show the file (while it runs: when it named it).
      const changed = turn === self ? undefined : changedFiles(other, turn);
      if (turn !== self && (changed ? !changed.has(file) : role.role !== 'named')) continue;
      last = { session: other, turn, ...role };
    }
    if (last) out.push(last);
  }
  return out;
}

/** The one candidate the hooks single out, the several that may have written the change, or none (every one's tool calls wrote other files). */
function decide(candidates: readonly Candidate[]): Candidate[] {
  const named = candidates.filter((c) => c.role === 'named');
  if (named.length > 0) return named;
  return candidates.filter((c) => c.role === 'possible');
}

function writerOf(c: Candidate): SharedWriter {
  const { session, turn, step } = c;
  const title = session.sessionState?.title;
  const agent = session.meta.agent;
  const writer: SharedWriter = {
    session: { uri: session.uri, ...(title ? { title } : {}), ...(agent ? { agent } : {}) },
    turn: {
      number: turn.index,
      id: turn.id,
      at: turn.startedAt,
      changeset: formatChangesetUri({ sessionId: session.id, kind: 'turn', turnId: turn.id }),
      ...(turn.message !== undefined && turn.message !== '' ? { prompt: turn.message } : {}),
    },
  };
  if (step) {
    writer.step = {
      index: step.index,
      paths: step.paths,
      at: step.at,
      changeset: formatChangesetUri({ sessionId: session.id, kind: 'step', turnId: turn.id, step: step.index }),
      ...(step.tool !== undefined ? { tool: step.tool } : {}),
    };
  }
  return writer;
}

/**
 * Who wrote a change of a file seen in a session's record, when turns of
 * other sessions recording the same folder ran while it was made and
 * changed that file: the one turn whose tool call named the file, else the
 * one that may have written it (a shell step, no steps), else `mixed` with
 * every turn that may have. Undefined when no other session's turn is
 * involved, or the session's own turn (or, between its turns, nobody's)
 * is the answer: then its own record decides.
 */
export function sharedWriters(change: SharedChange, writesOnlyNamed: WritesOnlyNamed): SharedWriters | undefined {
  const file = change.file;
  const found = tracked.get(change.session.uri);
  if (file === undefined || !found || found.session.isDisposed) return undefined;
  const { session, manager } = found;
  const sessions = manager.list();
  if (sessions.length < 2) return undefined;
  const self = change.turn ? session.turn(change.turn.id) : undefined;
  if (change.turn && !self) return undefined;
  const from = change.after !== undefined ? Date.parse(change.after) : Number.NEGATIVE_INFINITY;
  const to = change.before !== undefined ? Date.parse(change.before) : Number.POSITIVE_INFINITY;
  // No time between the two states: what an operation wrote, nobody's turn.
  if (!(from < to)) return undefined;
  const chosen = decide(candidatesFor(sessions, session, self, file, from, to, writesOnlyNamed));
  if (chosen.length === 0 || (chosen.length === 1 && chosen[0]!.session === session)) return undefined;
  if (chosen.length === 1) return { kind: 'one', writer: writerOf(chosen[0]!) };
  return { kind: 'mixed', writers: chosen.map(writerOf) };
}

/**
 * What a turn's row says of the turns of other sessions that ran with it:
 * each one that changed files of this turn which the hooks do not put down
 * to this session alone (the other turn's tool call named the file, or
 * neither's did and both may have written it), with those files.
 */
function alsoChangedByOf(sessions: readonly RecordingSession[], self: SessionTurn, writesOnlyNamed: WritesOnlyNamed): AlsoChangedBy[] {
  const span = spanOf(self.turn);
  const mine = changedFiles(self.session, self.turn);
  if (!span || !mine || mine.size === 0) return [];
  const byTurn = new Map<TurnRecord, { other: SessionTurn; paths: string[] }>();
  for (const other of sessions) {
    if (other === self.session || other.isDisposed || !recordedDuring(other, span.from, span.to) || !foldersOverlap(self.session.files.dirs, other.files.dirs))
      continue;
    for (const turn of turnsDuring(other, span.from, span.to)) {
      const otherSpan = spanOf(turn);
      const theirs = changedFiles(other, turn);
      if (!otherSpan || !theirs || !(otherSpan.from < span.to && otherSpan.to > span.from)) continue;
      const from = Math.max(span.from, otherSpan.from);
      const to = Math.min(span.to, otherSpan.to);
      for (const file of mine) {
        if (!theirs.has(file)) continue;
        const chosen = decide(candidatesFor(sessions, self.session, self.turn, file, from, to, writesOnlyNamed));
        if (!chosen.some((c) => c.turn === turn)) continue;
        let entry = byTurn.get(turn);
        if (!entry) byTurn.set(turn, (entry = { other: { session: other, turn }, paths: [] }));
        entry.paths.push(file);
      }
    }
  }
  return [...byTurn.values()].map(({ other, paths }) => {
    paths.sort();
    return {
      session: other.session.uri,
      sessionTitle: other.session.sessionState.title,
      turn: other.turn.index,
      turnId: other.turn.id,
      paths: paths.slice(0, LISTED_PATHS).map((p) => self.session.files.displayOf(p)),
      files: paths.length,
    };
  });
}

/** What {@link trackSharedFolders} is told. */
interface SharedFolderOptions {
  /** Whether a tool writes only the files it names. */
  writesOnlyNamed: WritesOnlyNamed;
  /** A turn ended in a session that shares a folder with these others (all of them, it included): what was said of their changes may have changed. */
  changed?: (sessions: readonly RecordingSession[]) => void;
}

/**
 * Follows the manager's sessions: {@link sharedWriters} reads them, and
 * every turn's "also changed by" is kept in its session's timeline — after
 * a turn ends, for it and the turns of other sessions it ran with; when a
 * session is opened (after a restart, from both records); and when a
 * session, or some of its turns, leave, for the turns that named them.
 */
export function trackSharedFolders(manager: SessionManager, opts: SharedFolderOptions): Disposable {
  const queue = new SerialQueue();
  const store = new DisposableStore();
  let stopped = false;

  const sharing = (session: RecordingSession): RecordingSession[] =>
    manager.list().filter((s) => s !== session && !s.isDisposed && foldersOverlap(session.files.dirs, s.files.dirs));

  const refresh = (targets: readonly SessionTurn[]): void => {
    const sessions = manager.list();
    for (const target of targets) {
      if (stopped || target.session.isDisposed || !target.session.turns.includes(target.turn)) continue;
      target.session.timeline.alsoChangedBy(target.turn.id, alsoChangedByOf(sessions, target, opts.writesOnlyNamed));
    }
  };
  /** The turns of `session` and of the sessions sharing a folder with it that ran over [from, to]. */
  const turnsAround = (session: RecordingSession, from: number, to: number): SessionTurn[] => {
    const out: SessionTurn[] = [];
    for (const s of [session, ...sharing(session)]) {
      for (const turn of turnsDuring(s, from, to)) if (spanOf(turn)) out.push({ session: s, turn });
    }
    return out;
  };
  const schedule = (task: () => void): void => {
    void queue
      .run(async () => {
        if (!stopped) task();
      })
      .catch(() => undefined);
  };
  const follow = (session: RecordingSession): void => {
    tracked.set(session.uri, { session, manager });
    const subs = new DisposableStore();
    subs.add(
      session.onTurnEnded((turn) => {
        const others = sharing(session);
        if (others.length === 0) return;
        // Before the turn's end is answered: a question asked after it reads both records afresh.
        opts.changed?.([session, ...others]);
        schedule(() => {
          const span = spanOf(turn);
          if (span) refresh(turnsAround(session, span.from, span.to));
        });
      }),
    );
    // Restoring and removing later turns is the user's action: rows that named the removed turns say so no more.
    subs.add(session.onUserAction(() => schedule(() => sharing(session).length > 0 && refresh(everyTurn([session, ...sharing(session)])))));
    subs.add(
      session.onDisposed(() => {
        subs.dispose();
        if (tracked.get(session.uri)?.session === session) tracked.delete(session.uri);
        schedule(() => refresh(everyTurn(sharing(session))));
      }),
    );
    store.add(subs);
    // Opened (after a restart, the folder's past sessions one by one): its turns, and the others' that ran in its time.
    schedule(() => {
      const turns = session.turns;
      if (turns.length === 0 || sharing(session).length === 0) return;
      refresh(turnsAround(session, rawSpan(turns[0]!).from, rawSpan(turns[turns.length - 1]!).to));
    });
  };
  for (const session of manager.list()) follow(session);
  store.add(manager.onSessionAdded(follow));
  return {
    dispose: () => {
      stopped = true;
      store.dispose();
      for (const [uri, entry] of tracked) if (entry.manager === manager) tracked.delete(uri);
    },
  };
}

function everyTurn(sessions: readonly RecordingSession[]): SessionTurn[] {
  return sessions.flatMap((session) => session.turns.map((turn) => ({ session, turn })));
}
