import type { RootTrees } from '../changes/collect-changes.js';
import { Emitter, type Event, once } from '../events.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { TurnSummary } from '../session/turn-summary.js';
import { ulid } from '../ulid.js';
import { sameTrees } from './trees.js';
import { watchWorkspaces, type WorkspaceWatch } from './workspace-watcher.js';

/** Options of {@link AutoTurns}. */
export interface AutoTurnsOptions {
  /** The session whose turns are recorded automatically. */
  session: RecordingSession;
  /** Milliseconds without file changes that end a turn. */
  quietMs: number;
  /** Directories whose file events are not workspace changes (the server's state directory). */
  ignoreDirs?: readonly string[];
  /** `watch` (default) uses recursive file watchers and polls only when they fail; `poll` always polls. */
  mode?: 'watch' | 'poll';
  /** Milliseconds between snapshots when polling; default half the quiet period, between 250 and 2000. */
  pollIntervalMs?: number;
  /** Message recorded on automatic turns. */
  message?: string;
  /** Receives diagnostics (watch failures, failed turn steps). */
  log?: (line: string) => void;
}

/** An automatic turn that ended, with what it changed. */
export interface AutoTurnEnded {
  /** The turn's id. */
  turnId: string;
  /** What the turn changed. */
  summary: TurnSummary;
}

/**
 * Changes seen less than this apart are one moment: one save reaches the
 * watcher as a few events milliseconds apart (open, write, rename), which
 * say nothing of how long anyone worked.
 */
const ONE_MOMENT_MS = 1000;

/**
 * An automatic turn's edit span: from the first file change seen to the
 * last. A span shorter than {@link ONE_MOMENT_MS} is one moment (`to` is
 * `from`): the turn's duration is then 0, not the milliseconds between the
 * events of one save.
 */
function editSpanOf(first: number | undefined, last: number | undefined): { from: string; to: string } | undefined {
  if (first === undefined) return undefined;
  const end = Math.max(first, last ?? first);
  return { from: new Date(first).toISOString(), to: new Date(end - first < ONE_MOMENT_MS ? first : end).toISOString() };
}

type Phase = 'idle' | 'checking' | 'starting' | 'active' | 'ending' | 'stopped';

/** Default message of automatic turns. */
const AUTO_TURN_MESSAGE = 'File changes (automatic turn)';

/**
 * Records turns without a harness: a turn starts at the first file change
 * after a quiet period and ends after `quietMs` without changes. The turn's
 * baseline is the state before that first change (the previous turn's end,
 * or the session's start), so nothing the person did is missed. Events of
 * ignored files start no turn: a change only counts once a snapshot
 * differs from the baseline.
 */
export class AutoTurns {
  private readonly turnStartedEmitter = new Emitter<string>();
  private readonly turnEndedEmitter = new Emitter<AutoTurnEnded>();
  private readonly pollingEmitter = new Emitter<void>();
  private readonly checkedEmitter = new Emitter<boolean>();
  /** An automatic turn started (its baseline is the state before the first change); gives its id. */
  readonly onTurnStarted: Event<string> = this.turnStartedEmitter.event;
  /** An automatic turn ended after the quiet period. */
  readonly onTurnEnded: Event<AutoTurnEnded> = this.turnEndedEmitter.event;
  /** Watching failed and polling took over. */
  readonly onPolling: Event<void> = this.pollingEmitter.event;
  /** A burst of file events was looked at; gives whether the workspace differed from the baseline. */
  readonly onChecked: Event<boolean> = this.checkedEmitter.event;
  private phase: Phase = 'idle';
  private watch: WorkspaceWatch | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private quietTimer: NodeJS.Timeout | undefined;
  private turnId: string | undefined;
  private changedDuringStep = false;
  private polledTrees: RootTrees[] | undefined;
  private polling = false;
  private work: Promise<unknown> = Promise.resolve();
  private readonly session: RecordingSession;
  /** When the burst being recorded began and last changed: the turn's real edit span. */
  private firstChangeAt: number | undefined;
  private lastChangeAt: number | undefined;

  constructor(private readonly options: AutoTurnsOptions) {
    this.session = options.session;
    once(this.session.onDisposed, () => this.stop());
  }

  /** The automatic turn being recorded, if any. */
  get activeTurnId(): string | undefined {
    return this.phase === 'starting' || this.phase === 'active' || this.phase === 'ending' ? this.turnId : undefined;
  }

  /** True once stopped (hand-over, disposal or {@link stop}). */
  get isStopped(): boolean {
    return this.phase === 'stopped';
  }

  /** Starts watching the session's working directories. */
  start(): void {
    if (this.phase === 'stopped' || this.watch || this.polling) return;
    if (this.options.mode === 'poll') {
      this.startPolling();
      return;
    }
    try {
      this.watch = watchWorkspaces({
        directories: this.session.workingDirectories,
        ignoreDirs: this.options.ignoreDirs ?? [],
        onChange: () => this.noteChange(false),
        onError: (error) => {
          this.watch = undefined;
          this.options.log?.(`watching ${this.session.uri} failed (${error.message}); polling instead`);
          this.startPolling();
        },
      });
    } catch (error) {
      this.options.log?.(`cannot watch ${this.session.uri} (${(error as Error).message}); polling instead`);
      this.startPolling();
    }
  }

  /**
   * A harness takes over: the automatic turn in progress ends as complete
   * (queued now, so it ends before the harness's turn starts) and no more
   * automatic turns are recorded for this session.
   */
  handOver(): void {
    const id = this.activeTurnId;
    const ending = this.phase === 'ending';
    this.stop();
    if (id !== undefined && !ending) this.track(this.endTurn(id));
  }

  /** Stops watching; an automatic turn in progress stays active (disposing the session ends it as cancelled). */
  stop(): void {
    this.phase = 'stopped';
    this.watch?.close();
    this.watch = undefined;
    for (const timer of [this.pollTimer, this.checkTimer, this.quietTimer]) if (timer) clearTimeout(timer);
    this.pollTimer = this.checkTimer = this.quietTimer = undefined;
    this.polling = false;
  }

  /** Resolves once the steps started so far have finished (for orderly shutdown and tests). */
  async idle(): Promise<void> {
    let seen: Promise<unknown> | undefined;
    while (seen !== this.work) {
      seen = this.work;
      await seen.catch(() => undefined);
    }
  }

  private get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? Math.min(2000, Math.max(250, Math.floor(this.options.quietMs / 2)));
  }

  private startPolling(): void {
    if (this.phase === 'stopped') return;
    this.polling = true;
    this.pollingEmitter.fire();
    const tick = (): void => {
      if (!this.polling) return;
      this.track(
        this.session
          .currentTrees()
          .then((trees) => {
            const changed = this.polledTrees !== undefined && !sameTrees(trees, this.polledTrees);
            const first = this.polledTrees === undefined;
            this.polledTrees = trees;
            // The first poll compares with the baseline: edits made before polling began still count.
            // Between turns a change counts only against the baseline, which holds the server's own writes.
            const differs = !sameTrees(trees, this.baselineTrees());
            if ((changed && (this.phase !== 'idle' || differs)) || (first && differs)) this.noteChange(true);
          })
          .catch((error: unknown) => this.options.log?.(`polling ${this.session.uri}: ${(error as Error).message}`))
          .finally(() => {
            if (this.polling) this.pollTimer = setTimeout(tick, this.pollIntervalMs).unref();
          }),
      );
    };
    tick();
  }

  /** A file changed. `verified`: a snapshot already showed the workspace differs. */
  private noteChange(verified: boolean): void {
    const now = Date.now();
    if (this.phase === 'idle' || this.phase === 'checking') this.firstChangeAt ??= now;
    if (this.phase !== 'ending' && this.phase !== 'stopped') this.lastChangeAt = now;
    switch (this.phase) {
      case 'idle':
        if (verified) this.track(this.beginTurn());
        else this.scheduleCheck();
        return;
      case 'checking':
      case 'ending':
        this.changedDuringStep = true;
        return;
      case 'starting':
      case 'active':
        this.armQuietTimer();
        return;
      case 'stopped':
        return;
    }
  }

  /** Events come in bursts; one snapshot looks at the burst. */
  private scheduleCheck(): void {
    if (this.checkTimer || this.phase !== 'idle') return;
    this.checkTimer = setTimeout(
      () => {
        this.checkTimer = undefined;
        if (this.phase === 'idle') this.track(this.check());
      },
      Math.min(200, this.options.quietMs),
    ).unref();
  }

  private async check(): Promise<void> {
    this.phase = 'checking';
    this.changedDuringStep = false;
    let trees: RootTrees[];
    try {
      trees = await this.session.currentTrees();
    } catch (error) {
      if (this.phase === 'checking') this.phase = 'idle';
      this.options.log?.(`checking ${this.session.uri} for changes: ${(error as Error).message}`);
      return;
    }
    if (this.phase !== 'checking') return;
    const changed = !sameTrees(trees, this.baselineTrees());
    this.checkedEmitter.fire(changed);
    if (changed) {
      await this.beginTurn();
      return;
    }
    this.phase = 'idle';
    this.firstChangeAt = this.lastChangeAt = undefined;
    if (this.changedDuringStep) this.scheduleCheck();
  }

  /** The state the next turn starts from: the end of the last turn, or the state the server's own last operation left. */
  private baselineTrees(): RootTrees[] | undefined {
    return this.session.baselineTrees;
  }

  private async beginTurn(): Promise<void> {
    const id = ulid();
    this.turnId = id;
    this.phase = 'starting';
    this.armQuietTimer();
    try {
      this.firstChangeAt ??= Date.now();
      await this.session.startTurn({ id, baseline: 'previous', automatic: true, message: this.options.message ?? AUTO_TURN_MESSAGE });
    } catch (error) {
      this.options.log?.(`starting an automatic turn in ${this.session.uri}: ${(error as Error).message}`);
      if (this.phase === 'starting') {
        this.clearQuietTimer();
        this.phase = 'idle';
      }
      return;
    }
    if (this.phase !== 'starting') return;
    this.phase = 'active';
    this.turnStartedEmitter.fire(id);
  }

  private armQuietTimer(): void {
    this.clearQuietTimer();
    this.quietTimer = setTimeout(() => {
      this.quietTimer = undefined;
      if (this.phase === 'active') this.track(this.finishTurn());
      else if (this.phase === 'starting') this.armQuietTimer();
    }, this.options.quietMs).unref();
  }

  private clearQuietTimer(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = undefined;
  }

  private async finishTurn(): Promise<void> {
    const id = this.turnId!;
    this.phase = 'ending';
    this.changedDuringStep = false;
    await this.endTurn(id);
    if (this.phase !== 'ending') return;
    this.phase = 'idle';
    if (this.changedDuringStep) this.scheduleCheck();
  }

  private async endTurn(id: string): Promise<void> {
    const editSpan = editSpanOf(this.firstChangeAt, this.lastChangeAt);
    this.firstChangeAt = this.lastChangeAt = undefined;
    try {
      const summary = await this.session.endTurn(id, { state: 'complete', ...(editSpan ? { editSpan } : {}) });
      this.turnEndedEmitter.fire({ turnId: id, summary });
    } catch (error) {
      // The turn was already ended by someone else (a harness, disposal): nothing to record.
      this.options.log?.(`ending automatic turn ${id} in ${this.session.uri}: ${(error as Error).message}`);
    }
  }

  private track(step: Promise<unknown>): void {
    const previous = this.work;
    this.work = Promise.all([previous, step.catch(() => undefined)]);
  }
}
