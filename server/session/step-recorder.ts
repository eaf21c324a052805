/**
 * Step checkpoints: the workspace as it was before each tool call of a turn,
 * so a turn can be restored to the moment before any one of its edits and
 * each tool call's own changes can be shown.
 */
import type { TurnStep } from '../../protocol/extensions/timeline.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { SessionJournal } from './session-journal.js';
import type { StepRecord, TurnRecord } from './turn-record.js';

/** Steps recorded per turn at most; later tool calls of the turn get no checkpoint of their own. */
const MAX_STEPS_PER_TURN = 10_000;

/** What recording a step needs from its session. */
export interface StepRecorderDeps {
  /**
   * Snapshots every working directory, inside the session's queue. It follows
   * the file watcher, so a step costs what changed since the previous
   * snapshot, not a walk of the tree.
   */
  snapshot(): Promise<RootTrees[]>;
  journal: SessionJournal;
}

/**
 * Records a step of the active turn before a tool writes `paths`, and stores
 * it (a `step` checkpoint in every working directory's store) before
 * answering, so it survives a crash. Undefined when the turn has reached
 * {@link MAX_STEPS_PER_TURN}.
 */
export async function recordStep(
  turn: TurnRecord,
  paths: readonly string[],
  tool: string | undefined,
  deps: StepRecorderDeps,
): Promise<StepRecord | undefined> {
  const steps = (turn.steps ??= []);
  if (steps.length >= MAX_STEPS_PER_TURN) return undefined;
  const step: StepRecord = { index: steps.length + 1, at: new Date().toISOString(), paths: [...paths], trees: await deps.snapshot() };
  if (tool !== undefined) step.tool = tool;
  await deps.journal.writeStep(turn, step);
  steps.push(step);
  return step;
}

/** The step with this 1-based index, if the turn recorded it. */
export function stepOf(turn: TurnRecord, index: number): StepRecord | undefined {
  return turn.steps?.[index - 1];
}

/**
 * The state a step's tool call led to: the next step's checkpoint, or the
 * turn's end for its last step (undefined while the turn is still running).
 */
export function stepEndTrees(turn: TurnRecord, index: number): RootTrees[] | undefined {
  return stepOf(turn, index + 1)?.trees ?? turn.after;
}

/** Steps as the session state's `_meta.turns[turnId].steps` lists them. */
export function stepsMeta(turn: TurnRecord, display: (absPath: string) => string): TurnStep[] {
  return (turn.steps ?? []).map((s) => ({ step: s.index, ...(s.tool !== undefined ? { tool: s.tool } : {}), paths: s.paths.map(display), at: s.at }));
}
