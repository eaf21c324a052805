/**
 * Line provenance: this server's extension, not part of AHP. For each line
 * of a file, who last wrote it — a turn of a recording session, the user,
 * or the repository's history before recording began — read from the
 * session's complete record (turn starts and ends, the checkpoint before
 * each tool call, the user's edits between turns). A client that never
 * calls `provenance/lines` sees nothing of it and loses nothing.
 */

/** Params of `provenance/lines`. */
export interface ProvenanceParams {
  /** The session URI (`ahp-session:/<id>`). */
  session: string;
  /** The file: a `file:` URI, an absolute path, or a path relative to the session's first working directory. */
  path: string;
  /**
   * A changeset URI of the session: the file is blamed as that changeset
   * shows it (its after side, or `side: 'before'`). Absent: the file as last
   * recorded in the working tree.
   */
  changeset?: string;
  /** Which side of `changeset` to blame: `after` (default) or `before`. */
  side?: 'before' | 'after';
  /** First line answered, counted from 1 (default 1). */
  startLine?: number;
  /** Last line answered, inclusive (default the file's last line). */
  endLine?: number;
}

/** A turn of a recording session wrote the line. */
export interface TurnAuthor {
  kind: 'turn';
  /** The session URI. */
  session: string;
  /** The session's title, when it has one. */
  sessionTitle?: string;
  /** The agent that recorded the session ("Claude Code", "Cursor"…), when known. */
  agent?: string;
  /** The turn's number as people see it (1 for the first turn of the session). */
  turn: number;
  /** The turn's id, to name its changeset. */
  turnId: string;
  /** The prompt or title that started the turn, when recorded. */
  prompt?: string;
  /** The step (tool call) of the turn that wrote the line, from 1; absent when the turn recorded no steps or the change came before its first step. */
  step?: number;
  /** The tool of that step ("Edit", "Bash"…), when the harness named it. */
  tool?: string;
  /** When the turn (or step) began, ISO 8601. */
  at: string;
  /** The changeset of that turn (or step), to open it. */
  changeset: string;
}

/** The user wrote the line: an edit no turn made. */
export interface UserAuthor {
  kind: 'user';
  /** Where the edit was seen: between two turns (or after the last), or during a turn in a file its tool calls did not write. */
  when: 'between-turns' | 'during-turn';
  /** The turn the edit came after (between turns), or the turn it came during. Absent before the first turn. */
  turn?: number;
  /** The session URI whose record saw the edit. */
  session: string;
  /** The earliest time the edit can have been made, ISO 8601, when known. */
  after?: string;
  /** The latest time the edit can have been made (when the record next saw the file), ISO 8601. */
  before?: string;
}

/** The line was there before recording began: the repository's history says who. */
export interface BeforeRecordingAuthor {
  kind: 'before-recording';
  /** The commit that last changed the line, as `git blame` says; absent when the file is not in the repository's history (or the walk stopped at its cap). */
  commit?: {
    /** Full commit id. */
    oid: string;
    /** The first line of its message. */
    summary: string;
    /** Its author's name. */
    author: string;
    /** Its author time, ISO 8601. */
    at: string;
  };
  /** Why there is no commit, in plain words ("not committed", "history older than 1,000 commits not read"). */
  reason?: string;
}

/** More than one session changed the file in overlapping turns, and the record cannot say which wrote the line. */
export interface MixedAuthor {
  kind: 'mixed';
  /** The turns that may have written it, one per session. */
  candidates: TurnAuthor[];
}

/** Who last wrote a line. */
export type LineAuthor = TurnAuthor | UserAuthor | BeforeRecordingAuthor | MixedAuthor;

/** Consecutive lines with the same author. */
export interface ProvenanceRange {
  /** First line, counted from 1. */
  startLine: number;
  /** Last line, inclusive. */
  endLine: number;
  /** Index into {@link ProvenanceResult.authors}. */
  author: number;
  /** An operation (revert, restore, undo) put these lines back; the author is who wrote them before. */
  restored?: true;
}

/** Result of `provenance/lines`. */
export interface ProvenanceResult {
  /** The file as reviewers see it named. */
  path: string;
  /** Lines in the blamed version of the file. */
  lineCount: number;
  /** The lines answered (`startLine`…`endLine`, clamped to the file), in ranges, top to bottom. */
  ranges: ProvenanceRange[];
  /** Each author the ranges name, once. */
  authors: LineAuthor[];
  /** The file is binary: no lines, no ranges. */
  binary?: true;
  /** The file does not exist in the blamed version. */
  missing?: true;
}
