/**
 * Following the commits of a workspace repository while sessions record in
 * it. When HEAD moves to a new commit (the user commits; an agent's `git
 * commit` is taken once its turn has ended, so the record holds its lines),
 * the lines the commit added are attributed from the record
 * (`commit-attribution.ts`), the turns whose lines landed are linked to the
 * commit in their session's store (`commit-links.ts`), and with `--notes`
 * the commit gets its authorship log under `refs/notes/ai`.
 *
 * Rewrites are read from the HEAD reflog and `ORIG_HEAD`, as git leaves
 * them: `commit (amend)` names the commit replaced; after a rebase
 * (`rebase (finish)`) each new commit is paired with the old one it was
 * picked from by the same author line and message (a plain rebase keeps
 * both). Such a commit's log is the record's attribution plus the replaced
 * commit's log carried onto its content; the replaced commit's note is
 * removed when this server wrote it. Nothing is done while a rebase is in
 * progress: its commits are taken once it finishes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GitRepositoryLocation } from '../snapshot/index.js';
import { resolveRef } from '../snapshot/index.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { ObjectStore } from '../store/types.js';
import { DirectoryWatcher } from '../watch/directory-watcher.js';
import { SerialQueue } from '../serial-queue.js';
import { attributeCommit, type CommitAttribution, type LineProvenance } from './commit-attribution.js';
import { blobLines, readCommit } from './commit-lines.js';
import { addCommitLink, commitLinksOf, saveCommitLinks, showCommitLinks, type StoredCommitLink, type StoredCommitLinks } from './commit-links.js';
import { AuthorshipLogError, parseAuthorshipLog, serializeAuthorshipLog } from './notes-format.js';
import { authorshipLogOf, type CarriedLog } from './notes-log.js';
import { readNote, writeNotes } from './notes-write.js';
import { lookupPath } from '../changes/tree-lookup.js';
import type { TreeReader } from '../store/tree.js';
import type { TurnRecord } from '../session/turn-record.js';
import { formatChangesetUri } from '../../protocol/index.js';
import { isInsideDir } from '../paths.js';

/** Most commits of a rebase followed at once. */
const MAX_REWRITTEN = 200;
/** Most files of a turn whose attribution is worked out ahead of a commit. */
const WARM_FILES = 50;
/** How often HEAD is read when no watcher event came (a repository whose `.git` is outside the watched folder). */
const POLL_MS = 2000;

/** Options of {@link CommitTracker}. */
interface CommitTrackerOptions {
  repo: GitRepositoryLocation;
  provenance: LineProvenance;
  /** Attach authorship notes (`serve --notes`). */
  notes: boolean;
  /** Paths whose events are not the repository's (the state directory). */
  ignore: readonly string[];
  log: (line: string) => void;
  /** Called after each commit is handled (tests and benchmarks wait on it). */
  onCommit?: (handled: HandledCommit) => void;
}

/** What was done for one commit. */
interface HandledCommit {
  attribution: CommitAttribution;
  /** The commit it replaced (amend, rebase), when it was one. */
  replaced?: string;
  /** The note attached, when `--notes` wrote one. */
  note?: string;
}

/** One new commit to handle, and the commit it replaced when it is a rewrite. */
interface NewCommit {
  oid: string;
  replaced?: string;
}

/** Follows HEAD of one repository for the sessions recording in it. */
class CommitTracker {
  private readonly sessions: RecordingSession[] = [];
  private readonly queue = new SerialQueue();
  private readonly stops: (() => void)[] = [];
  private watcher: DirectoryWatcher | undefined;
  private poller: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private head: string | undefined;
  private readonly handled = new Set<string>();
  private closed = false;
  /**
   * Turns whose end the session announced, or that it had when it was
   * followed. A turn that is no longer active but not announced yet is still
   * being ended: its end snapshot may be taken, but its row is not shown yet,
   * so a link made then would not show on it.
   */
  private readonly announced = new WeakSet<TurnRecord>();
  /** Settles when the tracker closes: a commit waiting for a turn to end stops waiting. */
  private readonly closing: Promise<void>;
  private closeNow: () => void = () => undefined;

  constructor(private readonly opts: CommitTrackerOptions) {
    this.head = resolveRef(opts.repo, 'HEAD');
    this.closing = new Promise<void>((resolve) => (this.closeNow = resolve));
  }

  get repo(): GitRepositoryLocation {
    return this.opts.repo;
  }

  /** Follows commits for this session too; the first session starts the watch. */
  add(session: RecordingSession): void {
    if (this.sessions.includes(session)) return;
    this.sessions.push(session);
    // Its turns so far have ended (a turn an ended session never finished included), but an active one.
    for (const turn of session.turns) if (turn.id !== session.activeTurnId) this.announced.add(turn);
    // What a commit will ask about the files a turn changed is worked out once the turn ends, in the background.
    const warm = session.onTurnEnded((turn) => {
      this.announced.add(turn);
      void this.queue.run(() => this.warm(session, turn)).catch(() => undefined);
    });
    const gone = session.onDisposed(() => {
      warm.dispose();
      gone.dispose();
    });
    if (this.sessions.length === 1) this.watch(session.files.root(this.rootOf(session)).dir);
  }

  /** Stops following for this session; true when no session is left. */
  remove(session: RecordingSession): boolean {
    const i = this.sessions.indexOf(session);
    if (i >= 0) this.sessions.splice(i, 1);
    return this.sessions.length === 0;
  }

  /** Stops watching; resolves once a commit being handled is done. */
  async close(): Promise<void> {
    this.closed = true;
    this.closeNow();
    for (const stop of this.stops.splice(0)) stop();
    if (this.watcher) void this.watcher.release();
    this.watcher = undefined;
    if (this.poller) clearInterval(this.poller);
    if (this.timer) clearTimeout(this.timer);
    await this.queue.run(async () => undefined);
  }

  /** Reads HEAD now and handles a new commit (what the watcher does on its own). */
  check(): Promise<void> {
    return this.queue.run(() => this.checkNow());
  }

  private watch(dir: string): void {
    const gitDir = this.opts.repo.gitDir;
    const commonDir = this.opts.repo.commonDir;
    const watcher = DirectoryWatcher.acquire(dir, { ignore: this.opts.ignore });
    this.watcher = watcher;
    this.stops.push(
      watcher.onEvents((events) => {
        for (const e of events) {
          const inRepo = e.path.startsWith(`${gitDir}/`) || e.path.startsWith(`${commonDir}/`);
          if (inRepo && !e.path.includes('/objects/')) return this.schedule();
        }
      }),
    );
    this.poller = setInterval(() => this.schedule(), POLL_MS);
    this.poller.unref();
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check().catch((error: unknown) => this.opts.log(`could not follow a commit: ${(error as Error).message}`));
    }, 5);
  }

  private async checkNow(): Promise<void> {
    if (this.closed) return;
    const repo = this.opts.repo;
    // A rebase, merge or cherry-pick in progress: its commits are taken once it is done.
    if (['rebase-merge', 'rebase-apply', 'MERGE_HEAD', 'CHERRY_PICK_HEAD'].some((name) => existsSync(join(repo.gitDir, name)))) return;
    const head = resolveRef(repo, 'HEAD');
    if (head === undefined || head === this.head) return;
    const previous = this.head;
    // The record must hold what an agent's commit holds: wait for the turns being recorded to end.
    // (A turn being ended is no longer active, and has its end snapshot before its end is complete:
    // it counts until the session announces its end, which is when its row shows.)
    const active = this.sessions.filter((s) => !s.isDisposed && (s.activeTurnId !== undefined || this.beingEnded(s)));
    await Promise.race([Promise.all(active.map(turnEndedOrClosed)), this.closing]);
    if (this.closed) return;
    this.head = head;
    const store = this.store();
    if (!store) return;
    for (const commit of await this.newCommits(store, previous, head)) {
      if (this.handled.has(commit.oid)) continue;
      this.handled.add(commit.oid);
      await this.handle(commit);
    }
  }

  /** Whether the session's last turn has ended but its end is not announced yet. */
  private beingEnded(session: RecordingSession): boolean {
    const last = session.turns[session.turns.length - 1];
    return last !== undefined && !this.announced.has(last);
  }

  private store(): ObjectStore | undefined {
    const session = this.sessions.find((s) => !s.isDisposed);
    return session && this.sourceOf(session).store;
  }

  /** The working directory of a session inside this repository. */
  private rootOf(session: RecordingSession): number {
    return Math.max(
      0,
      session.files.list().findIndex((r) => r.repository?.gitDir === this.opts.repo.gitDir),
    );
  }

  /** The cached reads of the session's working directory inside this repository (they read its objects in place). */
  private sourceOf(session: RecordingSession): { store: ObjectStore; reader: TreeReader } {
    return session.files.source(this.rootOf(session));
  }

  /** The commits HEAD's move from `previous` to `head` made, oldest first. */
  private async newCommits(store: ObjectStore, previous: string | undefined, head: string): Promise<NewCommit[]> {
    const last = lastReflogEntry(this.opts.repo);
    const commit = await readCommit(store, head);
    if (last?.message.startsWith('commit (amend)') && last.newOid === head && last.oldOid !== head) return [{ oid: head, replaced: last.oldOid }];
    // A merge commit's diff against its first parent is the other branch's lines: the standard lets it go without a log.
    if (commit.parents.length > 1) return [];
    if (previous === undefined ? commit.parents.length === 0 : commit.parents[0] === previous) return [{ oid: head }];
    // `rebase (finish)`, or `pull --rebase (finish)` when a pull rebased.
    if (last && /(^|\s)rebase\b/.test(last.message) && last.newOid === head) {
      const origHead = readFileText(join(this.opts.repo.gitDir, 'ORIG_HEAD'))?.trim() ?? previous;
      if (origHead) return this.rebased(store, origHead, head);
    }
    return [];
  }

  /** The commits a rebase made, each paired with the commit it was picked from (same author line and message). */
  private async rebased(store: ObjectStore, oldTip: string, newTip: string): Promise<NewCommit[]> {
    const oldChain = await firstParents(store, oldTip, MAX_REWRITTEN);
    const newChain = await firstParents(store, newTip, MAX_REWRITTEN);
    const newSet = new Set(newChain.map((c) => c.oid));
    const oldSet = new Set(oldChain.map((c) => c.oid));
    const olds = oldChain.filter((c) => !newSet.has(c.oid));
    const out: NewCommit[] = [];
    for (const c of newChain) {
      if (oldSet.has(c.oid)) break;
      const from = olds.find((o) => o.authorLine === c.authorLine && o.message === c.message);
      if (from) out.push({ oid: c.oid, replaced: from.oid });
    }
    return out.reverse();
  }

  private async handle(commit: NewCommit): Promise<void> {
    const sessions = this.sessions.filter((s) => !s.isDisposed).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
    if (sessions.length === 0) return;
    const source = this.sourceOf(sessions[0]!);
    const attribution = await attributeCommit({ workTree: this.opts.repo.workTree, sessions, provenance: this.opts.provenance, source }, commit.oid);
    // Asked before the links change: the replaced commit's link goes with them.
    const ours = this.opts.notes && commit.replaced !== undefined && (await this.notedByUs(commit.replaced, sessions));
    const handled: HandledCommit = { attribution, ...(commit.replaced ? { replaced: commit.replaced } : {}) };
    // Each session whose turns wrote lines of the commit shows the link at once, and keeps it once the note is written.
    const bySession = new Map<string, Record<string, number>>();
    for (const { author, lines } of attribution.turns) {
      const turns = bySession.get(author.session) ?? {};
      turns[author.turnId] = lines;
      bySession.set(author.session, turns);
    }
    const links: { session: RecordingSession; link: StoredCommitLink; stored: StoredCommitLinks }[] = [];
    for (const session of sessions) {
      const turns = bySession.get(session.uri);
      if (!turns) continue;
      const link: StoredCommitLink = { oid: attribution.commit.oid, summary: attribution.commit.summary, at: attribution.commit.at, turns };
      links.push({ session, link, stored: await addCommitLink(session, commit.replaced, link) });
    }
    if (this.opts.notes) {
      const store = source.store;
      const carried = commit.replaced ? await this.carried(store, source.reader, commit.replaced) : undefined;
      const log = authorshipLogOf(attribution, sessions, carried);
      if (log) {
        const text = serializeAuthorshipLog(log);
        const result = await writeNotes(this.opts.repo, store, new Map([[commit.oid, text]]), ours ? [commit.replaced!] : []);
        if (result.written.includes(commit.oid)) {
          for (const { link } of links) link.noted = true;
          handled.note = text;
        } else if (result.skipped.includes(commit.oid)) {
          this.opts.log(`commit ${commit.oid.slice(0, 7)} already has a note under refs/notes/ai; it was left as it was`);
        }
      }
    }
    for (const { session, stored } of links) await saveCommitLinks(session, stored);
    this.opts.onCommit?.(handled);
  }

  /**
   * Asks the provenance engine about the text files the turn changed inside
   * this repository (its first {@link WARM_FILES}) as of the turn's end, so
   * the engine holds their answers when a commit asks the same.
   */
  private async warm(session: RecordingSession, turn: TurnRecord): Promise<void> {
    if (this.closed || session.isDisposed || !turn.after) return;
    const changeset = formatChangesetUri({ sessionId: session.id, kind: 'turn', turnId: turn.id });
    const changes = (await session.turnChanges(turn)).filter((c) => c.after?.mode.startsWith('100') && isInsideDir(this.opts.repo.workTree, c.absPath));
    for (const change of changes.slice(0, WARM_FILES)) {
      if (this.closed || session.isDisposed || session.turns[session.turns.length - 1] !== turn) return;
      await this.opts.provenance({ session: session.uri, path: change.absPath, changeset, side: 'after' }).catch(() => undefined);
    }
  }

  /** Whether this server attached the note of `commit` (a session keeps that with the link). */
  private async notedByUs(commit: string, sessions: readonly RecordingSession[]): Promise<boolean> {
    for (const s of sessions) if ((await commitLinksOf(s)).commits.some((c) => c.oid === commit && c.noted)) return true;
    return false;
  }

  /** The replaced commit's log and the lines of the files it names, when it has a log this server can read. */
  private async carried(store: ObjectStore, reader: TreeReader, replaced: string): Promise<CarriedLog | undefined> {
    const text = await readNote(this.opts.repo, store, replaced);
    if (text === undefined) return undefined;
    try {
      const log = parseAuthorshipLog(text);
      const tree = (await readCommit(store, replaced)).tree;
      const lines = new Map<string, string[]>();
      for (const f of log.files) {
        const entry = await lookupPath(reader, tree, f.path);
        if (entry?.mode.startsWith('100')) lines.set(f.path, blobLines((await store.readObject(entry.oid)).content));
      }
      return { log, lines };
    } catch (error) {
      if (error instanceof AuthorshipLogError) {
        this.opts.log(`the note of ${replaced.slice(0, 7)} is not an authorship log this server reads (${error.message}); not carried`);
        return undefined;
      }
      throw error;
    }
  }
}

/** Settles when the session's active turn ends, or the session goes. */
function turnEndedOrClosed(session: RecordingSession): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      ended.dispose();
      disposed.dispose();
      resolve();
    };
    const ended = session.onTurnEnded(done);
    const disposed = session.onDisposed(done);
  });
}

/** The last line of the HEAD reflog. */
function lastReflogEntry(repo: GitRepositoryLocation): { oldOid: string; newOid: string; message: string } | undefined {
  const text = readFileText(join(repo.gitDir, 'logs', 'HEAD'));
  if (!text) return undefined;
  const lines = text.trimEnd().split('\n');
  const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) [^\t]*\t(.*)$/.exec(lines[lines.length - 1] ?? '');
  return m ? { oldOid: m[1]!, newOid: m[2]!, message: m[3]! } : undefined;
}

/** A commit and up to `limit - 1` of its first-parent ancestors, newest first. */
async function firstParents(store: ObjectStore, tip: string, limit: number): Promise<Awaited<ReturnType<typeof readCommit>>[]> {
  const out = [];
  let oid: string | undefined = tip;
  while (oid && out.length < limit) {
    let c;
    try {
      c = await readCommit(store, oid);
    } catch {
      break; // a shallow clone's boundary
    }
    out.push(c);
    oid = c.parents[0];
  }
  return out;
}

function readFileText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Options of {@link CommitTrackers}: those of each tracker but its repository. */
type CommitTrackersOptions = Omit<CommitTrackerOptions, 'repo'>;

/**
 * One {@link CommitTracker} per repository the sessions record in, each
 * started with its first session and stopped with its last.
 */
export class CommitTrackers {
  private readonly byRepo = new Map<string, CommitTracker>();

  constructor(private readonly opts: CommitTrackersOptions) {}

  /** Shows the session's stored commit links on its turns and follows the commits of its repositories. */
  attach(session: RecordingSession): void {
    void commitLinksOf(session)
      .then((stored) => showCommitLinks(session, stored))
      .catch((error: unknown) => this.opts.log(`could not read the commits of session ${session.id}: ${(error as Error).message}`));
    for (const root of session.files.list()) {
      const repo = root.repository;
      if (!repo) continue;
      let tracker = this.byRepo.get(repo.gitDir);
      if (!tracker) {
        tracker = new CommitTracker({ ...this.opts, repo });
        this.byRepo.set(repo.gitDir, tracker);
      }
      const t = tracker;
      t.add(session);
      const gone = session.onDisposed(() => {
        gone.dispose();
        if (t.remove(session) && this.byRepo.get(repo.gitDir) === t) {
          this.byRepo.delete(repo.gitDir);
          void t.close();
        }
      });
    }
  }

  /** Reads HEAD of every repository followed now and handles a new commit (what the watchers do on their own). */
  async check(): Promise<void> {
    await Promise.all([...this.byRepo.values()].map((t) => t.check()));
  }

  /** Stops every tracker, after the commits being handled. */
  async close(): Promise<void> {
    const trackers = [...this.byRepo.values()];
    this.byRepo.clear();
    await Promise.all(trackers.map((t) => t.close()));
  }
}
