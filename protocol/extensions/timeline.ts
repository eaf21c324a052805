/**
 * The timeline this server puts in the session state's `_meta`: each turn's
 * figures and the user's own actions. Clients that do not read it still
 * have AHP's chat turns.
 */

/** A turn's figures as clients find them in the session state (`_meta.turns[turnId]`). */
export interface TurnStats {
  /** Files the turn changed. */
  files: number;
  added: number;
  deleted: number;
  /** Display paths of the first files (the first 20). */
  paths: string[];
  /** What the timeline calls the turn: its prompt, or for automatic turns what it touched. */
  title: string;
  /** True for turns recorded without a harness. */
  automatic?: true;
  /** For automatic turns: the first and last file change seen, ISO 8601. */
  editSpan?: { from: string; to: string };
  /** Each tool call of the turn in order (its steps), when the harness announced any. */
  steps?: TurnStep[];
  /** The files the agent presented during the turn, when it presented any. */
  presentedFiles?: PresentedFileEntry[];
  /** Turns of other sessions recording the same folder that ran at the same time and changed files this turn's changes show (two agents in one folder), when any did. */
  alsoChangedBy?: AlsoChangedBy[];
  /** The commits of the workspace repository that lines this turn wrote landed in, oldest first, when any did. */
  commits?: TurnCommit[];
}

/** A commit that lines a turn wrote landed in: "committed in a1b2c3d". */
export interface TurnCommit {
  /** Full commit id. */
  oid: string;
  /** The first line of its message. */
  summary: string;
  /** How many of the lines the commit added this turn wrote. */
  lines: number;
  /** When it was committed (its author time), ISO 8601. */
  at: string;
}

/**
 * Another session's turn that ran while this one did and changed files this
 * turn's changes show, where the hooks do not say this session alone wrote
 * them: "also changed by Claude Code — fix the tests, turn 2".
 */
export interface AlsoChangedBy {
  /** The other session's URI. */
  session: string;
  /** The other session's title. */
  sessionTitle: string;
  /** The other turn's number as people see it (1 for the session's first turn). */
  turn: number;
  /** The other turn's id, to name its changeset. */
  turnId: string;
  /** Display paths of the files both turns changed, the first 20. */
  paths: string[];
  /** How many files both turns changed (every one, also past the first 20). */
  files: number;
}

/** One tool call of a turn: the `step` changeset `n` of the turn covers it. */
export interface TurnStep {
  /** 1-based position within the turn. */
  step: number;
  /** The tool's name, when the harness gave one. */
  tool?: string;
  /** Display paths the tool named. */
  paths: string[];
  /** When the tool call was announced, ISO 8601. */
  at: string;
}

/** A file the agent presented during a turn (a report, a plan). */
export interface PresentedFileEntry {
  /** The display path. */
  path: string;
  /** The `file:` URI that `resourceRead` serves. */
  uri: string;
  /** What the agent said about it. */
  description?: string;
  /** When it was presented, ISO 8601. */
  at: string;
}

/** Something the user did through an operation (revert, restore, undo…), never an agent turn. */
export interface UserAction {
  /** ISO 8601 time it was done. */
  at: string;
  /** The operation id. */
  operation: string;
  /** The timeline line: "Reverted lines 3–9 of src/app.ts (turn 2)". */
  text: string;
  /** Display paths the operation wrote. */
  files: string[];
  /** The changeset it was invoked on. */
  changeset: string;
}

/** What the session's `_meta` carries besides the working directories. */
export interface TimelineMeta {
  workingDirectories?: string[];
  /** The agent recording into the session ("Claude Code"), when a harness said so. */
  agent?: string;
  /** The first prompt, for session lists. */
  firstPrompt?: string;
  /** Set once the session has ended: it records no more, and stays reviewable. */
  endedAt?: string;
  /** Per-turn figures, by turn id. */
  turns: Record<string, TurnStats>;
  /** The user's own actions, oldest first. */
  userActions: UserAction[];
}
