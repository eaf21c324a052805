/**
 * Who hears `comments/changed`: only the connections that listed a
 * session's comments with `follow: true`, until they disconnect or list
 * again with `follow: false`. A client that never asked is sent nothing.
 */
import type { CommentsChangedParams } from '../../protocol/index.js';
import type { Caller } from '../method-table.js';

export class CommentFollowers {
  /** Session URI → the connections following its comments. */
  private readonly bySession = new Map<string, Set<Caller>>();
  /** Connections whose disconnect is already listened for. */
  private readonly watched = new WeakSet<Caller>();

  /** `caller` hears the session's changes from now on (`on`), or no more. */
  follow(sessionUri: string, caller: Caller, on: boolean): void {
    if (!on) {
      this.drop(sessionUri, caller);
      return;
    }
    let set = this.bySession.get(sessionUri);
    if (!set) this.bySession.set(sessionUri, (set = new Set()));
    set.add(caller);
    if (!this.watched.has(caller)) {
      this.watched.add(caller);
      caller.onClose(() => {
        for (const uri of [...this.bySession.keys()]) this.drop(uri, caller);
      });
    }
  }

  /** Sends a change to the session's followers. */
  send(params: CommentsChangedParams): void {
    for (const caller of this.bySession.get(params.channel) ?? []) caller.notify('comments/changed', params);
  }

  /** The session went: nobody follows it any more. */
  forget(sessionUri: string): void {
    this.bySession.delete(sessionUri);
  }

  private drop(sessionUri: string, caller: Caller): void {
    const set = this.bySession.get(sessionUri);
    if (!set) return;
    set.delete(caller);
    if (set.size === 0) this.bySession.delete(sessionUri);
  }
}
