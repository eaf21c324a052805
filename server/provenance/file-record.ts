/**
 * The recorded versions of one file in a session, in order: the session's
 * start, each turn's start, the checkpoint before each of its steps, its
 * end, and around each operation that wrote the file the version it found
 * and the one it wrote. Each version names the change that led to it
 * (`attribute-change.ts` decides whose it is). Built from the turn records
 * and the safety checkpoints alone: no tree is diffed.
 */
import { formatChangesetUri, parseChangesetUri, isChangesetUriError } from '../../protocol/index.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SafetyRecord } from '../session/session-journal.js';
import type { StepRecord, TurnRecord } from '../session/turn-record.js';
import type { RecordedChange, RecordedSession, RecordedStep, RecordedTurn } from './attribute-change.js';

/** A version of the file: its blob and mode, or undefined where it did not exist. */
export type Version = { oid: string; mode: string } | undefined;

/** An operation's version of the file (`op-after`): what it wrote, and the recorded state it put back, when known. */
export interface OperationWrite {
  /** The operation id (`revert`, `undo`…). */
  operation: string;
  /** The key of the recorded state whose lines it puts back (a turn's or step's start, the session's start), when its changeset names one. */
  from?: string;
}

/** One recorded version of the file, and how the record came to it. */
export interface RecordedState {
  /** Unique within the session, stable while the record grows: `start`, `t:<turn>:start`, `t:<turn>:s:<n>`, `t:<turn>:end`, `op:<n>:before`, `op:<n>:after`. */
  key: string;
  /** The trees holding the file, or the version itself (operations). */
  trees?: readonly RootTrees[];
  version?: Version;
  /** When the record saw it, ISO 8601. */
  at: string;
  /** The change from the previous state to this one (absent for the session's start). */
  change?: RecordedChange;
  /** For the version an operation wrote. */
  write?: OperationWrite;
}

/** The session as provenance names it. */
export function recordedSession(session: RecordingSession): RecordedSession {
  const out: RecordedSession = { uri: session.uri };
  const title = session.sessionState?.title;
  if (title) out.title = title;
  const agent = session.meta.agent;
  if (agent) out.agent = agent;
  return out;
}

/**
 * Every recorded state of the session for one file (`absPath`), oldest
 * first, with the operations that wrote it placed by time between them.
 * A turn still recording contributes its start and steps.
 */
export function recordedStates(
  session: RecordingSession,
  absPath: string,
  safety: readonly SafetyRecord[],
): { states: RecordedState[]; active?: RecordedTurn; activeStep?: RecordedStep } {
  const who = recordedSession(session);
  type Draft = Omit<RecordedState, 'change'> & {
    kind: 'start' | 'turn-start' | 'step' | 'turn-end' | 'op-before' | 'op-after';
    turn?: RecordedTurn;
    step?: RecordedStep;
  };
  const drafts: Draft[] = [{ key: 'start', kind: 'start', trees: session.startTrees, at: session.createdAt }];
  let active: RecordedTurn | undefined;
  let activeStep: RecordedStep | undefined;
  const turns = session.turns;
  for (let n = 0; n < turns.length; n++) {
    const t = turns[n]!;
    const turn = recordedTurn(session, t, n + 1);
    drafts.push({ key: `t:${t.id}:start`, kind: 'turn-start', trees: t.before, at: t.startedAt, turn });
    let last: RecordedStep | undefined;
    for (const s of t.steps ?? []) {
      const step = recordedStep(session, t, s);
      // The state at step n's checkpoint closes the change made during step n-1 (or before the first step).
      drafts.push({ key: `t:${t.id}:s:${s.index}`, kind: 'step', trees: s.trees, at: s.at, turn, ...(last ? { step: last } : {}) });
      last = step;
    }
    if (t.after) {
      const end = new Date(Date.parse(t.startedAt) + (t.durationMs ?? 0)).toISOString();
      drafts.push({ key: `t:${t.id}:end`, kind: 'turn-end', trees: t.after, at: end, turn, ...(last ? { step: last } : {}) });
    } else {
      active = turn;
      activeStep = last;
    }
  }

  // Operations that wrote the file, by time among the states; one a rollback cancelled never ran.
  const rolledBack = new Set(safety.filter((r) => r.details.operation === 'rollback').map((r) => r.details.undoes));
  for (const record of safety) {
    if (record.details.operation === 'rollback' || rolledBack.has(record.index)) continue;
    const path = record.details.paths.find((p) => p.absPath === absPath);
    if (!path || path.result === undefined) continue;
    const at = Date.parse(record.createdAt);
    let at2 = drafts.length;
    while (at2 > 1 && Date.parse(drafts[at2 - 1]!.at) > at) at2--;
    const before: Version = path.oid && path.mode ? { oid: path.oid, mode: path.mode } : undefined;
    const after: Version = path.result ? { oid: path.result.oid, mode: path.result.mode } : undefined;
    const from = restoredFrom(session, record);
    drafts.splice(
      at2,
      0,
      { key: `op:${record.index}:before`, kind: 'op-before', version: before, at: record.createdAt },
      {
        key: `op:${record.index}:after`,
        kind: 'op-after',
        version: after,
        at: record.createdAt,
        write: { operation: record.details.operation, ...(from ? { from } : {}) },
      },
    );
  }

  // What each state's change was: in a turn (before its first step, or during a step), or outside every turn.
  const states: RecordedState[] = [];
  let lastEnded: RecordedTurn | undefined;
  for (let i = 0; i < drafts.length; i++) {
    const { kind, turn, step, ...rest } = drafts[i]!;
    const state: RecordedState = rest;
    const previousAt = i > 0 ? drafts[i - 1]!.at : undefined;
    if ((kind === 'step' || kind === 'turn-end') && turn) {
      state.change = {
        kind: 'in-turn',
        session: who,
        turn,
        file: absPath,
        ...(step ? { step } : {}),
        ...(previousAt ? { after: previousAt } : {}),
        before: state.at,
      } as RecordedChange;
    } else if (kind !== 'start') {
      state.change = {
        kind: 'outside-turns',
        session: who,
        file: absPath,
        ...(lastEnded ? { afterTurn: lastEnded } : {}),
        ...(previousAt ? { after: previousAt } : {}),
        before: state.at,
      };
    }
    if (kind === 'turn-end') lastEnded = turn;
    states.push(state);
  }
  return { states, ...(active ? { active } : {}), ...(activeStep ? { activeStep } : {}) };
}

/** Turns and steps as provenance names them, made once each (a turn's number only changes when earlier turns are dropped). */
const turnInfos = new WeakMap<TurnRecord, RecordedTurn>();
const stepInfos = new WeakMap<StepRecord, RecordedStep>();

function recordedTurn(session: RecordingSession, t: TurnRecord, number: number): RecordedTurn {
  let turn = turnInfos.get(t);
  if (turn?.number !== number || turn.prompt !== (t.message || undefined)) {
    turn = {
      number,
      id: t.id,
      at: t.startedAt,
      changeset: formatChangesetUri({ sessionId: session.id, kind: 'turn', turnId: t.id }),
      ...(t.message !== undefined && t.message !== '' ? { prompt: t.message } : {}),
    };
    turnInfos.set(t, turn);
  }
  return turn;
}

function recordedStep(session: RecordingSession, t: TurnRecord, s: StepRecord): RecordedStep {
  let step = stepInfos.get(s);
  if (!step) {
    step = {
      index: s.index,
      paths: s.paths,
      at: s.at,
      changeset: formatChangesetUri({ sessionId: session.id, kind: 'step', turnId: t.id, step: s.index }),
      ...(s.tool !== undefined ? { tool: s.tool } : {}),
    };
    stepInfos.set(s, step);
  }
  return step;
}

/** The recorded state an operation puts lines back from, from the changeset it was invoked on. */
function restoredFrom(session: RecordingSession, record: SafetyRecord): string | undefined {
  // Undo and redo put back a version exactly (found by its content); discard puts back `HEAD`'s, not a recorded one.
  if (record.details.operation === 'undo' || record.details.operation === 'redo' || record.details.operation === 'discard') return undefined;
  const parsed = parseChangesetUri(record.details.changeset);
  if (isChangesetUriError(parsed) || parsed.sessionId !== session.id) return undefined;
  switch (parsed.kind) {
    case 'session':
      return 'start';
    case 'turn':
      return `t:${parsed.turnId}:start`;
    case 'step':
    case 'since':
      return parsed.step === undefined ? `t:${parsed.turnId}:start` : `t:${parsed.turnId}:s:${parsed.step}`;
    default:
      return undefined;
  }
}
