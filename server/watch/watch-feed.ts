/**
 * The snapshot engine's change feed over a directory watcher: the paths
 * touched between two snapshots, trusted only while the watcher kept every
 * event in between.
 */
import type { ChangeFeed, TakenChanges, TouchedPath } from '../snapshot/touched-paths.js';
import { MAX_TOUCHED_PATHS } from '../snapshot/change-tracking.js';
import { relativeEventPath, type DirectoryEvent, type DirectoryWatcher } from './directory-watcher.js';

export class WatchFeed implements ChangeFeed {
  private touched = new Map<string, boolean>();
  private overflowed = false;
  /** Generation of the watcher at the previous take; undefined before the first. */
  private seenGeneration: number | undefined;
  private readonly stop: () => void;

  /** `ignore`: '/'-separated prefixes relative to the directory whose events do not matter (the server's state). */
  constructor(
    private readonly watcher: DirectoryWatcher,
    private readonly ignore: readonly string[] = [],
  ) {
    this.stop = watcher.onEvents((events) => this.note(events));
  }

  async take(): Promise<TakenChanges> {
    await this.watcher.ready();
    const synced = await this.watcher.sync();
    const generation = this.watcher.generation;
    const continuous = synced && this.seenGeneration === generation;
    const first = this.seenGeneration === undefined;
    this.seenGeneration = synced ? generation : undefined;
    const touched = this.touched;
    const overflowed = this.overflowed;
    this.touched = new Map();
    this.overflowed = false;
    if (!synced) return { unknown: this.watcher.state === 'watching' ? 'the watcher could not be synchronised' : `the watcher is ${this.watcher.state}` };
    if (!continuous) return { unknown: first ? 'first snapshot with this watcher' : 'the watcher restarted' };
    if (overflowed) return { unknown: `more than ${MAX_TOUCHED_PATHS} paths touched` };
    const out: TouchedPath[] = [];
    for (const [path, created] of touched) out.push({ path, created });
    return { touched: out };
  }

  requestRestart(): void {
    this.watcher.restart();
  }

  close(): void {
    this.stop();
  }

  private note(events: readonly DirectoryEvent[]): void {
    if (this.overflowed) return;
    for (const e of events) {
      const rel = relativeEventPath(this.watcher.dir, e.path);
      // The root's own .git holds nothing the tree records; what in it matters (info/exclude) is read at every snapshot.
      if (rel === undefined || rel === '.git' || rel.startsWith('.git/') || this.ignore.some((p) => rel === p || rel.startsWith(p + '/'))) continue;
      if (e.type === 'create') this.touched.set(rel, true);
      else if (!this.touched.has(rel)) this.touched.set(rel, false);
    }
    if (this.touched.size > MAX_TOUCHED_PATHS) {
      this.overflowed = true;
      this.touched.clear();
    }
  }
}
