/**
 * Review comments: this server's extension, not part of AHP. A reviewer
 * leaves a comment on lines of a file in any changeset, or on a whole turn;
 * the agent reads the open ones (MCP, hooks) and says when it addressed
 * them. Comments are kept with the session in the store, so they survive
 * restarts, mirrors and `import`. A client that never calls these methods
 * sees nothing of them and loses nothing.
 */

/** Most bytes of a comment's text (UTF-8). */
export const MAX_COMMENT_BYTES = 65_536;

/** A comment on lines of one file, as a changeset showed them. */
export interface LinesAnchor {
  kind: 'lines';
  /** The changeset URI the comment was written on (a turn's, the session's, uncommitted changes…). */
  changeset: string;
  /** The file's display path in that changeset. */
  path: string;
  /** `after`: lines of the file as the changeset left it; `before`: lines of the file before it (removed lines). */
  side: 'before' | 'after';
  /** First line, counted from 1. */
  startLine: number;
  /** Last line, inclusive; the same as `startLine` for one line. */
  endLine: number;
}

/** A comment on a whole turn. */
export interface TurnAnchor {
  kind: 'turn';
  /** The turn's id (its number in the session is in {@link ReviewComment.turn}). */
  turnId: string;
}

/** Where a comment was written. */
export type CommentAnchor = LinesAnchor | TurnAnchor;

/** Where a line comment's lines are now, after later turns and edits moved them. */
export interface CommentPosition {
  /** The file's display path now. */
  path: string;
  /** First line now, counted from 1. */
  startLine: number;
  /** Last line now, inclusive. */
  endLine: number;
}

/** One review comment. */
export interface ReviewComment {
  /**
   * The comment's id, unique in its session: its number there ("3"; people
   * write "#3", which the methods taking an id accept too). Never given twice,
   * even after a delete.
   */
  id: string;
  /** The session URI (`ahp-session:/<id>`). */
  channel: string;
  /** Where it was written. */
  anchor: CommentAnchor;
  /** The number of the turn it was written on, when its changeset is a turn's or it is a turn comment. */
  turn?: number;
  /** The text, as the reviewer wrote it. */
  body: string;
  /** Who wrote it: the reviewer's name when known, else "you". */
  author: string;
  /** When it was written, in milliseconds since 1970. */
  createdAt: number;
  /** `open` until the reviewer or the agent resolves it. */
  state: 'open' | 'resolved';
  /** For a line comment: the lines it pointed at when written, without line ends. */
  code?: string[];
  /**
   * For a line comment: where those lines are in the file today, or null
   * when later changes removed or rewrote them (the comment is outdated,
   * as GitHub marks it).
   */
  now?: CommentPosition | null;
  /** Who resolved it and when, with what they said (the agent's note on what it did). */
  resolution?: { by: 'reviewer' | 'agent'; at: number; note?: string };
}

/** Params of `comments/add`. */
export interface AddCommentParams {
  /** The session URI. */
  channel: string;
  /** Where the comment goes. */
  anchor: CommentAnchor;
  /** The text (not empty, at most {@link MAX_COMMENT_BYTES}). */
  body: string;
  /** The reviewer's name; "you" when omitted. */
  author?: string;
}

/** Params of `comments/list`. */
export interface ListCommentsParams {
  /** The session URI. */
  channel: string;
  /** Which comments: `open` (default), `resolved` or `all`. */
  state?: 'open' | 'resolved' | 'all';
  /** Only comments on this file (its display path). */
  path?: string;
  /**
   * When true, this connection is sent `comments/changed` for this session
   * from now on, until it disconnects or lists again with `follow: false`
   * (whether it is subscribed to the session's channel does not matter).
   */
  follow?: boolean;
}

/** Result of `comments/list`: oldest first. */
export interface ListCommentsResult {
  comments: ReviewComment[];
}

/** Params of `comments/resolve`. */
export interface ResolveCommentParams {
  /** The session URI. */
  channel: string;
  /** The comment's id. */
  id: string;
  /** `reviewer` (default) or `agent`, when the agent says it addressed it. */
  by?: 'reviewer' | 'agent';
  /** What was done, in a sentence. */
  note?: string;
}

/** Params of `comments/reopen` and `comments/delete`. */
export interface CommentRefParams {
  /** The session URI. */
  channel: string;
  /** The comment's id. */
  id: string;
}

/**
 * Notification `comments/changed`, to connections that listed the
 * session's comments with `follow`: a comment was added, resolved,
 * reopened, moved by a later change, or deleted (then `comment` is absent
 * and `deleted` holds its id).
 */
export interface CommentsChangedParams {
  /** The session URI. */
  channel: string;
  /** The comment as it is now. */
  comment?: ReviewComment;
  /** The id of a deleted comment. */
  deleted?: string;
}
