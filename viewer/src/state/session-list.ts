/**
 * The sessions the server knows, recording and past: fetched page by page
 * with `listSessions` (again after a reconnection, since notifications are
 * not replayed) and kept current by the root notifications.
 */
import { ROOT_CHANNEL } from '../../../protocol/common/channels.js';
import type {
  ListSessionsResult,
  SessionAddedParams,
  SessionRemovedParams,
  SessionSummary,
  SessionSummaryChangedParams,
  URI,
} from '../../../protocol/index.js';
import type { ViewerClient } from '../client.js';

/** What a root notification did to the list. */
export type SessionListChange = { type: 'added'; session: URI } | { type: 'removed'; session: URI } | { type: 'changed'; session: URI };

/** Known sessions, by URI. */
export class SessionList {
  readonly byUri = new Map<URI, SessionSummary>();

  constructor(private readonly client: ViewerClient) {}

  /** Re-fetches every page of `listSessions`. */
  async load(): Promise<void> {
    const all: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page: ListSessionsResult = await this.client.request('listSessions', { channel: ROOT_CHANNEL, ...(cursor ? { cursor } : {}) });
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    this.byUri.clear();
    for (const s of all) this.byUri.set(s.resource, s);
  }

  /** Sessions, most recently modified first. */
  sorted(): SessionSummary[] {
    return [...this.byUri.values()].sort((a, b) => (a.modifiedAt < b.modifiedAt ? 1 : a.modifiedAt > b.modifiedAt ? -1 : 0));
  }

  /** Applies a root notification; undefined when it is not about sessions. */
  apply(method: string, params: unknown): SessionListChange | undefined {
    if (method === 'root/sessionAdded') {
      const { summary } = params as SessionAddedParams;
      this.byUri.set(summary.resource, summary);
      return { type: 'added', session: summary.resource };
    }
    if (method === 'root/sessionRemoved') {
      const { session } = params as SessionRemovedParams;
      this.byUri.delete(session);
      return { type: 'removed', session };
    }
    if (method === 'root/sessionSummaryChanged') {
      const { session, changes } = params as SessionSummaryChangedParams;
      const known = this.byUri.get(session);
      if (known) this.byUri.set(session, { ...known, ...changes });
      return { type: 'changed', session };
    }
    return undefined;
  }
}
