import type { ParsedChangesetUri } from '../../protocol/index.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { RecordingSession } from '../session/recording-session.js';
import { stepEndTrees, stepOf } from '../session/step-recorder.js';
import type { TurnRecord } from '../session/turn-record.js';
import { resolveRef } from '../snapshot/index.js';
import { commitTreeFor, findBaseBranch, mergeBase } from './git-base.js';

/** The two recorded states a changeset compares; `undefined` entries leave a working directory out. */
export interface ChangesetSides {
  before: (RootTrees | undefined)[];
  after: (RootTrees | undefined)[];
}

/** A changeset that cannot be produced (yet), with the reason. */
export class ChangesetUnavailable extends Error {
  constructor(
    message: string,
    /** `pending` while a turn is still running; `missing` for names that do not exist. */
    readonly reason: 'pending' | 'missing',
  ) {
    super(message);
  }
}

/** Live kinds follow the working tree; turn, compare-turns and step are fixed once computed. */
export function isLive(kind: ParsedChangesetUri['kind']): boolean {
  return kind === 'session' || kind === 'uncommitted' || kind === 'branch' || kind === 'since';
}

/**
 * Where an ended session's changes end: the working tree as its last turn
 * left it (not today's files, which may hold later work). Fixed like a
 * turn's: what an operation did since shows as reverted hunks, and never
 * turns later work into the session's changes. Undefined while it records:
 * its changes run to today's files.
 */
export function sessionEndTrees(session: RecordingSession): RootTrees[] | undefined {
  if (!session.isEnded) return undefined;
  return [...session.turns].reverse().find((t) => t.after !== undefined)?.after ?? session.startTrees;
}

/** The recorded state a `since` changeset starts from: the turn's start, or the checkpoint before one of its tool calls. */
export function checkpointTrees(session: RecordingSession, parsed: ParsedChangesetUri): RootTrees[] {
  const turn = existing(session, parsed.turnId!);
  return parsed.step === undefined ? turn.before : requireStep(session, turn, parsed.step).trees;
}

/**
 * The states a changeset compares. Live kinds take a fresh snapshot of the
 * working tree (`current`), so call this for each recomputation.
 */
export async function resolveSides(session: RecordingSession, parsed: ParsedChangesetUri, current?: RootTrees[]): Promise<ChangesetSides> {
  const scope = <T>(list: readonly T[]): (T | undefined)[] => list.map((t, i) => (parsed.dir === undefined || parsed.dir === i ? t : undefined));
  switch (parsed.kind) {
    case 'session':
      return { before: scope(session.startTrees), after: scope(sessionEndTrees(session) ?? current ?? (await session.currentTrees())) };
    case 'turn': {
      const turn = ended(session, parsed.turnId!);
      return { before: scope(turn.before), after: scope(turn.after!) };
    }
    case 'step': {
      const turn = existing(session, parsed.turnId!);
      const before = requireStep(session, turn, parsed.step!).trees;
      const after = stepEndTrees(turn, parsed.step!);
      if (!after) throw new ChangesetUnavailable(`step ${parsed.step} of turn ${JSON.stringify(turn.id)} is still in progress`, 'pending');
      return { before: scope(before), after: scope(after) };
    }
    case 'since':
      return { before: scope(checkpointTrees(session, parsed)), after: scope(current ?? (await session.currentTrees())) };
    case 'compare-turns': {
      const a = ended(session, parsed.originalTurnId!);
      const b = ended(session, parsed.modifiedTurnId!);
      return { before: scope(a.after!), after: scope(b.after!) };
    }
    case 'uncommitted':
    case 'branch': {
      const now = current ?? (await session.currentTrees());
      const before: (RootTrees | undefined)[] = [];
      const after: (RootTrees | undefined)[] = [];
      for (let i = 0; i < session.files.count; i++) {
        const root = session.files.root(i);
        const source = session.files.source(i);
        if ((parsed.dir !== undefined && parsed.dir !== i) || !root.repository) {
          before.push(undefined);
          after.push(undefined);
          continue;
        }
        const head = resolveRef(root.repository, 'HEAD');
        let base = head;
        if (parsed.kind === 'branch') {
          const branch = findBaseBranch(root.repository);
          base = branch && head ? await mergeBase(root.store, head, branch.commit) : branch?.commit;
        }
        const tree = base ? await commitTreeFor(root.store, source.reader, base, root.repository, root.dir) : undefined;
        // Nested repositories' commits live outside this repository: compare their gitlinks, as git does.
        before.push(tree ? { tree, nested: [] } : undefined);
        after.push({ tree: now[i]!.tree, nested: [], ...(now[i]!.unread ? { unread: now[i]!.unread } : {}) });
      }
      return { before, after };
    }
  }
}

function existing(session: RecordingSession, turnId: string): TurnRecord {
  const turn = session.turn(turnId);
  if (!turn) throw new ChangesetUnavailable(`no turn ${JSON.stringify(turnId)} in session ${session.id}`, 'missing');
  return turn;
}

function requireStep(_session: RecordingSession, turn: TurnRecord, index: number) {
  const step = stepOf(turn, index);
  if (!step) throw new ChangesetUnavailable(missingStepMessage(turn, index), 'missing');
  return step;
}

/** "turn 2 has no step 5 (it has 3 steps)", by the turn's number as people see it. */
export function missingStepMessage(turn: TurnRecord, index: number): string {
  const count = turn.steps?.length ?? 0;
  return `turn ${turn.index} has no step ${index} (${count === 0 ? 'it recorded no steps' : `it has ${count} step${count === 1 ? '' : 's'}`})`;
}

function ended(session: RecordingSession, turnId: string) {
  const turn = existing(session, turnId);
  if (!turn.after) throw new ChangesetUnavailable(`turn ${JSON.stringify(turnId)} is still in progress`, 'pending');
  return turn;
}
