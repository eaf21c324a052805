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
  /** At turn end the path led outside the working directories (a folder on its way was swapped for a link): not read, `after` left empty. */
  leftWorkingDirectory?: true;
}

/** The workspace as it was before one tool call of a turn (`harness/beforeEdit`, a hook's file-tool event). */
export interface StepRecord {
  /** 1-based position of the step within its turn. */
  index: number;
  /** When the tool call was announced, ISO 8601. */
  at: string;
  /** The tool's name, when the harness gave one. */
  tool?: string;
  /** Absolute paths the tool named. */
  paths: string[];
  /** Trees of each working directory before the tool call. */
  trees: RootTrees[];
}

/** A file the agent presented to the user during a turn; its content stays at its path. */
export interface PresentedFile {
  /** Absolute path (real path), possibly outside every working directory. */
  path: string;
  /** The label clients show (relative inside the working directory, `~/…` or absolute). */
  display: string;
  /** Size in bytes when it was presented. */
  size: number;
  /** What the agent said the file is. */
  description?: string;
  /** When it was presented, ISO 8601. */
  at: string;
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
  /** Checkpoints before each tool call, in order. */
  steps?: StepRecord[];
  /** Files the agent presented, in the order presented (a path presented again replaces its entry). */
  presented?: PresentedFile[];
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
