/**
 * The `harness/*` methods: how an agent running in another process (a
 * hook, the CLI, an IDE extension) tells the server where its turns start
 * and end, which files it is about to write and which files it wants shown,
 * and asks what is being recorded. Not part of AHP.
 */

import type { AlsoChangedBy, TurnCommit, TurnStep } from './timeline.js';

/** How a turn ended. */
export type TurnEndState = 'complete' | 'cancelled' | 'error';

/** Params of `harness/turnStarted`. */
export interface TurnStartedParams {
  /** The session URI (`ahp-session:/<id>`). */
  channel: string;
  /** The id the turn gets. The server picks one when it is omitted. */
  turnId?: string;
  /** The user's prompt, or a description of the turn. It becomes the turn's title. */
  message?: string;
  /**
   * Echoed on `root/progress` notifications sent to this client while the
   * turn waits for the session's first snapshot (`serve` reads the working
   * directory in the background); none are sent when nothing is waited for.
   */
  progressToken?: string;
}

/** Result of `harness/turnStarted`. */
export interface TurnStartedResult {
  /** The turn's id: the one given, or the one the server picked. */
  turnId: string;
  /** The session's chat channel, whose `turns` list the session's turns. */
  chat: string;
}

/** Params of `harness/beforeEdit`: sent before a tool writes, so the file's content before the write is kept. */
export interface BeforeEditParams {
  /** The session URI. */
  channel: string;
  /** The id of the turn being recorded. */
  turnId: string;
  /** The paths the tool is about to write: absolute, or relative to the session's first working directory. Empty for a tool that names none (a shell command): the step is recorded, nothing is captured. */
  paths: string[];
  /** The tool's name. It is recorded with the turn's changes and starts a new step of the turn. */
  tool?: string;
}

/** Result of `harness/beforeEdit`. */
export interface BeforeEditResult {
  /** The absolute paths whose content is now kept. Paths under a temporary directory outside the working directories are skipped. */
  captured: string[];
}

/** Params of `harness/turnEnded`. */
export interface TurnEndedParams {
  /** The session URI. */
  channel: string;
  /** The id of the turn being recorded. */
  turnId: string;
  /** How the turn ended; `complete` when omitted. */
  state?: TurnEndState;
}

/** One file a turn changed, with its line counts. */
export interface ChangedFileSummary {
  /** The path relative to the session's working directory, or absolute when the file lies outside it. */
  path: string;
  /** The label shown to the user and the sort key: always separated by `/`. */
  display: string;
  /** Lines added. Zero for binary and oversized files. */
  added: number;
  /** Lines deleted. Zero for binary and oversized files. */
  deleted: number;
  /** Present when either side of the file is binary. */
  binary?: true;
  /** Present when the file is over the size limit, so its lines were not counted. */
  oversized?: true;
}

/** What a turn changed. */
export interface TurnSummary {
  /** The id of the turn. */
  turn: string;
  /** The working directory the files' `path` is relative to. */
  cwd: string;
  /** The changed files in `display` order, at most 500 of them. */
  files: ChangedFileSummary[];
  /** How many files changed, those left out of `files` included. */
  total: number;
  /** Lines added over every changed file, those left out of `files` included. */
  added: number;
  /** Lines deleted over every changed file, those left out of `files` included. */
  deleted: number;
  /** The ids of the snapshots taken at the turn's start and end. Absent when none was taken. */
  snapshot?: { before: string; after: string };
}

/** Result of `harness/turnEnded`. */
export interface TurnEndedResult {
  /** What the turn changed. Changesets already show the turn when this answer arrives. */
  summary: TurnSummary;
}

/**
 * Params of `harness/sessionEnded`: the agent's session ended (a hook's
 * session-end event). Recording stops; the session stays listed,
 * reviewable and revertable, flagged `IsArchived`. A client's
 * `disposeSession` removes a session instead.
 */
export interface SessionEndedParams {
  /** The session URI. */
  channel: string;
}

/** Result of `harness/sessionEnded`: null once the session has ended. */
export type SessionEndedResult = null;

/** Params of `harness/presentFiles`: files the agent wants the user to look at (a plan, a report). */
export interface PresentFilesParams {
  /** The session URI. */
  channel: string;
  /** The id of the turn being recorded. */
  turnId: string;
  /** The files: absolute paths or relative to the first working directory. They may lie outside the working directories. */
  files: { path: string; description?: string }[];
}

/** Result of `harness/presentFiles`. */
export interface PresentFilesResult {
  /** Each file as recorded: its real absolute path, and the `file:` URI `resourceRead` serves it under. */
  presented: { path: string; uri: string }[];
}

/** Params of `harness/status`; they may be omitted. */
export interface StatusParams {
  /** Only this session. Every session the server holds when omitted. */
  channel?: string;
  /** How many of the most recent turns are listed per session: 10 when omitted, at most 1000. */
  turns?: number;
}

/** One turn as `harness/status` reports it. */
export interface TurnStatus {
  /** The turn's id. */
  turnId: string;
  /** Its number in the session, from 1. */
  index: number;
  /** The prompt or description, when one was given. */
  message?: string;
  /** When it started (ISO 8601). */
  startedAt: string;
  /** How it ended. Absent while it is being recorded. */
  state?: TurnEndState;
  /** Milliseconds from its start to its end, once it ended. */
  durationMs?: number;
  /** How many files it changed and the lines added and deleted, once it ended. */
  changes?: { files: number; added: number; deleted: number };
  /** What the timeline calls it: the prompt, or for automatic turns what it touched. */
  title?: string;
  /** Present for turns recorded without a harness, from quiet periods of the file system. */
  automatic?: true;
  /** Its tool calls in order, once it ended, when the harness announced any (as the session state's `_meta.turns` lists them). */
  steps?: TurnStep[];
  /** Turns of other sessions in the same folder that changed its files while it ran (as the session state's `_meta.turns` lists them), when any did. */
  alsoChangedBy?: AlsoChangedBy[];
  /** The commits its lines landed in, oldest first (as the session state's `_meta.turns` lists them), when any did. */
  commits?: TurnCommit[];
}

/** What one retention pass over a store did. */
export interface RetentionStatus {
  /** When it finished (ISO 8601). */
  at: string;
  /** The store's size before the pass, in bytes. */
  bytesBefore: number;
  /** The store's size after the pass, in bytes. */
  bytesAfter: number;
  /** Ended sessions dropped. The space only they held was reclaimed in the same pass. */
  sessionsDropped: number;
  /** Ended sessions kept because nothing of theirs could be removed yet. */
  sessionsKept: number;
  /** Objects removed. */
  objectsRemoved: number;
  /** Packs before the pass. */
  packsBefore: number;
  /** Packs after the pass, which compacts them into one. */
  packsAfter: number;
  /** True when the store is still over its budget, holding only live sessions and recent objects. */
  overBudget: boolean;
}

/** One working directory's store in `harness/status`. */
export interface StoreStatus {
  /** The working directory. */
  dir: string;
  /** Bytes the store takes on disk. */
  bytes: number;
  /** The size retention keeps the store under, in bytes. */
  budgetBytes: number;
  /** The last retention pass in this process that had work to do (over budget, or sessions past their age), if any. */
  lastRetention?: RetentionStatus;
}

/** What the snapshots of one working directory trusted the file watcher for, and what checking found it missed. */
export interface SnapshotTrackingStatus {
  /** The working directory. */
  dir: string;
  /** True when a file watcher tells snapshots which paths changed. */
  watching: boolean;
  /** Snapshots that visited only the paths the watcher reported. */
  incremental: number;
  /** Snapshots answered with the previous one, because nothing changed. */
  reused: number;
  /** Snapshots that walked the whole tree. */
  fullWalks: number;
  /** Why the last whole walk was needed. */
  lastFullWalkReason?: string;
  /** Checking walks done while the session was idle. */
  verifications: number;
  /** Changed paths a checking walk found that the watcher had not reported. */
  missed: number;
  /** The last few of those paths. */
  lastMissed: string[];
  /** Directories walked whole at every snapshot, because the watcher may not see into them. */
  blindDirs: number;
}

/** One of the user's own actions (a revert, restore or undo) as `harness/status` reports it. */
export interface UserActionStatus {
  /** When it was done (ISO 8601). */
  at: string;
  /** The timeline's line for it, such as "Reverted lines 3–9 of src/app.ts (turn 2)". */
  text: string;
  /** The files it wrote, as shown to the user. */
  files: string[];
}

/** One session as `harness/status` reports it. */
export interface SessionStatusInfo {
  /** The session URI. */
  channel: string;
  /** Its chat channel. */
  chat: string;
  /** Its title. */
  title: string;
  /** The agent recording into it ("Claude Code"), when a harness said so. */
  agent?: string;
  /** When it ended (ISO 8601). An ended session records no more, and stays reviewable and revertable. */
  endedAt?: string;
  /** The user's own actions, oldest first, at most as many as the turns asked for (one at least). */
  userActions?: UserActionStatus[];
  /** Its working directories (real paths). */
  workingDirectories: string[];
  /** When it was created (ISO 8601). */
  createdAt: string;
  /** The turn being recorded, if any. */
  activeTurn?: TurnStatus;
  /** How many turns were recorded, the active one included. */
  turnCount: number;
  /** The most recent turns, oldest first, at most as many as asked for. */
  turns: TurnStatus[];
  /** Each working directory's store: its size, its budget, and what retention last did. */
  stores: StoreStatus[];
  /** Each working directory's snapshots. Absent when file watching is off. */
  snapshots?: SnapshotTrackingStatus[];
  /** The session's first snapshot is still being read (`serve` reads it in the background); turns start once it is done. */
  preparing?: {
    /** Files read so far. */
    filesRead: number;
    /** Files expected, when known. */
    filesExpected?: number;
  };
}

/** Result of `harness/status`. */
export interface StatusResult {
  /** The sessions in creation order; only the one asked for when `channel` was given. */
  sessions: SessionStatusInfo[];
}
