/**
 * Change-driven snapshots: decides, for each snapshot, whether the paths a
 * file watcher reported are enough (visit only those), whether nothing
 * changed at all (reuse the previous snapshot), or whether the whole tree
 * must be walked; and keeps the count of what verification walks found the
 * watcher had missed.
 */
import type { SnapshotTrackingStatus } from '../../protocol/extensions/harness.js';
import { buildTouchedTree, isTouchedAround, touchesRules, type ChangeFeed, type TakenChanges, type TouchedNode, type TouchedPath } from './touched-paths.js';

/** What change tracking did, for `status` (which adds the working directory). */
export type ChangeTrackingStats = Omit<SnapshotTrackingStatus, 'dir'>;

/** How one snapshot goes. */
export type WalkPlan =
  | { kind: 'reuse'; paths: TouchedPath[] }
  | { kind: 'incremental'; paths: TouchedPath[]; touched: TouchedNode; visitAll: boolean }
  | { kind: 'full'; reason: string; paths: TouchedPath[] | undefined };

/** Above this many touched paths the list may have lost events (the kernel queue holds 16,384): walk everything. */
export const MAX_TOUCHED_PATHS = 8192;
/** Blind directories tolerated before the watch is started afresh. */
const MAX_BLIND_DIRS = 32;
const MAX_LAST_MISSED = 20;

/** State that what-the-previous-snapshot-saw must match for touched paths to be trusted. */
export interface PlanContext {
  /** The snapshotter holds the tree state of its previous snapshot. */
  hasState: boolean;
  /** The previous snapshot's result is at hand. */
  hasResult: boolean;
  /** Identity of the rules that apply at the root, and of the snapshot options. */
  rulesKey: string;
  /** Paths to visit besides the touched ones (added to or removed from the index: their ignore decision may change). */
  extra?: readonly TouchedPath[];
  /** Why the whole tree must be walked whatever was touched. */
  walkAll?: string;
}

export class ChangeTracker {
  readonly stats: ChangeTrackingStats = { watching: true, incremental: 0, reused: 0, fullWalks: 0, verifications: 0, missed: 0, lastMissed: [], blindDirs: 0 };
  private readonly blind = new Set<string>();
  /** Paths reported during a verification walk, for the next snapshot. */
  private carried: TouchedPath[] = [];
  private lastRulesKey: string | undefined;

  constructor(private readonly feed: ChangeFeed) {}

  /** Takes the touched paths (waiting for the watcher to catch up) and decides how to walk. */
  async plan(ctx: PlanContext): Promise<WalkPlan> {
    const taken = await this.feed.take();
    const took = this.withCarried(taken);
    const paths = took && ctx.extra?.length ? [...took, ...ctx.extra] : took;
    const rulesChanged = this.lastRulesKey !== undefined && this.lastRulesKey !== ctx.rulesKey;
    this.lastRulesKey = ctx.rulesKey;
    let reason: string | undefined;
    if (!paths) reason = 'unknown' in taken ? taken.unknown : 'no change list';
    else if (ctx.walkAll !== undefined) reason = ctx.walkAll;
    else if (!ctx.hasState) reason = 'no previous snapshot state';
    else if (rulesChanged) reason = 'ignore rules outside the tree changed';
    else if (paths.length > MAX_TOUCHED_PATHS) reason = `${paths.length} paths touched`;
    if (reason !== undefined || !paths) return this.full(reason ?? 'no change list', paths);
    if (paths.length === 0 && this.blind.size === 0 && ctx.hasResult) {
      this.stats.reused++;
      return { kind: 'reuse', paths };
    }
    this.stats.incremental++;
    return { kind: 'incremental', paths, touched: buildTouchedTree(paths, this.blind), visitAll: touchesRules(paths) };
  }

  /** Records directories found blind by a walk; too many and the watch is started afresh. */
  noteBlind(found: readonly string[], plan: WalkPlan): void {
    // A watch started afresh sees into every directory that existed when it started.
    if (plan.kind === 'full' && plan.paths === undefined) this.blind.clear();
    for (const p of found) this.blind.add(p);
    if (this.blind.size > MAX_BLIND_DIRS) {
      this.feed.requestRestart();
      this.blind.clear();
    }
    this.stats.blindDirs = this.blind.size;
  }

  /** The plan for a verification walk: everything is visited, and what the watcher reported is known. */
  async planVerification(): Promise<TakenChanges> {
    const taken = await this.feed.take();
    const paths = this.withCarried(taken);
    return paths ? { touched: paths } : taken;
  }

  /**
   * After a verification walk: `changed` are the paths whose content or
   * presence differed from the stat cache; those the watcher reported
   * (`reported`), those inside blind directories, and those reported while
   * the walk ran are accounted for. The rest were missed.
   */
  async settleVerification(changed: readonly string[], reported: readonly TouchedPath[]): Promise<string[]> {
    this.stats.verifications++;
    const during = await this.feed.take();
    const duringPaths = 'touched' in during ? during.touched : [];
    // What happened during the walk is the next snapshot's to look at.
    this.carried = duringPaths;
    const missed = changed.filter(
      (p) => !isTouchedAround(reported, p) && !isTouchedAround(duringPaths, p) && ![...this.blind].some((b) => p === b || p.startsWith(b + '/')),
    );
    if (missed.length > 0) {
      this.stats.missed += missed.length;
      this.stats.lastMissed = [...missed, ...this.stats.lastMissed].slice(0, MAX_LAST_MISSED);
      // The watch is evidently not seeing everything.
      this.feed.requestRestart();
    }
    if (!('touched' in during)) this.carried = [];
    return missed;
  }

  private withCarried(taken: TakenChanges): TouchedPath[] | undefined {
    const carried = this.carried;
    this.carried = [];
    if (!('touched' in taken)) return undefined;
    return carried.length ? [...carried, ...taken.touched] : taken.touched;
  }

  private full(reason: string, paths: TouchedPath[] | undefined): WalkPlan {
    this.stats.fullWalks++;
    this.stats.lastFullWalkReason = reason;
    return { kind: 'full', reason, paths };
  }
}

/**
 * The feed of a nested repository's snapshotter: its parent hands it the
 * touched paths below it, taken once for both.
 */
export class HandedFeed implements ChangeFeed {
  private next: TakenChanges = { unknown: 'nothing handed yet' };

  constructor(private readonly parent: ChangeFeed) {}

  hand(next: TakenChanges): void {
    this.next = next;
  }

  take(): Promise<TakenChanges> {
    const next = this.next;
    this.next = { unknown: 'nothing handed since the last snapshot' };
    return Promise.resolve(next);
  }

  requestRestart(): void {
    this.parent.requestRestart();
  }
}
