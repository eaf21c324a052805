import type { JsonObject, ParsedChangesetUri } from '../../protocol/index.js';
import { presentedMeta } from '../session/presented-files.js';
import type { RecordingSession } from '../session/recording-session.js';
import { stepOf, stepsMeta } from '../session/step-recorder.js';

/**
 * What `ChangesetState._meta` says about the recorded moments a changeset
 * comes from: a turn's steps and presented files, the tool call of a step,
 * the checkpoint of a `since` changeset. Undefined when there is nothing.
 */
export function changesetMeta(session: RecordingSession, parsed: ParsedChangesetUri): JsonObject | undefined {
  const turn = parsed.turnId !== undefined ? session.turn(parsed.turnId) : undefined;
  if (!turn) return undefined;
  const display = (absPath: string) => session.files.displayOf(absPath);
  switch (parsed.kind) {
    case 'turn': {
      const meta: JsonObject = {};
      if (turn.steps?.length) meta['steps'] = stepsMeta(turn, display);
      if (turn.presented?.length) meta['presentedFiles'] = presentedMeta(turn);
      return Object.keys(meta).length > 0 ? meta : undefined;
    }
    case 'step': {
      const step = stepsMeta(turn, display)[parsed.step! - 1];
      return step ? { turnId: turn.id, step } : undefined;
    }
    case 'since': {
      const step = parsed.step !== undefined ? stepOf(turn, parsed.step) : undefined;
      return { checkpoint: { turnId: turn.id, ...(step ? { step: step.index, at: step.at } : { at: turn.startedAt }) } };
    }
    default:
      return undefined;
  }
}
