import type { RootTrees } from '../changes/collect-changes.js';
import type { ChangeCounts, ChangeEntry } from '../changes/change-entries.js';
import type { CapturedSide } from '../changes/capture.js';
import type { TurnSummary } from './turn-summary.js';

/** How a recorded turn ended. */
export type TurnEndState = 'complete' | 'cancelled' | 'error';

/** A path a snapshot cannot see, captured around a turn by `beforeEdit`. */
export interface CaptureRecord {
  /** Absolute path of the file. */
  absPath: string;
  /** Index of the working directory containing it, or -1 when outside every one. */
  root: number;
  /** Content before the tool edited it. */
  before: CapturedSide;
  /** Content at turn end; set when the turn ends. */
  after?: CapturedSide;
}

/** Everything recorded about one turn. */
export interface TurnRecord {
  /** The turn id, unique within the session. */
  id: string;
  /** 1-based position of the turn in the session. */
  index: number;
  /** The prompt or description that started the turn. */
  message?: string;
  /** ISO 8601 start time. */
  startedAt: string;
  /** Milliseconds from start to end; set when the turn ends. */
  durationMs?: number;
  /** How the turn ended; absent while it runs. */
  state?: TurnEndState;
  /** Why the turn ended in error, when it did. */
  error?: string;
  /** Trees of each working directory at turn start. */
  before: RootTrees[];
  /** Trees of each working directory at turn end. */
  after?: RootTrees[];
  /** Paths captured by `beforeEdit`, by absolute path. */
  captures: Map<string, CaptureRecord>;
  /** Tool names given to `beforeEdit`, by absolute path. */
  tools: Map<string, string>;
  /** The turn's change entries, once it ended. */
  entries?: ChangeEntry[];
  /** Totals of `entries`. */
  counts?: ChangeCounts;
  /** The turn summary, once it ended. */
  summary?: TurnSummary;
  /** Recorded without a harness (automatic turns). */
  automatic?: true;
  /** For automatic turns: when the first and last file change were seen. */
  editSpan?: { from: string; to: string };
}
