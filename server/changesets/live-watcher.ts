import { watch, type FSWatcher } from 'node:fs';
import { sep } from 'node:path';

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
 * Debounced recursive file watching of a session's working directories,
 * ignoring `.git` internals and the server's own state. Falls back to
 * periodic polling where `fs.watch` cannot watch recursively.
 */
export class LiveWatcher {
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly opts: LiveWatcherOptions) {
    for (const dir of opts.dirs) {
      try {
        const watcher = watch(dir, { recursive: true }, (_event, name) => this.onEvent(dir, name));
        watcher.on('error', () => this.startPolling());
        this.watchers.push(watcher);
      } catch {
        this.startPolling();
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers) w.close();
    if (this.timer) clearTimeout(this.timer);
    if (this.poller) clearInterval(this.poller);
  }

  private onEvent(dir: string, name: string | Buffer | null): void {
    if (name !== null) {
      const rel = name.toString();
      if (rel === '.git' || rel.startsWith(`.git${sep}`) || rel.includes(`${sep}.git${sep}`)) {
        // Index and ref updates (a commit) change what `uncommitted` and `branch` compare against.
        if (!/(^|[\\/])(index|HEAD|refs|packed-refs)/.test(rel)) return;
      }
      const abs = `${dir}${sep}${rel}`;
      if (this.opts.ignore.some((p) => abs === p || abs.startsWith(p + sep))) return;
    }
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
