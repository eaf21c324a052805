/**
 * The review comments of the session on screen: listed with `follow` when
 * the session opens (again after a reconnect), kept up to date by the
 * server's `comments/changed`, so a comment the agent resolves flips
 * without a reload. Also the one comment being written: where it goes and
 * its text, kept here so a redraw of the page loses neither.
 */
import type { URI } from '../../../protocol/index.js';
import type { CommentsChangedParams, LinesAnchor, ReviewComment } from '../../../protocol/extensions/comments.js';
import type { App } from '../app.js';
import { h } from '../dom.js';

/** The comment being written: on lines of a file, or on a whole turn. */
export type Draft =
  | { kind: 'lines'; fileId: string; path: string; side: 'before' | 'after'; startLine: number; endLine: number }
  | { kind: 'turn'; turnId: string; turn: number };

/** A line comment placed on the file the page shows: the side and lines it sits on there. */
export interface Placed {
  comment: ReviewComment;
  side: 'before' | 'after';
  startLine: number;
  endLine: number;
  /** Its lines are gone: shown with the code it pointed at. */
  outdated: boolean;
  /** Shown first in the file: outdated, in a view of the files as they are now (its lines are not there). */
  atTop?: boolean;
}

const stores = new WeakMap<App, CommentStore>();

/** The comment store of a page (one per page: the review page and the toolbar share it). */
export function commentsOf(app: App): CommentStore {
  let store = stores.get(app);
  if (!store) stores.set(app, (store = new CommentStore(app)));
  return store;
}

export class CommentStore {
  private channel: URI | undefined;
  private readonly byId = new Map<string, ReviewComment>();
  /** Grows with every change: the page's rows depend on it. */
  version = 0;
  draft: Draft | undefined;
  /** The draft's text box, one element kept across redraws (its text, caret and focus survive them). */
  readonly textarea = h('textarea', {
    class: 'comment-text',
    rows: '3',
    'aria-label': 'Comment',
    placeholder: 'Leave a comment for the agent',
    'data-focus-key': 'comment-draft',
  });
  private saving = false;
  /** The text box takes the focus once it is drawn. */
  focusPending = false;

  constructor(private readonly app: App) {
    app.client.on('notification', ({ method, params }) => {
      if (method !== 'comments/changed') return;
      const change = params as CommentsChangedParams;
      if (change.channel !== this.channel) return;
      if (change.comment) this.byId.set(change.comment.id, change.comment);
      if (change.deleted !== undefined) this.byId.delete(change.deleted);
      this.changed();
    });
    app.client.on('resynced', () => {
      if (this.channel) void this.load(this.channel);
    });
    this.textarea.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        void this.save();
      } else if (event.key === 'Escape') {
        event.preventDefault();
        this.cancel();
      }
      event.stopPropagation();
    });
  }

  /** Follows the comments of the session on screen; called on every draw (cheap when the session is the same). */
  follow(session: URI | undefined): void {
    if (session === this.channel) return;
    this.channel = session;
    this.byId.clear();
    this.draft = undefined;
    this.changed();
    if (session) void this.load(session);
  }

  private async load(channel: URI): Promise<void> {
    try {
      const { comments } = await this.app.client.request('comments/list', { channel, state: 'all', follow: true });
      if (channel !== this.channel) return;
      this.byId.clear();
      for (const c of comments) this.byId.set(c.id, c);
      this.changed();
    } catch {
      // A server without comments: the page shows none.
    }
  }

  private changed(): void {
    this.version++;
    this.app.invalidate('diff', 'toolbar', 'turns');
  }

  /** Every comment of the session, oldest first. */
  all(): ReviewComment[] {
    return [...this.byId.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  /** How many comments are open, in the session or on one file (by its path now or as written). */
  openCount(path?: string): number {
    let n = 0;
    for (const c of this.byId.values()) {
      if (c.state !== 'open') continue;
      if (path === undefined) n++;
      else if (c.anchor.kind === 'lines' && (c.now ? c.now.path : c.anchor.path) === path) n++;
    }
    return n;
  }

  /** The comments on a whole turn. */
  onTurn(turnId: string): ReviewComment[] {
    return this.all().filter((c) => c.anchor.kind === 'turn' && c.anchor.turnId === turnId);
  }

  /**
   * The line comments to show on a file of the open changeset: in a view of
   * the files as they are now (the session's changeset) at the lines they
   * sit on now, outdated ones with their code; in the changeset a comment
   * was written on, at the lines it was written on.
   */
  placedOn(path: string): Placed[] {
    const open = this.app.open;
    if (!open) return [];
    const current = open.changeKind === 'session';
    const placed: Placed[] = [];
    for (const comment of this.all()) {
      const anchor = comment.anchor;
      if (anchor.kind !== 'lines') continue;
      if (current && comment.now) {
        if (comment.now.path === path) placed.push({ comment, side: 'after', startLine: comment.now.startLine, endLine: comment.now.endLine, outdated: false });
      } else if (anchor.changeset === open.uri || (current && comment.now === null)) {
        const outdated = comment.now === null;
        if (anchor.path === path)
          placed.push({ comment, side: anchor.side, startLine: anchor.startLine, endLine: anchor.endLine, outdated, atTop: outdated && current });
      }
    }
    return placed;
  }

  /** Opens the box for a comment on a line; with `extend`, stretches the open box of the same file and side to it. */
  startOnLine(fileId: string, path: string, side: 'before' | 'after', line: number, extend: boolean): void {
    const d = this.draft;
    if (extend && d?.kind === 'lines' && d.fileId === fileId && d.side === side) {
      this.draft = { ...d, startLine: Math.min(d.startLine, line), endLine: Math.max(d.endLine, line) };
    } else {
      if (d === undefined || d.kind !== 'lines' || d.fileId !== fileId) this.textarea.value = '';
      this.draft = { kind: 'lines', fileId, path, side, startLine: line, endLine: line };
    }
    this.changed();
    this.focusPending = true;
  }

  /** Opens the box for a comment on a whole turn. */
  startOnTurn(turnId: string, turn: number): void {
    this.textarea.value = '';
    this.draft = { kind: 'turn', turnId, turn };
    this.changed();
    this.focusPending = true;
  }

  cancel(): void {
    this.draft = undefined;
    this.textarea.value = '';
    this.changed();
  }

  /** Saves the comment being written. */
  async save(): Promise<void> {
    const draft = this.draft;
    const open = this.app.open;
    const channel = this.channel;
    const body = this.textarea.value.trim();
    if (!draft || !channel || this.saving) return;
    if (body === '') {
      this.app.say({ tone: 'error', text: 'Write something before saving the comment.' });
      return;
    }
    let anchor: LinesAnchor | { kind: 'turn'; turnId: string };
    if (draft.kind === 'lines') {
      if (!open) return;
      anchor = { kind: 'lines', changeset: open.uri, path: draft.path, side: draft.side, startLine: draft.startLine, endLine: draft.endLine };
    } else anchor = { kind: 'turn', turnId: draft.turnId };
    this.saving = true;
    try {
      const comment = await this.app.client.request('comments/add', { channel, anchor, body });
      this.byId.set(comment.id, comment);
      this.draft = undefined;
      this.textarea.value = '';
      this.changed();
    } catch (error) {
      this.app.say({ tone: 'error', text: `Could not save the comment: ${(error as Error).message}` });
    } finally {
      this.saving = false;
    }
  }

  /** Resolves, reopens or deletes a comment. */
  async act(comment: ReviewComment, action: 'resolve' | 'reopen' | 'delete'): Promise<void> {
    const channel = this.channel;
    if (!channel) return;
    try {
      if (action === 'delete') {
        await this.app.client.request('comments/delete', { channel, id: comment.id });
        this.byId.delete(comment.id);
      } else {
        const updated = await this.app.client.request(action === 'resolve' ? 'comments/resolve' : 'comments/reopen', { channel, id: comment.id });
        this.byId.set(updated.id, updated);
      }
      this.changed();
    } catch (error) {
      const verb = action === 'resolve' ? 'resolve' : action === 'reopen' ? 'reopen' : 'delete';
      this.app.say({ tone: 'error', text: `Could not ${verb} the comment: ${(error as Error).message}` });
    }
  }
}
