/**
 * The watch behind one working directory's snapshots: its change feed, and
 * the verification walk that runs once the directory has been quiet for a
 * while after snapshots that trusted the watcher.
 */
import { relativeInside } from '../paths.js';
import type { ListingSource } from '../snapshot/given-listings.js';
import { DirectoryWatcher } from './directory-watcher.js';
import { WatchFeed } from './watch-feed.js';

/** Default quiet time before a verification walk. */
const DEFAULT_VERIFY_IDLE_MS = 30_000;

/** Options of {@link openSnapshotWatch}. */
export interface SnapshotWatchOptions {
  /** `false` turns watching off: every snapshot walks the tree. Default: on, unless `CHANGESET_SERVER_WATCH` is `0`, `off` or `false`. */
  watch?: boolean;
  /** Quiet milliseconds before a verification walk. Default: `CHANGESET_SERVER_VERIFY_IDLE_MS`, else 30,000. */
  verifyIdleMs?: number;
}

/** True unless watching is turned off by option or environment. */
function watchEnabled(option: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (option !== undefined) return option;
  const v = env['CHANGESET_SERVER_WATCH']?.trim().toLowerCase();
  return !(v === '0' || v === 'off' || v === 'false' || v === 'no');
}

function verifyIdleMs(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (option !== undefined) return option;
  const v = Number(env['CHANGESET_SERVER_VERIFY_IDLE_MS']);
  return Number.isFinite(v) && v >= 0 && env['CHANGESET_SERVER_VERIFY_IDLE_MS'] !== '' ? v : DEFAULT_VERIFY_IDLE_MS;
}

export class SnapshotWatch {
  readonly feed: WatchFeed;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    readonly watcher: DirectoryWatcher,
    stateDirInside: string | undefined,
    private readonly idleMs: number,
  ) {
    this.feed = new WatchFeed(watcher, stateDirInside ? [stateDirInside] : []);
  }

  /** Runs `verify` once the directory has had no snapshot for the idle time; each call starts the wait again. */
  armVerification(verify: () => Promise<unknown>): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.closed) void verify().catch(() => undefined);
    }, this.idleMs);
    this.timer.unref();
  }

  /**
   * The listings the watcher read as it set itself up, for the first walk
   * (see {@link ListingSource}); `clock` is the file system's time read
   * before the watcher was started, and when (`performance.now()`).
   */
  listings(clock: { ms: number; at: number }): ListingSource {
    return {
      clockMs: clock.ms,
      take: (dir) => this.watcher.takeListing(dir, clock.at),
      release: () => this.watcher.dropListings(),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.feed.close();
    await this.watcher.release();
  }

  static open(dir: string, stateDir: string, opts: SnapshotWatchOptions = {}): SnapshotWatch | undefined {
    if (!watchEnabled(opts.watch)) return undefined;
    const inside = relativeInside(dir, stateDir);
    const watcher = DirectoryWatcher.acquire(dir, { ignore: inside ? [stateDir] : [] });
    return new SnapshotWatch(watcher, inside || undefined, verifyIdleMs(opts.verifyIdleMs));
  }
}
