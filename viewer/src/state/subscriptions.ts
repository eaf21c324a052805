/**
 * What the viewer stays subscribed to besides the open changeset: the
 * selected session's chat (the turn list), its static changesets (the chip
 * counts, deferred until the first view is drawn: 2.7 MB each on a 5,000-file
 * session), and the last few per-turn views left, so a file's "Viewed" tick
 * there can be compared with the open view's. Leaving a session drops them all.
 */
import { ROOT_CHANNEL } from '../../../protocol/common/channels.js';
import type { URI } from '../../../protocol/index.js';
import type { ViewerClient } from '../client.js';

/** How many per-turn changesets stay subscribed after they are left. */
const RECENT_VIEWS = 4;

/** The session's channels the viewer keeps. */
export class SessionChannels {
  /** Per-turn changesets left recently, newest first, still subscribed. */
  private recent: URI[] = [];
  /** Whether the static changesets are wanted yet. */
  private statics = false;

  constructor(private readonly client: ViewerClient) {}

  /** Whether a per-turn view left recently is still subscribed. */
  isRecent(uri: URI): boolean {
    return this.recent.includes(uri);
  }

  /** From now on the static changesets are wanted too (the first view is drawn). */
  wantStatics(): void {
    this.statics = true;
  }

  /** Subscribes to the chat and, once wanted, the static changesets that are not subscribed yet. */
  async sync(chat: URI | undefined, statics: readonly URI[]): Promise<void> {
    const wanted: URI[] = [];
    if (chat) wanted.push(chat);
    if (this.statics) wanted.push(...statics);
    await Promise.all(wanted.filter((uri) => !this.client.isSubscribed(uri)).map((uri) => this.client.subscribe(uri).catch(() => undefined)));
  }

  /** Another changeset opens: a per-turn one left joins the recent ones, and the oldest beyond the few kept is dropped. */
  opened(previous: URI | undefined, next: URI, isStatic: (uri: URI) => boolean): void {
    if (previous !== undefined && previous !== next && !isStatic(previous)) {
      this.recent = [previous, ...this.recent.filter((u) => u !== previous && u !== next)];
      for (const old of this.recent.splice(RECENT_VIEWS)) this.client.unsubscribe(old);
    }
    this.recent = this.recent.filter((u) => u !== next);
  }

  /** Drops every channel but the root (the session is left). */
  leave(): void {
    for (const uri of this.client.mirror.uris()) if (uri !== ROOT_CHANNEL) this.client.unsubscribe(uri);
    this.recent = [];
    this.statics = false;
  }
}
