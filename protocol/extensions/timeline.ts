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
