/** Root channel commands: `listSessions` (paginated). */

import type { RootChannelUri } from '../common/channels.js';
import type { SessionSummary } from '../session/state.js';

/** Cursor pagination inputs shared by list commands. */
export interface PaginatedParams {
  /** Maximum entries wanted in this page; the server may return fewer and caps it. */
  limit?: number;
  /** Opaque cursor from a previous `nextCursor`; omit for the first page. */
  cursor?: string;
}

/** Cursor pagination output shared by list commands. */
export interface PaginatedResult {
  /** Cursor for the next page; absent at the end of the collection. */
  nextCursor?: string;
}

/** Params of `listSessions`. */
export interface ListSessionsParams extends PaginatedParams {
  /** Always the root channel. */
  channel: RootChannelUri;
}

/** Result of `listSessions`: one page, most recently modified first. */
export interface ListSessionsResult extends PaginatedResult {
  /** The page of session summaries. */
  items: SessionSummary[];
}
