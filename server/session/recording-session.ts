import { EventEmitter } from 'node:events';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { chatUri as toChatUri, SessionStatus, sessionUri as toSessionUri, type ChatState, type SessionState, type StateAction } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/index.js';
import { captureFile, DEFAULT_CAPTURE_MAX_BYTES } from '../changes/capture.js';
import { LeftWorkingDirectoryError } from '../disk/contained-read.js';
import { countChanges, recordChangeEntries } from '../changes/change-entries.js';
import { collectTreeChanges, type RootSource, type RootTrees } from '../changes/collect-changes.js';
import { classify, type FileChange } from '../changes/file-change.js';
import { statsOf, type FileStats } from '../changes/file-stats.js';
import { detectRenames } from '../changes/renames.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { isInsideDir, toSlashes } from '../paths.js';
import { OutsideWorkingDirectoriesError, realPathInside } from '../containment.js';
import { unreadFiles } from '../snapshot/index.js';
import { CachingReads } from '../store/caching-reads.js';
import { TreeReader } from '../store/tree.js';
import { displayPathBytes } from '../path-bytes.js';
import { displayPath } from './display-path.js';
import { SerialQueue } from '../serial-queue.js';
import { recordStep } from './step-recorder.js';
import { SessionJournal, type LoadedSession, type SafetyDetails } from './session-journal.js';
import { initialChatState, initialSessionState, restoredChatState } from './session-state.js';
import { treesWithWrites, type WrittenFile } from './settled-trees.js';
import { SessionTimeline, sessionTitle, type UserAction } from './timeline.js';
import type { CaptureRecord, TurnEndState, TurnRecord } from './turn-record.js';
import { DEFAULT_MAX_FILES, summarizeTurn, type ChangedFileSummary, type TurnSummary } from './turn-summary.js';
import { ulid } from '../ulid.js';
import { WorkspaceRoot } from './workspace-root.js';
import { SessionError } from './session-error.js';

/** How to create a recording session. */
export interface RecordingSessionOptions {
  /** Session id (the path of `ahp-session:/<id>`); a ULID when omitted. */
  id?: string;
  /** Working directories, the first being the session's default. */
  workingDirectories: readonly string[];
  /** State directory holding the stores. */
  stateDir: string;
  /** The channel store the session's state lives in. */
  channels: ChannelStore;
  /** Session title; the first directory's name by default. */
  title?: string;
  /** Most files listed in a turn summary (default 500). */
  maxFiles?: number;
  /** Captured files above this size are listed as oversized (default 2 MiB). */
  captureMaxBytes?: number;
  /** Extra exclude patterns for snapshots. */
  extraExcludes?: readonly string[];
  /** Built-in excludes for non-repository workspaces. */
  builtinExcludes?: boolean | readonly string[];
  /** Byte budget of each working directory's store (2 GiB by default). */
  storeBudgetBytes?: number;
  /** Ended sessions are dropped from the stores this many days after they ended; no age limit by default. */
  retainDays?: number;
  /** Called with snapshot progress during long walks. */
  onProgress?: (done: number, total?: number) => void;
  /** Also called with the progress of the session's first snapshot only (a `createSession` with a `progressToken`). */
  onStartProgress?: (done: number, total?: number) => void;
  /** The agent recording into the session ("Claude Code"), for its title. */
  agent?: string;
  /**
   * What to do when the stores hold this id as ended: `refuse` (default),
   * `archived` (open it for review, recording nothing), `resume` (record
   * into it again).
   */
  ended?: 'refuse' | 'archived' | 'resume';
}

/** A working directory's reads, cached for the session. */
export interface SessionSource extends RootSource {
  store: CachingReads;
}

/** Options of {@link RecordingSession.startTurn}. */
export interface StartTurnOptions {
  /** Turn id; a ULID when omitted. Must be unique within the session. */
  id?: string;
  /** The prompt or description of the turn. */
  message?: string;
  /**
   * Where the turn's starting trees come from: `snapshot` (default) records
   * the workspace now; `previous` reuses the end state of the last turn (or
   * the session's start), for turns noticed only after their first change.
   */
  baseline?: 'snapshot' | 'previous';
  /** Recorded without a harness: the timeline names it by what it touched. */
  automatic?: boolean;
}

/** Options of {@link RecordingSession.endTurn}. */
export interface EndTurnOptions {
  /** How the turn ended (default `complete`). */
  state?: TurnEndState;
  /** Error text for `state: 'error'`. */
  error?: string;
  /** When the first and last file change of the turn were seen (automatic turns), ISO 8601. */
  editSpan?: { from: string; to: string };
}

/** A handle on the active turn. */
export interface TurnHandle {
  readonly id: string;
  /** Captures the named paths before a tool edits them; resolves with the paths captured. */
  beforeEdit(paths: readonly string[], opts?: { tool?: string }): Promise<string[]>;
  /** Ends the turn and resolves with its summary. */
  end(opts?: EndTurnOptions): Promise<TurnSummary>;
}

/** Events a recording session emits. */
export interface RecordingSessionEvents {
  /** A turn ended and its record is complete. */
  turnEnded: [TurnRecord];
  /** The session was disposed. */
  disposed: [];
  /** The session ended (archived): it records no more and stays reviewable. */
  ended: [];
  /** The user did something through an operation. */
  userAction: [UserAction];
  /** Retention dropped these ended sessions from a store this session writes to. */
  retentionDropped: [sessionIds: string[]];
  /** A step failed and was abandoned; the session goes on. */
  warning: [string];
}

/**
 * One recorded session over one or more working directories: a serial queue
 * of turns (baseline snapshot, captures, end snapshot, summary), its session
 * and chat channels, and the trees everything else is derived from.
 */
export class RecordingSession extends EventEmitter<RecordingSessionEvents> {
  readonly uri: string;
  readonly chatUri: string;
  createdAt: string;
  /** The session's history in the stores: what a restart reads back. */
  readonly journal: SessionJournal;
  /** Trees of every working directory when the session began. */
  startTrees: RootTrees[] = [];
  /** Turns in order, ended and active. */
  readonly turns: TurnRecord[] = [];
  private active: TurnRecord | undefined;
  private readonly queue = new SerialQueue();
  private readonly statsCache = new Map<string, FileStats>();
  private readonly turnChangeCache = new WeakMap<TurnRecord, Promise<FileChange[]>>();
  private disposed = false;
  /** When the session ended; undefined while it records. */
  endedAt: string | undefined;
  /** The workspace as the server itself last left it (after an operation wrote files); newer than the last turn's end. */
  private settled: { trees: RootTrees[]; afterTurns: number } | undefined;
  /** The chat and session-state projection clients see. */
  readonly timeline: SessionTimeline;

  private constructor(
    readonly id: string,
    readonly roots: readonly WorkspaceRoot[],
    readonly sources: readonly SessionSource[],
    private readonly opts: RecordingSessionOptions,
  ) {
    super();
    this.uri = toSessionUri(id);
    this.chatUri = toChatUri(id);
    this.createdAt = new Date().toISOString();
    this.journal = new SessionJournal(id, roots);
    this.timeline = new SessionTimeline(opts.channels, this.uri, this.chatUri, {
      dir: roots[0]!.dir,
      createdAt: () => this.createdAt,
      explicitTitle: opts.title !== undefined,
    });
  }

  /**
   * Opens the stores and publishes the session's channels. A session id the
   * stores already hold (and that was not ended) is restored with its turns;
   * otherwise the starting state is recorded.
   */
  static async create(opts: RecordingSessionOptions): Promise<RecordingSession> {
    if (opts.workingDirectories.length === 0) throw new SessionError('invalid', 'a session needs at least one working directory');
    const id = opts.id ?? ulid();
    const roots: WorkspaceRoot[] = [];
    try {
      for (const dir of opts.workingDirectories) {
        roots.push(await WorkspaceRoot.acquire({ dir, stateDir: opts.stateDir, ...snapshotOptions(opts) }));
      }
    } catch (error) {
      await Promise.allSettled(roots.map((r) => r.release()));
      throw error;
    }
    const sources = roots.map((r): SessionSource => {
      const store = new CachingReads(r.store);
      return { dir: r.dir, store, reader: new TreeReader(store) };
    });
    const session = new RecordingSession(id, roots, sources, opts);
    let loaded: LoadedSession | undefined;
    try {
      loaded = opts.id !== undefined ? await session.journal.load() : undefined;
    } catch (error) {
      session.emit('warning', `could not read the stored history of session ${id}: ${(error as Error).message}`);
    }
    const ended = opts.ended ?? 'refuse';
    if (loaded?.ended && ended === 'refuse') {
      await Promise.allSettled(roots.map((r) => r.release()));
      throw new SessionError('conflict', `session ${id} has ended; choose another id`);
    }
    if (loaded) session.createdAt = loaded.details.createdAt;
    if (loaded?.ended && ended === 'archived') session.endedAt = loaded.endedAt ?? new Date().toISOString();
    const agent = opts.agent ?? loaded?.details.agent;
    session.timeline.restore({
      workingDirectories: roots.map((r) => r.dir),
      agent,
      turns: loaded?.turns ?? [],
      userActions: loaded ? await session.userActionsOf() : [],
      endedAt: session.endedAt,
    });
    const init = {
      sessionUri: session.uri,
      chatUri: session.chatUri,
      title: session.timeline.title(opts.title ?? loaded?.details.title ?? sessionTitle({ agent, dir: roots[0]!.dir, createdAt: session.createdAt })),
      workingDirectories: roots.map((r) => r.dir),
      createdAt: session.createdAt,
    };
    const sessionState = initialSessionState(init);
    sessionState._meta = session.timeline.sessionMeta();
    if (session.endedAt) sessionState.status |= SessionStatus.IsArchived;
    opts.channels.createChannel(session.uri, 'session', sessionState);
    opts.channels.createChannel(session.chatUri, 'chat', restoredChatState(initialChatState(init), loaded?.turns ?? []));
    try {
      if (loaded) {
        session.startTrees = loaded.startTrees;
        session.turns.push(...loaded.turns);
        if (loaded.settled) session.settled = loaded.settled;
        // A turn the previous run did not finish (a crash) ends now, as cancelled.
        const unfinished = loaded.turns.find((t) => !t.after);
        if (unfinished && !session.endedAt) {
          session.active = unfinished;
          await session.queue.run(() => session.finishTurn(unfinished, { state: 'cancelled' }));
        }
      } else {
        session.startTrees = await session.snapshotAll(opts.onStartProgress);
        await session.journal.writeSessionStart(session.startTrees, {
          title: init.title,
          createdAt: session.createdAt,
          workingDirectories: init.workingDirectories,
          ...(agent !== undefined ? { agent } : {}),
        });
      }
    } catch (error) {
      session.timeline.dispatchSession({ type: 'session/creationFailed', error: { errorType: 'SnapshotFailed', message: (error as Error).message } });
      await session.close();
      throw error;
    }
    session.timeline.dispatchSession({ type: 'session/ready' });
    return session;
  }

  /** The working directories, as real paths. */
  get workingDirectories(): string[] {
    return this.roots.map((r) => r.dir);
  }

  /** The active turn's id, if one is being recorded. */
  get activeTurnId(): string | undefined {
    return this.active?.id;
  }

  get sessionState(): SessionState {
    return this.timeline.sessionState;
  }

  get chatState(): ChatState {
    return this.timeline.chatState;
  }

  /** True once the session ended: it records no more turns and stays reviewable. */
  get isEnded(): boolean {
    return this.endedAt !== undefined;
  }

  /** The recorded turn with this id (ended or active). */
  turn(id: string): TurnRecord | undefined {
    return this.turns.find((t) => t.id === id);
  }

  /**
   * Starts a turn once its baseline snapshot is recorded. A turn still
   * active is first ended as cancelled.
   */
  startTurn(opts: StartTurnOptions = {}): Promise<TurnHandle> {
    this.assertLive();
    if (opts.id !== undefined && (typeof opts.id !== 'string' || opts.id.length === 0)) {
      return Promise.reject(new SessionError('invalid', 'turnId must be a non-empty string'));
    }
    return this.queue.run(async () => {
      if (this.active) await this.finishTurn(this.active, { state: 'cancelled' });
      const id = opts.id ?? ulid();
      if (this.turn(id)) throw new SessionError('conflict', `turn "${id}" already exists in this session`);
      const record: TurnRecord = {
        id,
        index: this.turns.length + 1,
        startedAt: new Date().toISOString(),
        before: (opts.baseline === 'previous' ? this.previousTrees() : undefined) ?? (await this.snapshotAll()),
        captures: new Map(),
        tools: new Map(),
      };
      if (opts.message !== undefined) record.message = opts.message;
      if (opts.automatic) record.automatic = true;
      await this.journal.writeTurnStart(record);
      this.turns.push(record);
      this.active = record;
      this.timeline.turnStarted(record);
      return this.handle(id);
    });
  }

  /** Captures paths before a tool edits them (see {@link TurnHandle.beforeEdit}). */
  beforeEdit(turnId: string, paths: readonly string[], opts: { tool?: string } = {}): Promise<string[]> {
    this.assertLive();
    const invalid = validatePaths(paths);
    if (invalid) return Promise.reject(new SessionError('invalid', invalid));
    return this.queue.run(async () => {
      const turn = this.requireActive(turnId);
      // Every path is checked before anything is copied: one outside path refuses the whole request.
      const targets = [];
      for (const p of paths) targets.push(await this.editTarget(p));
      await recordStep(
        turn,
        targets.map((t) => t.absPath),
        opts.tool,
        { snapshot: () => this.snapshotAll(), journal: this.journal },
      );
      const captured: string[] = [];
      const addedNow: string[] = [];
      for (const [i, { absPath, skip }] of targets.entries()) {
        if (opts.tool) turn.tools.set(absPath, opts.tool);
        if (skip) continue;
        if (!turn.captures.has(absPath)) {
          const root = this.rootIndexOf(absPath);
          const store = this.roots[Math.max(root, 0)]!.store;
          const before = await captureFile(this.workingDirectories, absPath, store, this.opts.captureMaxBytes ?? DEFAULT_CAPTURE_MAX_BYTES).catch(
            (error: unknown) => {
              if (!(error instanceof LeftWorkingDirectoryError)) throw error;
              // Checked above, but a folder on its way was swapped for a link out since: refused whole, as it would have been then.
              for (const added of addedNow) turn.captures.delete(added);
              throw new OutsideWorkingDirectoriesError(`${paths[i]} resolves outside the session's working directories`);
            },
          );
          turn.captures.set(absPath, { absPath, root, before });
          addedNow.push(absPath);
        }
        captured.push(absPath);
      }
      await Promise.all(this.roots.map((r) => r.store.flush()));
      return captured;
    });
  }

  /** Ends the active turn (see {@link TurnHandle.end}). */
  endTurn(turnId: string, opts: EndTurnOptions = {}): Promise<TurnSummary> {
    this.assertLive();
    if (opts.state !== undefined && !['complete', 'cancelled', 'error'].includes(opts.state)) {
      return Promise.reject(new SessionError('invalid', `state must be complete, cancelled or error, got ${JSON.stringify(opts.state)}`));
    }
    return this.queue.run(async () => this.finishTurn(this.requireActive(turnId), opts));
  }

  /** Snapshots every working directory now (queued behind turns). */
  currentTrees(): Promise<RootTrees[]> {
    return this.queue.run(() => this.snapshotAll());
  }

  /**
   * Drops every turn after `turnId` (all turns when null) from the session
   * and its chat (`chat/truncated`). Only for tasks already running in
   * `exclusive`; the caller records the truncation in the journal.
   */
  dropTurnsAfter(turnId: string | null): TurnRecord[] {
    const keep = turnId === null ? 0 : this.turns.findIndex((t) => t.id === turnId) + 1;
    if (turnId !== null && keep === 0) throw new SessionError('not-found', `no turn "${turnId}" in this session`);
    const dropped = this.turns.splice(keep);
    this.timeline.truncated(turnId, dropped);
    return dropped;
  }

  /** Snapshots every working directory without queueing: only for tasks already running in `exclusive`. */
  snapshotInQueue(): Promise<RootTrees[]> {
    return this.snapshotAll();
  }

  /** Runs a task in the session's serial queue, after every turn step queued before it. */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(task);
  }

  /** The file changes between two recorded states, with renames paired. */
  async changesBetween(before: readonly (RootTrees | undefined)[], after: readonly (RootTrees | undefined)[]): Promise<FileChange[]> {
    const changes = await collectTreeChanges(this.sources, before, after);
    return detectRenames(changes);
  }

  /** Line counts of a change, cached by content. */
  stats(change: FileChange): Promise<FileStats> {
    return statsOf(change, this.statsCache);
  }

  /** The label a reviewer sees for a changed file; `path` is relative to its working directory, or '' when not known. */
  display(change: { absPath: string; root: number; path: string }): string {
    if (this.roots.length > 1 && change.root >= 0) {
      return displayPathBytes(`${basename(this.roots[change.root]!.dir)}/${change.path}`);
    }
    // Inside the working directory the label is the path itself: the same string, not a new copy for every
    // summary, timeline entry and changeset file that shows it.
    if (change.root === 0 && change.path !== '' && sep === '/') return displayPathBytes(change.path);
    const first = this.roots[0]!;
    return displayPath(change.absPath, {
      workingDirectory: first.dir,
      ...(first.repository ? { repositoryRoot: first.repository.workTree } : {}),
    });
  }

  /**
   * Ends recording, not history: an active turn is recorded as cancelled,
   * the stores mark the session ended (retention may drop it later, by
   * budget or age), and the session stays open for review, reverts and
   * restores, flagged `IsArchived`.
   */
  async end(): Promise<void> {
    if (this.disposed || this.endedAt !== undefined) return;
    await this.queue.run(async () => {
      if (this.active) await this.finishTurn(this.active, { state: 'cancelled' });
      await this.journal.markEnded();
    });
    this.endedAt = new Date().toISOString();
    this.timeline.ended(this.endedAt);
    this.emit('ended');
  }

  /** Records into an ended session again (the agent resumed it); the next checkpoint makes it live in the stores. */
  reopen(): void {
    if (this.endedAt === undefined) return;
    this.endedAt = undefined;
    this.timeline.ended(undefined);
  }

  /** Ends the session ({@link end}) and releases it: its channels go away (standalone use, tests). */
  async dispose(): Promise<void> {
    await this.end().catch((error: unknown) => this.emit('warning', `ending the session failed: ${(error as Error).message}`));
    await this.close();
  }

  /**
   * Records what the user did through an operation, after its writes: the
   * timeline shows it as the user's action, and the next turn noticed after
   * the fact starts from the last recorded state plus exactly the files the
   * operation wrote, with the content it wrote, so the server's own writes
   * never become a turn and nothing else is hidden. Only for tasks running
   * in `exclusive`.
   */
  async recordUserAction(action: UserAction, written: boolean, writes: readonly WrittenFile[] = []): Promise<void> {
    if (written) {
      const base = this.previousTrees();
      const sources = this.roots.map((r, i) => ({ dir: r.dir, store: r.store, reader: this.sources[i]!.reader }));
      const edited = base ? await treesWithWrites(sources, base, writes).catch(() => undefined) : undefined;
      if (edited) await Promise.all(this.roots.map((r) => r.store.flush()));
      this.settled = { trees: edited ?? (await this.snapshotAll()), afterTurns: this.turns.length };
      await this.journal.writeSettled(this.settled.trees);
    }
    // A safety checkpoint makes an ended session live in the stores; it is still ended.
    if (this.endedAt !== undefined && written) await this.journal.markEnded();
    this.timeline.userAction(action);
    this.emit('userAction', action);
  }

  /** The state the next turn noticed after the fact starts from: the workspace as last recorded or as an operation left it. */
  get baselineTrees(): RootTrees[] | undefined {
    return this.previousTrees();
  }

  /** User actions read back from the safety checkpoints of a stored session. */
  async userActionsOf(): Promise<UserAction[]> {
    const records = await this.journal.listSafety().catch(() => []);
    return records.map((r) =>
      userActionOf(r.details, r.createdAt, (p) =>
        this.display({ absPath: p.absPath, root: p.root, path: relative(this.roots[Math.max(p.root, 0)]!.dir, p.absPath) }),
      ),
    );
  }

  /**
   * Stops recording without ending the session (a server shutdown): an
   * active turn is recorded as cancelled and the session is restored with
   * its turns the next time it is opened.
   */
  async close(opts: { end?: boolean } = {}): Promise<void> {
    if (this.disposed) return;
    await this.queue
      .run(async () => {
        if (this.active) await this.finishTurn(this.active, { state: 'cancelled' });
        if (opts.end) await this.journal.markEnded();
      })
      .catch((error: unknown) => this.emit('warning', `closing the session failed: ${(error as Error).message}`));
    this.disposed = true;
    await Promise.allSettled(this.roots.map((r) => r.release()));
    this.opts.channels.removeChannel(this.chatUri);
    this.opts.channels.removeChannel(this.uri);
    this.emit('disposed');
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  private handle(id: string): TurnHandle {
    return {
      id,
      beforeEdit: (paths, opts) => this.beforeEdit(id, paths, opts),
      end: (opts) => this.endTurn(id, opts),
    };
  }

  private async finishTurn(turn: TurnRecord, opts: EndTurnOptions): Promise<TurnSummary> {
    const endStartedAt = Date.now();
    const state = opts.state ?? 'complete';
    this.active = undefined;
    const span = opts.editSpan;
    const durationMs = span ? Math.max(0, Date.parse(span.to) - Date.parse(span.from)) : Math.max(0, Date.now() - Date.parse(turn.startedAt));
    turn.durationMs = durationMs;
    if (span) turn.editSpan = { from: span.from, to: span.to };
    turn.state = state;
    if (opts.error) turn.error = opts.error;
    try {
      turn.after = await this.snapshotAll();
      for (const capture of turn.captures.values()) {
        const store = this.roots[Math.max(capture.root, 0)]!.store;
        try {
          capture.after = await captureFile(this.workingDirectories, capture.absPath, store, this.opts.captureMaxBytes ?? DEFAULT_CAPTURE_MAX_BYTES);
        } catch (error) {
          if (!(error instanceof LeftWorkingDirectoryError)) throw error;
          // Nothing at that path is the workspace's any more: recorded as gone, and said so, never read.
          capture.after = undefined;
          capture.leftWorkingDirectory = true;
          const path = toSlashes(relative(this.roots[Math.max(capture.root, 0)]!.dir, capture.absPath));
          this.emit(
            'warning',
            `${this.display({ absPath: capture.absPath, root: capture.root, path })} left the working directory (a folder on its way now links elsewhere): not read at the end of turn ${turn.index}`,
          );
        }
      }
      await Promise.all(this.roots.map((r) => r.store.flush()));
      const changes = await this.turnChanges(turn);
      turn.summary = await this.summarize(turn, changes);
      turn.entries = await recordChangeEntries(changes, {
        turnId: turn.id,
        pathRoots: this.roots.map((r) => r.repository?.workTree ?? r.dir),
        workingDirectories: this.workingDirectories,
        tools: turn.tools,
      });
      turn.counts = countChanges(turn.entries);
      await this.journal.writeTurnEnd(turn);
      for (const root of this.roots) {
        const report = await root.maintain();
        if (report.droppedSessions.length > 0) {
          this.emit(
            'warning',
            `store over its budget: dropped ${report.droppedSessions.length} ended session(s), ${report.sizeBefore} → ${report.sizeAfter} bytes`,
          );
          this.emit(
            'retentionDropped',
            report.droppedSessions.map((s) => s.sessionId),
          );
        }
      }
    } catch (error) {
      // The record of this turn is lost, but the session and the next turn go on.
      const message = `recording turn "${turn.id}" failed: ${(error as Error).message}`;
      this.emit('warning', message);
      turn.state = 'error';
      turn.error = message;
      turn.summary = summarizeTurn([], { turn: turn.id, cwd: this.roots[0]!.dir });
    }
    // The next turn end reads this one's end trees again; what earlier turns read is history.
    for (const source of this.sources) {
      source.store.dropUnusedSince(endStartedAt);
      source.reader.dropUnusedSince(endStartedAt);
    }
    this.timeline.turnEnded(turn);
    this.emit('turnEnded', turn);
    return turn.summary;
  }

  /** The changes of one ended turn: tree changes plus captured paths the trees do not cover. Cached: a turn never changes once ended. */
  turnChanges(turn: TurnRecord): Promise<FileChange[]> {
    if (!turn.after) return Promise.resolve([]);
    let cached = this.turnChangeCache.get(turn);
    if (!cached) {
      cached = this.computeTurnChanges(turn);
      this.turnChangeCache.set(turn, cached);
      cached.catch(() => this.turnChangeCache.delete(turn));
    }
    return cached;
  }

  private async computeTurnChanges(turn: TurnRecord): Promise<FileChange[]> {
    const changes = await collectTreeChanges(this.sources, turn.before, turn.after ?? []);
    for (const capture of turn.captures.values()) {
      if (await this.coveredBySnapshot(capture, turn)) continue;
      const kind = classify(capture.before, capture.after);
      if (!kind) continue;
      const root = capture.root;
      const change: FileChange = {
        kind,
        root,
        path: root >= 0 ? toSlashes(relative(this.roots[root]!.dir, capture.absPath)) : capture.absPath,
        absPath: capture.absPath,
        captured: true,
      };
      if (capture.before) change.before = capture.before;
      if (capture.after) change.after = capture.after;
      if (capture.leftWorkingDirectory) change.leftWorkingDirectory = true;
      changes.push(change);
    }
    return detectRenames(changes);
  }

  private async summarize(turn: TurnRecord, changes: readonly FileChange[]): Promise<TurnSummary> {
    const files: ChangedFileSummary[] = [];
    for (const change of changes) {
      const stats = await this.stats(change);
      const file: ChangedFileSummary = { path: change.path, display: this.display(change), added: stats.added, deleted: stats.deleted };
      if (stats.binary) file.binary = true;
      if (stats.oversized) {
        file.oversized = true;
        file.added = 0;
        file.deleted = 0;
      }
      files.push(file);
    }
    const summary = summarizeTurn(files, {
      turn: turn.id,
      cwd: this.roots[0]!.dir,
      maxFiles: this.opts.maxFiles ?? DEFAULT_MAX_FILES,
      snapshot: { before: turn.before[0]!.tree, after: turn.after![0]!.tree },
    });
    return summary;
  }

  private async coveredBySnapshot(capture: CaptureRecord, turn: TurnRecord): Promise<boolean> {
    if (capture.root < 0) return false;
    const source = this.sources[capture.root]!;
    const rel = toSlashes(relative(source.dir, capture.absPath));
    for (const trees of [turn.before[capture.root], turn.after?.[capture.root]]) {
      if (!trees) continue;
      const nested = trees.nested.find((n) => rel.startsWith(`${n.path}/`));
      const hit = nested ? await lookupPath(source.reader, nested.tree, rel.slice(nested.path.length + 1)) : await lookupPath(source.reader, trees.tree, rel);
      if (hit) return true;
    }
    return false;
  }

  /** The end trees of the last turn, or the session's start trees before any turn; undefined when the last turn has none. */
  private previousTrees(): RootTrees[] | undefined {
    if (this.settled && this.settled.afterTurns === this.turns.length) return this.settled.trees;
    const last = this.turns.at(-1);
    return last ? last.after : this.startTrees;
  }

  private async snapshotAll(alsoReport?: (done: number, total?: number) => void): Promise<RootTrees[]> {
    const report = this.opts.onProgress && alsoReport ? bothReports(this.opts.onProgress, alsoReport) : (this.opts.onProgress ?? alsoReport);
    const out: RootTrees[] = [];
    let counted = 0;
    for (const root of this.roots) {
      let done = 0;
      // The count runs on across working directories, so it never goes back; a total is known for one directory only.
      const onProgress =
        report &&
        ((d: number, t?: number) => {
          done = d;
          report(counted + d, this.roots.length === 1 ? t : undefined);
        });
      const result = await root.snapshot(onProgress);
      counted += done;
      for (const warning of result.warnings) this.emit('warning', `${displayPathBytes(warning.path)}: ${warning.message}`);
      const unread = unreadFiles(result);
      out.push({ tree: result.tree, nested: result.nested.map((n) => ({ path: n.path, tree: n.tree })), ...(unread.length > 0 ? { unread } : {}) });
    }
    return out;
  }

  dispatchSession(action: StateAction): void {
    this.timeline.dispatchSession(action);
  }

  private requireActive(turnId: string): TurnRecord {
    if (typeof turnId !== 'string' || turnId.length === 0) throw new SessionError('invalid', 'turnId must be a non-empty string');
    if (!this.active) throw new SessionError('invalid', `no turn is active in this session (got turnId "${turnId}")`);
    if (this.active.id !== turnId) {
      throw new SessionError('invalid', `turnId "${turnId}" does not match the active turn "${this.active.id}"`);
    }
    return this.active;
  }

  private assertLive(): void {
    if (this.disposed) throw new SessionError('not-found', `session ${this.id} is disposed`);
    if (this.endedAt !== undefined) {
      throw new SessionError('ended', `session ${this.id} has ended: it is kept for review and records no more turns (createSession with its URI resumes it)`);
    }
  }

  /** Resolves a harness path: absolute as given, relative to the first working directory. */
  resolvePath(p: string): string {
    return isAbsolute(p) ? resolve(p) : resolve(this.roots[0]!.dir, p);
  }

  /** Index of the working directory containing an absolute path, or -1. */
  rootIndexOf(absPath: string): number {
    return this.roots.findIndex((r) => isInsideDir(r.dir, absPath));
  }

  /**
   * Where a `beforeEdit` path leads: inside a working directory after
   * symlinks (captured at its real location when only a symlink makes it
   * so), or under the temporary directory outside every working directory
   * (skipped). Anything else is refused: the store would otherwise hold
   * copies of files the session has no business reading.
   */
  private async editTarget(p: string): Promise<{ absPath: string; skip: boolean }> {
    const absPath = this.resolvePath(p);
    if (this.isExcludedTemp(absPath)) return { absPath, skip: true };
    const real = await realPathInside(this.workingDirectories, absPath);
    if (real === undefined) {
      throw new OutsideWorkingDirectoriesError(`${p} resolves outside the session's working directories`);
    }
    return { absPath: this.rootIndexOf(absPath) >= 0 ? absPath : real, skip: false };
  }

  private isExcludedTemp(absPath: string): boolean {
    if (this.rootIndexOf(absPath) >= 0) return false;
    return [tmpdir(), '/tmp'].some((t) => isInsideDir(resolve(t), absPath));
  }
}

/** The timeline entry of a safety checkpoint. */
export function userActionOf(details: SafetyDetails, at: string, display: (p: SafetyDetails['paths'][number]) => string): UserAction {
  return {
    at,
    operation: details.operation,
    text: details.action ?? details.message ?? details.operation,
    files: details.paths.map(display),
    changeset: details.changeset,
  };
}

function snapshotOptions(opts: RecordingSessionOptions) {
  return {
    ...(opts.extraExcludes ? { extraExcludes: opts.extraExcludes } : {}),
    ...(opts.builtinExcludes !== undefined ? { builtinExcludes: opts.builtinExcludes } : {}),
    ...(opts.storeBudgetBytes !== undefined ? { budgetBytes: opts.storeBudgetBytes } : {}),
    ...(opts.retainDays !== undefined ? { retainDays: opts.retainDays } : {}),
  };
}

function validatePaths(paths: unknown): string | undefined {
  if (!Array.isArray(paths)) return 'paths must be an array of strings';
  for (let i = 0; i < paths.length; i++) {
    const p: unknown = paths[i];
    if (typeof p !== 'string' || p.length === 0) return `paths[${i}] must be a non-empty string`;
    if (p.includes('\0')) return `paths[${i}] must not contain NUL`;
  }
  return undefined;
}

function bothReports(a: (done: number, total?: number) => void, b: (done: number, total?: number) => void): (done: number, total?: number) => void {
  return (done, total) => {
    a(done, total);
    b(done, total);
  };
}
