/**
 * One recursive watcher per working directory and process, shared by
 * everything that needs to know what changed there: the snapshot engine's
 * change feed, automatic turns and live changesets. On Linux it is one
 * `fs.watch` per directory (inotify-tree.ts), elsewhere @parcel/watcher.
 */
import { chmodSync, lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import type { DirListing } from '../snapshot/given-listings.js';
import { subscribeInotifyTree } from './inotify-tree.js';

/** One change reported by the watcher (absolute path). */
export interface DirectoryEvent {
  path: string;
  type: 'create' | 'update' | 'delete';
}

type EventCallback = (error: Error | null, events: DirectoryEvent[]) => unknown;
interface Subscription {
  unsubscribe(): Promise<void>;
  /** The one-per-directory watch keeps the listings it read while setting up, for the first snapshot (see {@link DirectoryWatcher.takeListing}). */
  takeListing?(dir: string, notBefore: number): DirListing | undefined;
  dropListings?(): void;
}
interface ParcelWatcher {
  subscribe(dir: string, fn: EventCallback, opts?: { ignore?: string[] }): Promise<Subscription>;
}

/** Lifecycle of a watcher. */
export type WatchState = 'starting' | 'watching' | 'failed' | 'closed';

const SYNC_TIMEOUT_MS = 2000;
const RETRY_DELAYS_MS = [1000, 5000, 30_000, 300_000];
const S_ISGID = 0o2000;

/**
 * On Linux, one `fs.watch` per directory (see inotify-tree.ts): events in
 * kernel order without @parcel/watcher's batching delay (50 ms within
 * 500 ms of the previous batch), which every synchronisation would wait
 * for. Elsewhere @parcel/watcher (FSEvents, ReadDirectoryChangesW).
 * `CHANGESET_SERVER_WATCHER=parcel` or `=inotify` picks one (benchmarks).
 */
function useInotifyTree(): boolean {
  const forced = process.env['CHANGESET_SERVER_WATCHER'];
  if (forced === 'parcel') return false;
  return forced === 'inotify' || process.platform === 'linux';
}

/** While set, watchers wait for it before they set themselves up (see {@link deferWatchersUntil}). */
let startGate: Promise<unknown> | undefined;

/**
 * Watchers started from now on begin setting themselves up (listing and
 * watching every directory) only once `released` settles: `serve` answers
 * first, then reads the working directory. Snapshots wait for their
 * watcher, so nothing is missed meanwhile: the first walk comes after.
 */
export function deferWatchersUntil(released: Promise<unknown>): void {
  const gate = released.then(
    () => undefined,
    () => undefined,
  );
  startGate = gate;
  void gate.then(() => {
    if (startGate === gate) startGate = undefined;
  });
}

/** What an abandoned set-up resolves with. */
const NO_SUBSCRIPTION: Subscription = { unsubscribe: async () => undefined };

let parcel: ParcelWatcher | undefined | null;
function loadParcel(): ParcelWatcher | undefined {
  if (parcel === undefined) {
    try {
      parcel = createRequire(import.meta.url)('@parcel/watcher') as ParcelWatcher;
    } catch {
      // No prebuilt binary for this platform: snapshots walk the tree instead.
      parcel = null;
    }
  }
  return parcel ?? undefined;
}

/**
 * A recursive watch of one directory. `generation` changes whenever events
 * may have been lost (start, failure, restart, a sync that timed out), so a
 * consumer that saw the same generation before and after a period knows it
 * was told about every change in between.
 */
export class DirectoryWatcher {
  private static readonly open = new Map<string, DirectoryWatcher>();
  private users = 0;
  private subscription: Subscription | undefined;
  private readonly eventListeners = new Set<(events: readonly DirectoryEvent[]) => void>();
  private readonly failureListeners = new Set<(error: Error) => void>();
  private syncWaiter: ((delivered: boolean) => void) | undefined;
  private syncChain: Promise<boolean> = Promise.resolve(true);
  private retryTimer: NodeJS.Timeout | undefined;
  private retries = 0;
  private starting: Promise<void> | undefined;
  /** Identifies the latest set-up: an older one stops where it is. */
  private attempt: object | undefined;
  /** The latest set-up waits for the start gate (see {@link deferWatchersUntil}). */
  private gated = false;
  private muted = false;
  /** A synchronisation marker has arrived at least once: the watcher reports the root's own changes. */
  private markerSeen = false;
  /** It never did within the time allowed: synchronising is not possible here. */
  private syncUnsupported = false;
  state: WatchState = 'starting';
  /** Changes whenever continuity of events is lost. */
  generation = 0;
  /** Why the watcher last failed, for status. */
  lastError: string | undefined;

  private constructor(
    readonly dir: string,
    private readonly ignore: readonly string[],
  ) {}

  /** The watcher of `dir` (a real path), started on first use and shared until the last user releases it. */
  static acquire(dir: string, opts: { ignore?: readonly string[] } = {}): DirectoryWatcher {
    let watcher = DirectoryWatcher.open.get(dir);
    if (!watcher) {
      watcher = new DirectoryWatcher(dir, opts.ignore ?? []);
      DirectoryWatcher.open.set(dir, watcher);
      watcher.start();
    }
    watcher.users++;
    return watcher;
  }

  /** Resolves once the watcher is watching (true) or has failed (false). */
  async ready(): Promise<boolean> {
    while (this.starting) await this.starting;
    return this.state === 'watching';
  }

  /**
   * The listing of `dir` the watch read as it set itself up, if that set-up
   * began at or after `notBefore` (`performance.now()`) and nothing has
   * happened in the directory since; given once. Setting up lists every
   * directory (new ones are watched first and listed second), so the first
   * snapshot takes these instead of listing each directory again.
   */
  takeListing(dir: string, notBefore: number): DirListing | undefined {
    return this.subscription?.takeListing?.(dir, notBefore);
  }

  /** Lets go of the listings no snapshot took. */
  dropListings(): void {
    this.subscription?.dropListings?.();
  }

  /** Calls `listener` with each batch of events; returns the function that stops it. */
  onEvents(listener: (events: readonly DirectoryEvent[]) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Calls `listener` when the watcher fails (events may have been lost); returns the function that stops it. */
  onFailure(listener: (error: Error) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /**
   * Waits until every change made before the call has been delivered to the
   * listeners. The kernel queues events of one watch in order, so the
   * directory's own attribute change (a chmod to its current mode: only its
   * ctime moves) arriving means everything before it has arrived too.
   * Resolves false when that cannot be done or took too long (the watch is
   * then started afresh).
   */
  sync(): Promise<boolean> {
    const next = this.syncChain.then(() => this.syncOnce());
    this.syncChain = next;
    return next;
  }

  private syncOnce(): Promise<boolean> {
    if (this.state !== 'watching' || this.syncUnsupported) return Promise.resolve(false);
    let mode: number;
    try {
      const st = lstatSync(this.dir);
      const uid = process.getuid?.() ?? 0;
      // chmod by a non-member of the directory's group would clear setgid: never change the user's modes.
      if (st.mode & S_ISGID && uid !== 0 && !(process.getgroups?.() ?? []).includes(st.gid)) return Promise.resolve(false);
      mode = st.mode & 0o7777;
    } catch {
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.syncWaiter = undefined;
        // A watcher that never reports the root's own changes cannot be synchronised with; one that
        // did may be stuck, and a late marker could be taken for the next one: start it afresh.
        if (this.markerSeen) this.restart();
        else this.syncUnsupported = true;
        resolve(false);
      }, SYNC_TIMEOUT_MS);
      this.syncWaiter = (delivered) => {
        clearTimeout(timer);
        this.syncWaiter = undefined;
        resolve(delivered);
      };
      try {
        chmodSync(this.dir, mode);
      } catch {
        clearTimeout(timer);
        this.syncWaiter = undefined;
        resolve(false);
      }
    });
  }

  /** Drops the subscription and subscribes again (events in between are lost: the generation changes). */
  restart(): void {
    if (this.state === 'closed') return;
    const old = this.subscription;
    this.subscription = undefined;
    void old?.unsubscribe().catch(() => undefined);
    this.start();
  }

  /** Test hook: behaves exactly as if the native watcher had reported `error`. */
  injectFailure(error: Error): void {
    this.fail(error);
  }

  /**
   * Test hook: while muted, changes are not delivered (synchronisation still
   * works), as a watcher that silently misses changes would behave.
   */
  muteForTests(muted: boolean): void {
    this.muted = muted;
  }

  /** Lets go of the watcher; the last user stops it. */
  async release(): Promise<void> {
    if (--this.users > 0) return;
    DirectoryWatcher.open.delete(this.dir);
    this.state = 'closed';
    this.generation++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.syncWaiter?.(false);
    // A subscription still being set up unsubscribes itself once it is (state is closed); one waiting for
    // the start gate never begins.
    if (!this.gated) await this.starting;
    const sub = this.subscription;
    this.subscription = undefined;
    await sub?.unsubscribe().catch(() => undefined);
  }

  private start(): void {
    this.state = 'starting';
    this.generation++;
    const onEvents: EventCallback = (error, events) => this.deliver(error, events);
    // This set-up is abandoned as soon as the watcher is closed or started afresh: a release does not wait for it to finish.
    const attempt = {};
    this.attempt = attempt;
    const abandoned = (): boolean => this.state === 'closed' || this.attempt !== attempt;
    let subscribe: () => Promise<Subscription>;
    if (useInotifyTree()) {
      subscribe = () => subscribeInotifyTree(this.dir, onEvents, this.ignore, abandoned);
    } else {
      const watcher = loadParcel();
      if (!watcher) {
        this.fail(new Error('@parcel/watcher is not available on this platform'), false);
        return;
      }
      subscribe = () => watcher.subscribe(this.dir, onEvents, this.ignore.length ? { ignore: [...this.ignore] } : {});
    }
    const gate = startGate;
    this.gated = gate !== undefined;
    const subscribing = gate
      ? gate.then(() => {
          if (this.attempt === attempt) this.gated = false;
          return abandoned() ? NO_SUBSCRIPTION : subscribe();
        })
      : subscribe();
    const started = subscribing.then(
      async (sub) => {
        if (this.state === 'closed' || this.starting !== starting) {
          await sub.unsubscribe().catch(() => undefined);
          return sub;
        }
        this.subscription = sub;
        this.state = 'watching';
        this.retries = 0;
        return sub;
      },
      (error: unknown) => {
        if (this.starting === starting) this.fail(error instanceof Error ? error : new Error(String(error)));
        return undefined;
      },
    );
    const starting: Promise<void> = started.then(() => {
      if (this.starting === starting) this.starting = undefined;
    });
    this.starting = starting;
  }

  private deliver(error: Error | null, events: DirectoryEvent[]): void {
    if (this.state === 'closed') return;
    if (error) {
      this.fail(error);
      return;
    }
    if (this.muted) events = events.filter((e) => e.path === this.dir);
    for (const listener of this.eventListeners) listener(events);
    if (this.syncWaiter && events.some((e) => e.path === this.dir)) {
      this.markerSeen = true;
      this.syncWaiter(true);
    }
  }

  private fail(error: Error, retry = true): void {
    if (this.state === 'closed') return;
    this.state = 'failed';
    this.generation++;
    this.lastError = error.message;
    this.starting = undefined;
    this.syncWaiter?.(false);
    const sub = this.subscription;
    this.subscription = undefined;
    void sub?.unsubscribe().catch(() => undefined);
    for (const listener of this.failureListeners) listener(error);
    if (retry && this.retries < RETRY_DELAYS_MS.length) {
      const delay = RETRY_DELAYS_MS[this.retries++]!;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (this.state === 'failed') this.start();
      }, delay);
      this.retryTimer.unref();
    }
  }
}

/** `path` relative to `dir` with '/' separators, or undefined when it is `dir` itself or outside it. */
export function relativeEventPath(dir: string, path: string): string | undefined {
  if (path.length <= dir.length + 1 || !path.startsWith(dir) || path[dir.length] !== sep) return undefined;
  const rel = path.slice(dir.length + 1);
  return sep === '/' ? rel : rel.split(sep).join('/');
}
