import { relative } from 'node:path';
import { chatUri as toChatUri, SessionStatus, sessionUri as toSessionUri, type ChatState, type SessionState, type StateAction } from '../../protocol/index.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { FileChange } from '../changes/file-change.js';
import { Emitter, type Event } from '../events.js';
import { SerialQueue } from '../serial-queue.js';
import { ulid } from '../ulid.js';
import { pathsProblem } from './captures.js';
import { SessionError } from './session-error.js';
import { SessionEmitters } from './session-events.js';
import { SessionFiles, type ProgressReport } from './session-files.js';
import type { StartProgress } from './session-options.js';
import { SessionJournal, type LoadedSession, type SafetyCheckpoints } from './session-journal.js';
import { bothReports, snapshotOptions, type RecordingSessionOptions } from './session-options.js';
import { initialChatState, initialSessionState, restoredChatState } from './session-state.js';
import type { WrittenFile } from './settled-trees.js';
import { SessionTimeline, sessionTitle, userActionOf, type TimelineMeta, type UserAction } from './timeline.js';
import type { TurnRecord } from './turn-record.js';
import { TurnRecorder, type EndTurnOptions, type StartTurnOptions, type TurnHandle } from './turn-recorder.js';
import type { TurnSummary } from './turn-summary.js';

export type { SessionSource } from './session-files.js';
export type { RecordingSessionOptions } from './session-options.js';
export type { EndTurnOptions, StartTurnOptions, TurnHandle } from './turn-recorder.js';

/**
 * One recorded session over one or more working directories: a serial queue
 * in which its {@link TurnRecorder} records turns, the {@link SessionFiles}
 * they are read from, the journal they are stored in, and the
 * {@link SessionTimeline} clients see. Other layers read files through
 * {@link files}, safety checkpoints through {@link safety}, and the turn list.
 */
export class RecordingSession {
  readonly uri: string;
  readonly chatUri: string;
  /** Safety checkpoints: what operations record before they write, and what `undo` reads. */
  readonly safety: SafetyCheckpoints;
  /** The chat and session-state projection clients see. */
  readonly timeline: SessionTimeline;
  /** When the session ended; undefined while it records. */
  endedAt: string | undefined;
  private created: string;
  private readonly journal: SessionJournal;
  private readonly recorder: TurnRecorder;
  private readonly queue = new SerialQueue();
  private disposed = false;
  private readonly emit = new SessionEmitters();
  /** Settles once the session's first snapshot is recorded (at once for a restored session). */
  private startWork: Promise<void> = Promise.resolve();
  /** How far the first snapshot has come while it runs in the background; undefined once it is recorded. */
  private startProgress: StartProgress | undefined;
  private readonly startProgressEmitter = new Emitter<StartProgress>();

  /** A turn ended and its record is complete. */
  readonly onTurnEnded: Event<TurnRecord> = this.emit.turnEnded.event;
  /** The session ended (archived): it records no more and stays reviewable. */
  readonly onEnded: Event<void> = this.emit.ended.event;
  /** The session was closed: its channels are gone. Every listener is let go of after this. */
  readonly onDisposed: Event<void> = this.emit.disposed.event;
  /** The user did something through an operation. */
  readonly onUserAction: Event<UserAction> = this.emit.userAction.event;
  /** Retention dropped these ended sessions from a store this session writes to. */
  readonly onRetentionDropped: Event<string[]> = this.emit.retentionDropped.event;
  /** A step failed and was abandoned; the session goes on. */
  readonly onWarning: Event<string> = this.emit.warning.event;
  /** The first snapshot, running in the background (see {@link RecordingSessionOptions.startInBackground}), read more files. */
  readonly onStartProgress: Event<StartProgress> = this.startProgressEmitter.event;

  private constructor(
    readonly id: string,
    /** The working directories and what reads them. */
    readonly files: SessionFiles,
    private readonly opts: RecordingSessionOptions,
  ) {
    this.uri = toSessionUri(id);
    this.chatUri = toChatUri(id);
    this.created = new Date().toISOString();
    const journal = new SessionJournal(id, files.list());
    this.journal = journal;
    this.safety = { write: (details) => journal.writeSafety(details), list: () => journal.listSafety(), known: () => journal.knownSafety() };
    this.recorder = new TurnRecorder({
      files,
      journal,
      snapshot: () => this.snapshotAll(),
      warn: (line) => this.emit.warning.fire(line),
      retentionDropped: (ids) => this.emit.retentionDropped.fire(ids),
      maxFiles: opts.maxFiles,
      captureMaxBytes: opts.captureMaxBytes,
    });
    this.timeline = new SessionTimeline(opts.channels, this.uri, this.chatUri, {
      dir: files.dirs[0]!,
      createdAt: () => this.created,
      explicitTitle: opts.title !== undefined,
      display: (absPath) => files.displayOf(absPath),
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
    const files = await SessionFiles.open(opts.workingDirectories, { stateDir: opts.stateDir, ...snapshotOptions(opts) });
    const session = new RecordingSession(id, files, opts);
    let loaded: LoadedSession | undefined;
    try {
      loaded = opts.id !== undefined ? await session.journal.load() : undefined;
    } catch (error) {
      session.emit.warning.fire(`could not read the stored history of session ${id}: ${(error as Error).message}`);
    }
    const ended = opts.ended ?? 'refuse';
    if (loaded?.ended && ended === 'refuse') {
      await files.release();
      throw new SessionError('conflict', `session ${id} has ended; choose another id`);
    }
    if (loaded) session.created = loaded.details.createdAt;
    if (loaded?.ended && ended === 'archived') session.endedAt = loaded.endedAt ?? new Date().toISOString();
    await session.publish(loaded, opts.agent ?? loaded?.details.agent);
    return session;
  }

  /** Creates the session's channels with what was restored, then restores the turns or records the starting state. */
  private async publish(loaded: LoadedSession | undefined, agent: string | undefined): Promise<void> {
    const dirs = [...this.files.dirs];
    this.timeline.restore({
      workingDirectories: dirs,
      agent,
      recordedIn: loaded?.details.recordedIn,
      turns: loaded?.turns ?? [],
      userActions: loaded ? await this.userActionsOf() : [],
      endedAt: this.endedAt,
    });
    const init = {
      sessionUri: this.uri,
      chatUri: this.chatUri,
      title: this.timeline.title(this.opts.title ?? loaded?.details.title ?? sessionTitle({ agent, dir: dirs[0]!, createdAt: this.created })),
      workingDirectories: dirs,
      createdAt: this.created,
    };
    const sessionState = initialSessionState(init);
    sessionState._meta = this.timeline.sessionMeta();
    if (this.endedAt) sessionState.status |= SessionStatus.IsArchived;
    this.opts.channels.createChannel(this.uri, 'session', sessionState);
    this.opts.channels.createChannel(this.chatUri, 'chat', restoredChatState(initialChatState(init), loaded?.turns ?? []));
    const recorder = this.recorder;
    try {
      if (loaded) {
        recorder.startTrees = loaded.startTrees;
        recorder.turns.push(...loaded.turns);
        if (loaded.settled) recorder.settled = loaded.settled;
        // A turn the previous run did not finish (a crash) ends now, as cancelled.
        const unfinished = loaded.turns.find((t) => !t.after);
        if (unfinished && !this.endedAt) {
          recorder.active = unfinished;
          await this.queue.run(() => this.finishTurn(unfinished, { state: 'cancelled' }));
        }
      } else if (this.opts.startInBackground) {
        this.recordStartInBackground(init, agent);
        return;
      } else {
        await this.recordStart(init, agent, this.opts.onStartProgress);
      }
    } catch (error) {
      this.timeline.dispatchSession({ type: 'session/creationFailed', error: { errorType: 'SnapshotFailed', message: (error as Error).message } });
      await this.close();
      throw error;
    }
    this.timeline.dispatchSession({ type: 'session/ready' });
  }

  /** The first snapshot and the session's start record: the state every turn of the session is compared with. */
  private async recordStart(init: { title: string; workingDirectories: string[] }, agent: string | undefined, report?: ProgressReport): Promise<void> {
    this.recorder.startTrees = await this.snapshotAll(report);
    await this.journal.writeSessionStart(this.recorder.startTrees, {
      title: init.title,
      createdAt: this.created,
      workingDirectories: init.workingDirectories,
      ...(agent !== undefined ? { agent } : {}),
    });
  }

  /**
   * Records the start first in the session's queue and returns at once: the
   * session is listed with lifecycle `creating`, and every step queued
   * after (a turn start, an operation, a snapshot for a live changeset)
   * runs once it is recorded. A change made while the walk runs is either
   * read by it or reported by the watcher to the next snapshot.
   */
  private recordStartInBackground(init: { title: string; workingDirectories: string[] }, agent: string | undefined): void {
    this.startProgress = { done: 0 };
    const report: ProgressReport = (done, total) => {
      if (!this.startProgress) return;
      this.startProgress = { done: Math.max(done, this.startProgress.done), ...(total !== undefined ? { total } : {}) };
      this.startProgressEmitter.fire(this.startProgress);
      this.opts.onStartProgress?.(done, total);
    };
    this.startWork = this.queue
      .run(() => this.recordStart(init, agent, report))
      .then(
        () => {
          this.startProgress = undefined;
          if (!this.disposed) this.timeline.dispatchSession({ type: 'session/ready' });
        },
        (error: unknown) => {
          this.startProgress = undefined;
          const message = (error as Error).message;
          if (!this.disposed) this.timeline.dispatchSession({ type: 'session/creationFailed', error: { errorType: 'SnapshotFailed', message } });
          this.emit.warning.fire(`the working directory could not be read: ${message}`);
          throw error;
        },
      );
    // Whoever needs the start awaits `started`; a failure is reported there and as a warning.
    this.startWork.catch(() => undefined);
  }

  /**
   * Resolves once the session's first snapshot is recorded: at once for a
   * session restored from the stores, or created without
   * `startInBackground`. Rejects with the reason the working directory
   * could not be read.
   */
  get started(): Promise<void> {
    return this.startWork;
  }

  /** How far the first snapshot has come while it runs in the background; undefined once it is recorded (or never ran there). */
  get preparing(): StartProgress | undefined {
    return this.startProgress;
  }

  /** When the session was created, ISO 8601. */
  get createdAt(): string {
    return this.created;
  }

  /** The working directories, as real paths. */
  get workingDirectories(): string[] {
    return [...this.files.dirs];
  }

  /** Turns in order, ended and active. */
  get turns(): readonly TurnRecord[] {
    return this.recorder.turns;
  }

  /** Trees of every working directory when the session began. */
  get startTrees(): RootTrees[] {
    return this.recorder.startTrees;
  }

  /** The active turn's id, if one is being recorded. */
  get activeTurnId(): string | undefined {
    return this.recorder.active?.id;
  }

  get sessionState(): SessionState {
    return this.timeline.sessionState;
  }

  get chatState(): ChatState {
    return this.timeline.chatState;
  }

  /** What the session state's `_meta` says: turn figures and titles, the agent, the user's own actions. */
  get meta(): Readonly<TimelineMeta> {
    return this.timeline.current;
  }

  /** True once the session ended: it records no more turns and stays reviewable. */
  get isEnded(): boolean {
    return this.endedAt !== undefined;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** The recorded turn with this id (ended or active). */
  turn(id: string): TurnRecord | undefined {
    return this.recorder.turn(id);
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
      // Queued behind the first snapshot: a session whose start failed records no turn.
      await this.startWork;
      const active = this.recorder.active;
      if (active) await this.finishTurn(active, { state: 'cancelled' });
      const record = await this.recorder.begin(opts);
      this.timeline.turnStarted(record);
      return this.handle(record.id);
    });
  }

  /** Captures paths before a tool edits them (see {@link TurnHandle.beforeEdit}). */
  beforeEdit(turnId: string, paths: readonly string[], opts: { tool?: string } = {}): Promise<string[]> {
    this.assertLive();
    const invalid = pathsProblem(paths);
    if (invalid) return Promise.reject(new SessionError('invalid', invalid));
    return this.queue.run(() => this.recorder.beforeEdit(turnId, paths, opts.tool));
  }

  /** Ends the active turn (see {@link TurnHandle.end}). */
  endTurn(turnId: string, opts: EndTurnOptions = {}): Promise<TurnSummary> {
    this.assertLive();
    if (opts.state !== undefined && !['complete', 'cancelled', 'error'].includes(opts.state)) {
      return Promise.reject(new SessionError('invalid', `state must be complete, cancelled or error, got ${JSON.stringify(opts.state)}`));
    }
    return this.queue.run(async () => this.finishTurn(this.recorder.requireActive(turnId), opts));
  }

  /** The changes of one ended turn: tree changes plus captured paths the trees do not cover. Cached: a turn never changes once ended. */
  turnChanges(turn: TurnRecord): Promise<FileChange[]> {
    return this.recorder.turnChanges(turn);
  }

  /** Snapshots every working directory now (queued behind turns). */
  currentTrees(): Promise<RootTrees[]> {
    return this.queue.run(async () => {
      await this.startWork;
      return this.snapshotAll();
    });
  }

  /** Snapshots every working directory without queueing: only for tasks already running in `exclusive`. */
  snapshotInQueue(): Promise<RootTrees[]> {
    return this.snapshotAll();
  }

  /** Runs a task in the session's serial queue, after every turn step queued before it. */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      await this.startWork;
      return task();
    });
  }

  /** The state the next turn noticed after the fact starts from: the workspace as last recorded or as an operation left it. */
  get baselineTrees(): RootTrees[] | undefined {
    return this.recorder.previousTrees();
  }

  /**
   * Drops every turn after `turnId` (all turns when null) from the session
   * and its chat (`chat/truncated`). Only for tasks already running in
   * `exclusive`; the caller records the truncation in the journal.
   */
  dropTurnsAfter(turnId: string | null): TurnRecord[] {
    const dropped = this.recorder.dropAfter(turnId);
    this.timeline.truncated(turnId, dropped);
    return dropped;
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
    if (written) await this.recorder.settle(writes);
    // A safety checkpoint makes an ended session live in the stores; it is still ended.
    if (this.endedAt !== undefined && written) await this.journal.markEnded();
    this.timeline.userAction(action);
    this.emit.userAction.fire(action);
  }

  /** User actions read back from the safety checkpoints of a stored session. */
  private async userActionsOf(): Promise<UserAction[]> {
    const records = await this.journal.listSafety().catch(() => []);
    return records.map((r) =>
      userActionOf(r.details, r.createdAt, (p) =>
        this.files.display({ absPath: p.absPath, root: p.root, path: relative(this.files.root(p.root).dir, p.absPath) }),
      ),
    );
  }

  dispatchSession(action: StateAction): void {
    this.timeline.dispatchSession(action);
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
      if (this.recorder.active) await this.finishTurn(this.recorder.active, { state: 'cancelled' });
      await this.journal.markEnded();
    });
    this.endedAt = new Date().toISOString();
    this.timeline.ended(this.endedAt);
    this.emit.ended.fire();
  }

  /** Records into an ended session again (the agent resumed it); the next checkpoint makes it live in the stores. */
  reopen(): void {
    if (this.endedAt === undefined) return;
    this.endedAt = undefined;
    this.timeline.ended(undefined);
  }

  /** Ends the session ({@link end}) and releases it: its channels go away (standalone use, tests). */
  async dispose(): Promise<void> {
    await this.end().catch((error: unknown) => this.emit.warning.fire(`ending the session failed: ${(error as Error).message}`));
    await this.close();
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
        if (this.recorder.active) await this.finishTurn(this.recorder.active, { state: 'cancelled' });
        if (opts.end) await this.journal.markEnded();
      })
      .catch((error: unknown) => this.emit.warning.fire(`closing the session failed: ${(error as Error).message}`));
    this.disposed = true;
    await this.files.release();
    this.opts.channels.removeChannel(this.chatUri);
    this.opts.channels.removeChannel(this.uri);
    this.emit.disposed.fire();
    this.emit.dispose();
    this.startProgressEmitter.dispose();
  }

  private handle(id: string): TurnHandle {
    return {
      id,
      beforeEdit: (paths, opts) => this.beforeEdit(id, paths, opts),
      end: (opts) => this.endTurn(id, opts),
    };
  }

  private async finishTurn(turn: TurnRecord, opts: EndTurnOptions): Promise<TurnSummary> {
    const summary = await this.recorder.finish(turn, opts);
    this.timeline.turnEnded(turn);
    this.emit.turnEnded.fire(turn);
    return summary;
  }

  private snapshotAll(alsoReport?: ProgressReport): Promise<RootTrees[]> {
    const report = this.opts.onProgress && alsoReport ? bothReports(this.opts.onProgress, alsoReport) : (this.opts.onProgress ?? alsoReport);
    return this.files.snapshot(report, (line) => this.emit.warning.fire(line));
  }

  private assertLive(): void {
    if (this.disposed) throw new SessionError('not-found', `session ${this.id} is disposed`);
    if (this.endedAt !== undefined) {
      throw new SessionError('ended', `session ${this.id} has ended: it is kept for review and records no more turns (createSession with its URI resumes it)`);
    }
  }
}
