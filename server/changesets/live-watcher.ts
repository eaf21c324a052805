import { sep } from 'node:path';
import { DirectoryWatcher } from '../watch/directory-watcher.js';

/** Options of {@link LiveWatcher}. */
export interface LiveWatcherOptions {
  /** Directories to watch (recursively). */
  dirs: readonly string[];
  /** Quiet time after the last event before `onChange` runs (ms). */
  debounceMs: number;
  /** Paths (absolute prefixes) whose events are ignored, e.g. the state directory. */
  ignore: readonly string[];
  /** Runs after a burst of changes; the next burst waits for it. */
  onChange: () => Promise<void>;
  /** Polling period used when recursive watching is unavailable (ms). */
  pollMs?: number;
}

/**
 * Debounced recursive file watching of a session's working directories
 * (through the one watcher per directory the process shares), ignoring
 * `.git` internals and the server's own state. Falls back to periodic
 * polling when the directory cannot be watched.
 */
export class LiveWatcher {
  private readonly watchers: DirectoryWatcher[] = [];
  private readonly stops: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly opts: LiveWatcherOptions) {
    for (const dir of opts.dirs) {
      const watcher = DirectoryWatcher.acquire(dir, { ignore: opts.ignore });
      this.watchers.push(watcher);
      this.stops.push(
        watcher.onEvents((events) => {
          for (const e of events) {
            // The directory's own attribute change is how snapshots synchronise with the watcher, not an edit.
            if (e.path !== dir) this.onEvent(dir, e.path.slice(dir.length + 1));
          }
        }),
        watcher.onFailure(() => this.startPolling()),
      );
      if (watcher.state === 'failed') this.startPolling();
    }
  }

  /** Stops watching; resolves once a refresh already running has finished. */
  close(): Promise<void> {
    this.closed = true;
    for (const stop of this.stops.splice(0)) stop();
    for (const w of this.watchers.splice(0)) void w.release();
    if (this.timer) clearTimeout(this.timer);
    if (this.poller) clearInterval(this.poller);
    return this.running ?? Promise.resolve();
  }

  private onEvent(dir: string, rel: string): void {
    if (rel === '.git' || rel.startsWith(`.git${sep}`) || rel.includes(`${sep}.git${sep}`)) {
      // Index and ref updates (a commit) change what `uncommitted` and `branch` compare against.
      if (!/(^|[\\/])(index|HEAD|refs|packed-refs)/.test(rel)) return;
    }
    const abs = `${dir}${sep}${rel}`;
    if (this.opts.ignore.some((p) => abs === p || abs.startsWith(p + sep))) return;
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), this.opts.debounceMs);
  }

  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.opts.onChange().catch(() => undefined);
    await this.running;
    this.running = undefined;
    if (this.again && !this.closed) {
      this.again = false;
      this.schedule();
    }
  }

  private startPolling(): void {
    if (this.poller || this.closed) return;
    this.poller = setInterval(() => void this.run(), this.opts.pollMs ?? 2000);
    this.poller.unref();
  }
}
