import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { relativeInside } from '../paths.js';
import { writeFileAtomic } from '../private-files.js';
import type { RetentionReport } from '../store/retention.js';
import { shadowTmpDir } from '../store/shadow-repo.js';
import { openWorkspaceStore, type WorkspaceStore } from '../store/index.js';
import { TEMP_EXCLUDES } from '../disk/file-swap.js';
import { recoverInterruptedWrites } from '../disk/write-intent.js';
import { SerialQueue } from '../serial-queue.js';
import { SnapshotWatch, type SnapshotWatchOptions } from '../watch/snapshot-watch.js';
import type { ChangeTrackingStats } from '../snapshot/change-tracking.js';
import {
  fileSystemClock,
  findGitRepository,
  WorkspaceSnapshotter,
  type GitRepositoryLocation,
  type NestedSnapshot,
  type SnapshotResult,
} from '../snapshot/index.js';

/** Options for opening one working directory of a session. */
export interface WorkspaceRootOptions {
  /** Real path of the working directory. */
  dir: string;
  /** State directory holding the stores. */
  stateDir: string;
  /** Extra exclude patterns (`.gitignore` syntax) for snapshots. */
  extraExcludes?: readonly string[];
  /** Built-in excludes for non-repository workspaces: `true` (default), `false`, or a replacement list. */
  builtinExcludes?: boolean | readonly string[];
  /** Byte budget of the shadow store. */
  budgetBytes?: number;
  /** Ended sessions are dropped this many days after they ended, whatever the budget. */
  retainDays?: number;
  /** Change-driven snapshots: `watch: false` walks the tree at every snapshot; `verifyIdleMs` the quiet time before a verification walk. */
  watching?: SnapshotWatchOptions;
}

/** What the last retention pass that had work to do did, and when. */
export interface RetentionRun extends RetentionReport {
  /** ISO 8601 time the pass finished. */
  at: string;
}

/**
 * One working directory: its shadow store and its snapshotter, shared by
 * every session of this process that records it (the store admits one
 * writer process). Snapshots are flushed to the store before they are
 * reported, so a tree id handed out is always readable after a crash.
 */
export class WorkspaceRoot {
  private static readonly open = new Map<string, { root: Promise<WorkspaceRoot>; users: number }>();
  private progress: ((done: number, total?: number) => void) | undefined;
  /** Git directories of nested repositories whose objects snapshots may reference. */
  private readonly nestedGitDirs = new Set<string>();
  /** Snapshots and store maintenance of this directory, one at a time. */
  private readonly queue = new SerialQueue();
  private snapshotter: WorkspaceSnapshotter;
  /** The file watcher that lets snapshots visit only what changed; undefined when watching is off. */
  private watch: SnapshotWatch | undefined;
  /** Trusting snapshots counted when the last verification was armed. */
  private verifiedUpTo = 0;
  private lastRetention: RetentionRun | undefined;

  private constructor(
    readonly dir: string,
    readonly store: WorkspaceStore,
    private readonly makeSnapshotter: () => WorkspaceSnapshotter,
    readonly repository: GitRepositoryLocation | undefined,
    private readonly key: string,
    private readonly retainDays: number | undefined,
  ) {
    this.snapshotter = makeSnapshotter();
  }

  /** Opens the working directory's root, or shares the one this process already has open. */
  static acquire(opts: WorkspaceRootOptions): Promise<WorkspaceRoot> {
    const key = `${opts.stateDir}\0${opts.dir}`;
    let entry = WorkspaceRoot.open.get(key);
    if (!entry) {
      entry = { root: WorkspaceRoot.create(opts, key), users: 0 };
      WorkspaceRoot.open.set(key, entry);
      const failed = entry;
      entry.root.catch(() => {
        if (WorkspaceRoot.open.get(key) === failed) WorkspaceRoot.open.delete(key);
      });
    }
    entry.users++;
    return entry.root;
  }

  private static async create(opts: WorkspaceRootOptions, key: string): Promise<WorkspaceRoot> {
    const store = await openWorkspaceStore({
      stateDir: opts.stateDir,
      workspaceDir: opts.dir,
      ...(opts.budgetBytes !== undefined ? { budgetBytes: opts.budgetBytes } : {}),
    });
    try {
      // Before anything looks at the directory or answers for it: an operation a crash interrupted is finished, and leaves no file of ours behind.
      const recovery = await recoverInterruptedWrites(store.layout.root, [store.workspaceDir], store);
      if (recovery.kept.length > 0) console.warn(`changeset-server: kept files an interrupted operation set aside: ${recovery.kept.join(', ')}`);
      if (recovery.unfinished.length > 0) {
        console.warn(
          `changeset-server: an interrupted operation was finished except for files changed since, left as they are: ${recovery.unfinished.join(', ')}`,
        );
      }
      let root: WorkspaceRoot | undefined;
      const cacheDir = join(store.layout.root, 'stat-cache');
      // Read before the watcher starts listing directories, which the first snapshot then need not list again.
      const clock = fileSystemClock(cacheDir);
      const watch = SnapshotWatch.open(store.workspaceDir, opts.stateDir, opts.watching);
      const makeSnapshotter = () =>
        new WorkspaceSnapshotter({
          onProgress: (done, total) => root?.progress?.(done, total),
          root: store.workspaceDir,
          store,
          cacheDir,
          extraExcludes: [...(opts.extraExcludes ?? []), ...stateDirExclude(store.workspaceDir, opts.stateDir), ...TEMP_EXCLUDES],
          ...(opts.builtinExcludes !== undefined ? { builtinExcludes: opts.builtinExcludes } : {}),
          ...(watch ? { changes: watch.feed, listings: watch.listings(clock) } : {}),
        });
      root = new WorkspaceRoot(store.workspaceDir, store, makeSnapshotter, findGitRepository(store.workspaceDir), key, opts.retainDays);
      root.watch = watch;
      await root.loadNestedRepositories();
      return root;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /** Captures the working directory and makes the new objects durable. */
  snapshot(onProgress?: (done: number, total?: number) => void): Promise<SnapshotResult> {
    return this.queue.run(async () => {
      this.progress = onProgress;
      try {
        const result = await this.snapshotter.snapshot();
        await this.store.flush();
        await this.registerNested(result.nested);
        const trusted = this.changeTracking;
        // Only snapshots that trusted the watcher need checking.
        if (trusted && trusted.incremental + trusted.reused > this.verifiedUpTo) {
          this.watch?.armVerification(async () => {
            this.verifiedUpTo = trusted.incremental + trusted.reused;
            await this.verify();
          });
        }
        return result;
      } finally {
        this.progress = undefined;
      }
    });
  }

  /**
   * Keeps the store within its byte budget and age limit (oldest ended
   * sessions go first, never a live one). The trees the stat cache names are
   * kept, so the cache stays valid and the next snapshot hashes only what
   * changed.
   */
  maintain(): Promise<RetentionReport> {
    return this.queue.run(async () => {
      const cachedTrees = this.snapshotter.cachedTrees;
      const report = await this.store.enforceBudget({
        ...(this.retainDays !== undefined ? { maxAgeMs: this.retainDays * DAY_MS } : {}),
        ...(cachedTrees ? { keepRoots: cachedTrees } : {}),
        // The cache file must name the kept trees, not an older state whose objects may go.
        beforeCollect: () => this.snapshotter.saveCache(),
      });
      if (report.objectsRemoved > 0 && !cachedTrees) {
        // No snapshot in this process yet: the cache on disk may name removed objects.
        this.snapshotter.discard();
        await rm(join(this.store.layout.root, 'stat-cache'), { recursive: true, force: true });
        this.snapshotter = this.makeSnapshotter();
      }
      if (report.collected) this.lastRetention = { ...report, at: new Date().toISOString() };
      return report;
    });
  }

  /** The last retention pass that had work to do (over budget, or sessions past the age limit), if any. */
  get lastRetentionRun(): RetentionRun | undefined {
    return this.lastRetention;
  }

  /**
   * Walks the whole directory and counts what the watcher missed (see
   * `changeTracking`). Runs by itself once the directory is quiet after
   * snapshots; resolves with the missed paths.
   */
  verify(): Promise<string[]> {
    return this.queue.run(async () => {
      const missed = await this.snapshotter.verify();
      await this.store.flush();
      return missed;
    });
  }

  /** What change-driven snapshots did (undefined when watching is off). */
  get changeTracking(): ChangeTrackingStats | undefined {
    return this.snapshotter.changeTracking;
  }

  /** The directory's watcher, when watching is on (tests use it to simulate failures). */
  get watcher(): SnapshotWatch['watcher'] | undefined {
    return this.watch?.watcher;
  }

  /** Bytes the shadow store takes on disk. */
  storeSize(): Promise<number> {
    return this.store.storeSize();
  }

  /** Lets go of this root; the last user closes the store. */
  async release(): Promise<void> {
    const entry = WorkspaceRoot.open.get(this.key);
    if (entry && --entry.users > 0) return;
    WorkspaceRoot.open.delete(this.key);
    await this.queue.idle().catch(() => undefined);
    await this.watch?.close();
    // A save left for later goes to disk now, so the next process starts warm.
    await this.snapshotter.saveCache().catch(() => undefined);
    await this.store.close();
  }

  /**
   * Nested repositories' blobs are referenced, not copied, like the
   * workspace repository's: their object directories become read-only
   * fallbacks of the store, remembered across restarts.
   */
  private async registerNested(nested: readonly NestedSnapshot[]): Promise<void> {
    const found: string[] = [];
    const visit = (list: readonly NestedSnapshot[]) => {
      for (const n of list) {
        if (n.snapshot.gitDir) found.push(n.snapshot.gitDir);
        visit(n.snapshot.nested);
      }
    };
    visit(nested);
    const fresh = found.filter((d) => !this.nestedGitDirs.has(d));
    if (fresh.length === 0) return;
    for (const dir of fresh) {
      await this.store.addFallbackGitDir(dir);
      this.nestedGitDirs.add(dir);
    }
    await writeFileAtomic(this.nestedFile, `${JSON.stringify([...this.nestedGitDirs])}\n`, shadowTmpDir(this.store.layout.shadowDir));
  }

  private async loadNestedRepositories(): Promise<void> {
    const list: unknown = JSON.parse(await readFile(this.nestedFile, 'utf8').catch(() => '[]'));
    if (!Array.isArray(list)) return;
    for (const dir of list) {
      if (typeof dir !== 'string') continue;
      // A nested repository removed since is simply no longer readable.
      await this.store.addFallbackGitDir(dir).then(
        () => this.nestedGitDirs.add(dir),
        () => undefined,
      );
    }
  }

  private get nestedFile(): string {
    return join(this.store.layout.root, 'nested-repositories.json');
  }
}

/** The server's own state never belongs in a snapshot, even when it lives inside the workspace. */
function stateDirExclude(workspaceDir: string, stateDir: string): string[] {
  const rel = relativeInside(workspaceDir, stateDir);
  return rel ? [`/${rel}/`] : [];
}

const DAY_MS = 24 * 60 * 60 * 1000;
