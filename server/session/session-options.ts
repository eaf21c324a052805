import type { ChannelStore } from '../channels/index.js';
import type { ProgressReport } from './session-files.js';

/** How to create a recording session. */
export interface RecordingSessionOptions {
  /** Session id (the path of `ahp-session:/<id>`); a ULID when omitted. */
  id?: string;
  /** Working directories, the first being the session's default. */
  workingDirectories: readonly string[];
  /** State directory holding the stores. */
  stateDir: string;
  /** The channel store the session's state lives in. */
  channels: ChannelStore;
  /** Session title; the first directory's name by default. */
  title?: string;
  /** Most files listed in a turn summary (default 500). */
  maxFiles?: number;
  /** Captured files above this size are listed as oversized (default 2 MiB). */
  captureMaxBytes?: number;
  /** Extra exclude patterns for snapshots. */
  extraExcludes?: readonly string[];
  /** Built-in excludes for non-repository workspaces. */
  builtinExcludes?: boolean | readonly string[];
  /** Byte budget of each working directory's store (2 GiB by default). */
  storeBudgetBytes?: number;
  /** Ended sessions are dropped from the stores this many days after they ended; no age limit by default. */
  retainDays?: number;
  /** Called with snapshot progress during long walks. */
  onProgress?: ProgressReport;
  /** Also called with the progress of the session's first snapshot only (a `createSession` with a `progressToken`). */
  onStartProgress?: ProgressReport;
  /**
   * A new session's first snapshot runs in the background (`serve`):
   * `create` resolves once the session's channels exist, with lifecycle
   * `creating` until the snapshot is recorded; turns, operations and
   * changesets wait for it (`RecordingSession.started`).
   */
  startInBackground?: boolean;
  /** The agent recording into the session ("Claude Code"), for its title. */
  agent?: string;
  /**
   * What to do when the stores hold this id as ended: `refuse` (default),
   * `archived` (open it for review, recording nothing), `resume` (record
   * into it again).
   */
  ended?: 'refuse' | 'archived' | 'resume';
}

/** The snapshot options of every working directory of a session. */
export function snapshotOptions(opts: RecordingSessionOptions) {
  return {
    ...(opts.extraExcludes ? { extraExcludes: opts.extraExcludes } : {}),
    ...(opts.builtinExcludes !== undefined ? { builtinExcludes: opts.builtinExcludes } : {}),
    ...(opts.storeBudgetBytes !== undefined ? { budgetBytes: opts.storeBudgetBytes } : {}),
    ...(opts.retainDays !== undefined ? { retainDays: opts.retainDays } : {}),
  };
}

/** One progress report told to both. */
export function bothReports(a: ProgressReport, b: ProgressReport): ProgressReport {
  return (done, total) => {
    a(done, total);
    b(done, total);
  };
}

/** How far a first snapshot running in the background has come. */
export interface StartProgress {
  /** Files read so far. */
  done: number;
  /** Files expected, when known (the previous run's count). */
  total?: number;
}
