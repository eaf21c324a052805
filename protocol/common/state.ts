/**
 * Cross-channel value types shared by every AHP channel (AHP 0.6,
 * AHP's `state.schema.json`, pinned in `test/fixtures/ahp/schema/`).
 */

import type { ChannelState } from './channel-state.js';

/** A URI string, e.g. `ahp-root://`, `ahp-session:/<id>` or `file:///a.txt`. */
export type URI = string;

/** A JSON object whose values the protocol does not interpret. */
export type JsonObject = { [key: string]: unknown };

/** Provider- or server-specific metadata side channel (`_meta`), mirrored from MCP. */
export type Meta = JsonObject;

/** A reference to large content stored outside the state tree, fetched with `resourceRead`. */
export interface ContentRef {
  /** Content URI; pass it to `resourceRead` to fetch the bytes. */
  uri: URI;
  /** Approximate size in bytes, for progress display and size limits. */
  sizeHint?: number;
  /** MIME type of the content, e.g. `text/plain`. */
  contentType?: string;
  /** Opaque nonce the server may use to version or authorise the content. */
  nonce?: string;
}

/** One side (before or after) of a {@link FileEdit}. */
export interface FileEditSide {
  /** Workspace URI of the file on this side of the edit. */
  uri: URI;
  /**
   * Content URI for this side's bytes, readable with `resourceRead`.
   * The schema types this as a string (a content URI), which is what we send.
   */
  content: URI;
}

/** Line counts shown next to a file edit. */
export interface FileEditDiff {
  /** Number of inserted lines. */
  added?: number;
  /** Number of deleted lines. */
  removed?: number;
}

/**
 * A file modification: creates carry only `after`, deletes only `before`,
 * renames differ in `uri`, edits share `uri` and differ in content.
 */
export interface FileEdit {
  /** The file before the edit; absent for creations. */
  before?: FileEditSide;
  /** The file after the edit; absent for deletions. */
  after?: FileEditSide;
  /** Optional added/removed line counts for display. */
  diff?: FileEditDiff;
}

/** Structured error details carried in state and actions. */
export interface ErrorInfo {
  /** Short machine-readable error type, e.g. `git` or `conflict`. */
  errorType: string;
  /** Human-readable error message. */
  message: string;
  /** Stack trace, when useful for diagnosis. */
  stack?: string;
  /** Additional provider-specific detail clients may use for richer UI. */
  _meta?: Meta;
}

/** A zero-based position within a text document. */
export interface TextPosition {
  /** Zero-based line number. */
  line: number;
  /** Zero-based character offset within the line. */
  character: number;
}

/** A range within a text document. */
export interface TextRange {
  /** Start position of the range. */
  start: TextPosition;
  /** End position of the range. */
  end: TextPosition;
}

/** A string rendered as-is, or `{ markdown }` rendered with Markdown formatting. */
export type StringOrMarkdown = string | { /** Markdown source text. */ markdown: string };

/** A point-in-time copy of a channel's state, returned by `initialize`, `reconnect` and `subscribe`. */
export interface Snapshot<S extends ChannelState = ChannelState> {
  /** The channel URI this snapshot belongs to. */
  resource: URI;
  /** The channel's state at `fromSeq`. */
  state: S;
  /** The `serverSeq` at which the snapshot was taken; later actions have a larger `serverSeq`. */
  fromSeq: number;
}
