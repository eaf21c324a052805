/**
 * Review comments: the `comments/*` methods, each session's comments kept
 * in its store (`comment-store.ts`), their lines found again in the file's
 * current version after every turn and operation (`anchoring.ts`), and
 * `comments/changed` sent to the connections that follow them
 * (`followers.ts`). `service.ts` attaches every session and registers the
 * methods.
 */
import { AhpErrorCodes, type CommentPosition, type ListCommentsParams, type ReviewComment } from '../../protocol/index.js';
import type { Changesets } from '../changesets/changesets.js';
import { DomainError, notFound } from '../domain-error.js';
import type { Caller, MethodTable } from '../method-table.js';
import { SerialQueue } from '../serial-queue.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import { anchorLines, currentFile, locateLines } from './anchoring.js';
import { readComments, writeComments } from './comment-store.js';
import { CommentFollowers } from './followers.js';
import { checkAddComment, checkCommentRef, checkListComments, checkResolveComment } from './params.js';
import { cleanAnchor, type StoredComment, type StoredComments } from './stored.js';

/** Where a line comment's lines were last found, and in which version of the file (`path` and blob id). */
interface Placed {
  file: string;
  now: CommentPosition | null;
}

/** One session's comments in memory: what the store holds, and where each line comment was last found. */
class SessionComments {
  readonly queue = new SerialQueue();
  readonly placed = new Map<string, Placed>();
  constructor(public stored: StoredComments) {}
}

export class Comments {
  private readonly loaded = new Map<string, Promise<SessionComments>>();
  private readonly followers = new CommentFollowers();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly sessions: SessionManager,
    private readonly changesets: Changesets,
  ) {}

  /** Follows a session: after each turn and each operation its comments' lines are found again and followers told what moved. */
  attach(session: RecordingSession): void {
    session.onTurnEnded(() => this.track(this.refresh(session)));
    session.onUserAction(() => this.track(this.refresh(session)));
    session.onDisposed(() => {
      this.loaded.delete(session.uri);
      this.followers.forget(session.uri);
    });
  }

  /** Resolves once every write and refresh started so far has finished (before the stores close). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  methods(): MethodTable {
    return {
      'comments/add': {
        request: (params) =>
          this.change(params.channel, async (session, sc) => {
            const anchor = cleanAnchor(params.anchor);
            const comment: StoredComment = {
              id: String(sc.stored.next),
              anchor,
              body: params.body,
              author: params.author ?? 'you',
              createdAt: Date.now(),
              state: 'open',
            };
            if (anchor.kind === 'turn') {
              const turn = session.turn(anchor.turnId);
              if (!turn) throw notFound(`the session has no turn with the id ${JSON.stringify(anchor.turnId)}`);
              comment.turn = turn.index;
            } else {
              const lines = await anchorLines(this.changesets, session, anchor);
              if (lines.turn !== undefined) comment.turn = lines.turn;
              comment.code = lines.code;
              comment.target = lines.target;
            }
            return { stored: { v: 1, next: sc.stored.next + 1, comments: [...sc.stored.comments, comment] }, comment };
          }),
        check: checkAddComment,
      },
      'comments/list': {
        request: (params, caller) => this.list(params, caller),
        check: checkListComments,
      },
      'comments/resolve': {
        request: (params) =>
          this.change(params.channel, async (_session, sc) => {
            const found = find(sc, params.id);
            const comment: StoredComment = {
              ...found,
              state: 'resolved',
              resolution: { by: params.by ?? 'reviewer', at: Date.now(), ...(params.note !== undefined ? { note: params.note } : {}) },
            };
            return { stored: replaced(sc.stored, comment), comment };
          }),
        check: checkResolveComment,
      },
      'comments/reopen': {
        request: (params) =>
          this.change(params.channel, async (_session, sc) => {
            const { resolution: _, ...open } = find(sc, params.id);
            const comment: StoredComment = { ...open, state: 'open' };
            return { stored: replaced(sc.stored, comment), comment };
          }),
        check: checkCommentRef,
      },
      'comments/delete': {
        request: async (params) => {
          const session = this.sessions.require(params.channel);
          const sc = await this.load(session);
          await this.track(
            sc.queue.run(async () => {
              const gone = find(sc, params.id);
              if (session.isDisposed) throw new DomainError(AhpErrorCodes.SessionNotFound, `no session ${JSON.stringify(session.uri)}`);
              const stored: StoredComments = { ...sc.stored, comments: sc.stored.comments.filter((c) => c.id !== gone.id) };
              await writeComments(session, stored);
              sc.stored = stored;
              sc.placed.delete(gone.id);
              this.followers.send({ channel: session.uri, deleted: gone.id });
            }),
          );
          return null;
        },
        check: checkCommentRef,
      },
    };
  }

  /** The session's comments, oldest first, with where their lines are now; `follow` starts or stops `comments/changed`. */
  private async list(params: ListCommentsParams, caller: Caller): Promise<{ comments: ReviewComment[] }> {
    const session = this.sessions.require(params.channel);
    const sc = await this.load(session);
    if (params.follow !== undefined) this.followers.follow(session.uri, caller, params.follow);
    const state = params.state ?? 'open';
    return sc.queue.run(async () => {
      const out: ReviewComment[] = [];
      for (const c of sc.stored.comments) {
        if (state !== 'all' && c.state !== state) continue;
        const now = await this.place(session, sc, c);
        if (params.path !== undefined && !(c.anchor.kind === 'lines' && (c.anchor.path === params.path || now?.path === params.path))) continue;
        out.push(wire(session, c, now));
      }
      return { comments: out };
    });
  }

  /** Changes one comment in the session's queue: stored first, then in memory, then told to followers. */
  private async change(
    channel: string,
    edit: (session: RecordingSession, sc: SessionComments) => Promise<{ stored: StoredComments; comment: StoredComment }>,
  ): Promise<ReviewComment> {
    const session = this.sessions.require(channel);
    const sc = await this.load(session);
    return this.track(
      sc.queue.run(async () => {
        const { stored, comment } = await edit(session, sc);
        // A session forgotten meanwhile keeps nothing: no ref is written back under its name.
        if (session.isDisposed) throw new DomainError(AhpErrorCodes.SessionNotFound, `no session ${JSON.stringify(session.uri)}`);
        await writeComments(session, stored);
        sc.stored = stored;
        const result = wire(session, comment, await this.place(session, sc, comment, false));
        this.followers.send({ channel: session.uri, comment: result });
        return result;
      }),
    );
  }

  /**
   * Where a line comment's lines are in the file's current version (cached
   * while that version stays the same); followers are told when that
   * changed since they last saw it, unless `tell` is false.
   */
  private async place(session: RecordingSession, sc: SessionComments, c: StoredComment, tell = true): Promise<CommentPosition | null | undefined> {
    if (c.anchor.kind !== 'lines' || !c.target || !c.code) return undefined;
    const current = await currentFile(session, c.target).catch(() => ({ path: c.target!.path, oid: undefined }));
    const file = `${current.oid ?? 'gone'} ${current.path}`;
    const before = sc.placed.get(c.id);
    if (before && before.file === file) return before.now;
    const now = await locateLines(session, c.target, c.anchor, c.code, current).catch(() => null);
    sc.placed.set(c.id, { file, now });
    if (tell && before && !samePosition(before.now, now)) this.followers.send({ channel: session.uri, comment: wire(session, c, now) });
    return now;
  }

  /** After a turn or an operation: finds every line comment's lines again, telling followers what moved or became outdated. */
  private async refresh(session: RecordingSession): Promise<void> {
    const loading = this.loaded.get(session.uri);
    if (!loading) return;
    const sc = await loading;
    await sc.queue.run(async () => {
      for (const c of sc.stored.comments) if (!session.isDisposed) await this.place(session, sc, c);
    });
  }

  private load(session: RecordingSession): Promise<SessionComments> {
    let loading = this.loaded.get(session.uri);
    if (!loading) {
      loading = readComments(session).then((stored) => new SessionComments(stored));
      this.loaded.set(session.uri, loading);
      // A failed read is tried again by the next request.
      loading.catch(() => this.loaded.delete(session.uri));
    }
    return loading;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.then(
      () => this.pending.delete(work),
      () => this.pending.delete(work),
    );
    return work;
  }
}

function find(sc: SessionComments, id: string): StoredComment {
  const wanted = id.replace(/^#/, '');
  const found = sc.stored.comments.find((c) => c.id === wanted);
  if (!found) throw notFound(`the session has no comment #${wanted}`);
  return found;
}

function replaced(stored: StoredComments, comment: StoredComment): StoredComments {
  return { ...stored, comments: stored.comments.map((c) => (c.id === comment.id ? comment : c)) };
}

function samePosition(a: CommentPosition | null, b: CommentPosition | null): boolean {
  return a === b || (a !== null && b !== null && a.path === b.path && a.startLine === b.startLine && a.endLine === b.endLine);
}

/** The comment as clients see it. */
function wire(session: RecordingSession, c: StoredComment, now: CommentPosition | null | undefined): ReviewComment {
  const { target: _, ...rest } = c;
  return { ...rest, channel: session.uri, ...(now !== undefined ? { now } : {}) };
}
