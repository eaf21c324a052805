/**
 * A recursive watch built from one non-recursive `fs.watch` per directory.
 * On Linux every such watch shares the event loop's single inotify
 * descriptor, so events reach JavaScript in the order the kernel queued
 * them, with no batching delay: a marker event proves every earlier change
 * has been delivered within a fraction of a millisecond. New directories
 * are watched first and listed second, so nothing created in them is
 * missed; a directory moved or renamed is watched again under its new path.
 */
import { lstatSync, readdirSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';
import { liteLstat } from '../snapshot/fast-lstat.js';
import type { DirListing } from '../snapshot/given-listings.js';
import { KIND_DIR, KIND_FILE, KIND_OTHER, KIND_SYMLINK } from '../snapshot/stat-cache.js';
import type { DirectoryEvent } from './directory-watcher.js';

type Emit = (error: Error | null, events: DirectoryEvent[]) => void;

const YIELD_EVERY_MS = 10;
/** Listings read while setting up that no snapshot took within this time are let go. */
const KEEP_LISTINGS_MS = 60_000;

/** A recursive watch; `takeListing` hands a snapshot the listings read as it was set up (see `DirectoryWatcher.takeListing`). */
interface InotifySubscription {
  unsubscribe(): Promise<void>;
  takeListing(dir: string, notBefore: number): DirListing | undefined;
  dropListings(): void;
}

class InotifyTree {
  private readonly watches = new Map<string, { handle: FSWatcher; ino: number }>();
  private readonly rootName: string;
  private closed = false;
  /**
   * Each directory's listing as the set-up read it, with its stat from
   * before, until a snapshot takes it or an event in the directory makes
   * it stale; undefined once let go.
   */
  private listings: Map<string, DirListing> | undefined = new Map();
  /** `performance.now()` when the set-up began: every listing was read after it. */
  private readonly startedAt = performance.now();
  private dropTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly root: string,
    private readonly ignore: readonly string[],
    private readonly emit: Emit,
    private readonly abandoned: () => boolean = () => false,
  ) {
    this.rootName = basename(root);
  }

  /** Watches every directory below the root; resolves once all are watched. */
  async start(): Promise<void> {
    const queue = [this.root];
    let last = performance.now();
    for (let i = 0; i < queue.length && !this.closed && !this.abandoned(); i++) {
      this.watchDir(queue[i]!, queue, false, true);
      if (performance.now() - last > YIELD_EVERY_MS) {
        await new Promise<void>((r) => setImmediate(r));
        last = performance.now();
      }
    }
    this.dropTimer = setTimeout(() => this.dropListings(), KEEP_LISTINGS_MS);
    this.dropTimer.unref();
  }

  /** The listing of `dir` read during a set-up that began at or after `notBefore`, once. */
  takeListing(dir: string, notBefore: number): DirListing | undefined {
    if (!this.listings || this.startedAt < notBefore) return undefined;
    const listing = this.listings.get(dir);
    if (listing) this.listings.delete(dir);
    return listing;
  }

  dropListings(): void {
    this.listings = undefined;
    if (this.dropTimer) clearTimeout(this.dropTimer);
  }

  close(): void {
    this.closed = true;
    this.dropListings();
    for (const w of this.watches.values()) w.handle.close();
    this.watches.clear();
  }

  /**
   * Watches `dir` and queues its subdirectories; `report`: tell about them
   * as created (their parent is new); `keep`: keep the listing for the
   * first snapshot, which then need not read it again.
   */
  private watchDir(dir: string, queue: string[], report: boolean, keep = false): void {
    if (this.closed || this.isIgnored(dir)) return;
    let ino: number;
    let handle: FSWatcher;
    // Before the listing is read: a snapshot uses the listing only while the directory still has this stat.
    let st: { mtimeMs: number; ctimeMs: number; ino: number } | undefined;
    try {
      st = liteLstat(dir);
      if (!st) return;
      ino = st.ino;
      handle = watch(dir, { persistent: false }, (type, name) => this.onEvent(dir, type, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Gone or replaced since it was listed: its parent's events tell. Unreadable: snapshots cannot
      // record it either, and making it readable is an attribute change its parent reports.
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EPERM') return;
      throw error;
    }
    handle.on('error', (error) => this.fail(error));
    this.watches.get(dir)?.handle.close();
    this.watches.set(dir, { handle, ino });
    let names: Dirent[];
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      if (!d.isDirectory()) continue;
      const child = `${dir}/${d.name}`;
      if (report) this.emit(null, [{ path: child, type: 'create' }]);
      queue.push(child);
    }
    if (keep && this.listings) this.keepListing(dir, names, st);
  }

  private keepListing(dir: string, dirents: Dirent[], st: { mtimeMs: number; ctimeMs: number; ino: number }): void {
    const names = new Array<string>(dirents.length);
    const kinds = new Uint8Array(dirents.length);
    for (let i = 0; i < dirents.length; i++) {
      const d = dirents[i]!;
      // A name that is not valid UTF-8 was decoded with U+FFFD: the walk reads such a directory itself, as bytes.
      if (d.name.includes('\uFFFD')) return;
      names[i] = d.name;
      kinds[i] = d.isFile()
        ? KIND_FILE
        : d.isDirectory()
          ? KIND_DIR
          : d.isSymbolicLink()
            ? KIND_SYMLINK
            : d.isFIFO() || d.isSocket() || d.isBlockDevice() || d.isCharacterDevice()
              ? KIND_OTHER
              : 0;
    }
    this.listings!.set(dir, { names, kinds, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino });
  }

  private onEvent(dir: string, type: string, name: string | Buffer | null): void {
    if (this.closed || !this.watches.has(dir)) return;
    if (name === null) {
      this.fail(new Error(`a change in ${dir} was reported without a name`));
      return;
    }
    const path = `${dir}/${name.toString()}`;
    // A change of the root's own attributes (how snapshots synchronise) is reported with the root's name.
    if (dir === this.root && name.toString() === this.rootName) {
      this.emit(null, [{ path: this.root, type: 'update' }]);
      // Unless the root also holds an entry of its own name, that was all.
      if (!exists(path)) return;
    }
    // Whatever changed in the directory, the listing read while setting up may no longer be its entries.
    this.listings?.delete(dir);
    if (this.isIgnored(path)) return;
    if (type !== 'rename' && this.watches.has(path)) {
      this.emit(null, [{ path, type: 'update' }]);
      return;
    }
    let st: { ino: number; isDirectory(): boolean } | undefined;
    try {
      st = lstatSync(path);
    } catch {
      st = undefined;
    }
    const watched = this.watches.get(path);
    if (watched && (!st?.isDirectory() || st.ino !== watched.ino)) this.unwatchTree(path);
    if (st?.isDirectory() && this.watches.get(path)?.ino !== st.ino) {
      this.emit(null, [{ path, type: 'create' }]);
      try {
        const queue = [path];
        for (let i = 0; i < queue.length; i++) this.watchDir(queue[i]!, queue, true);
      } catch (error) {
        this.fail(error as Error);
      }
      return;
    }
    this.emit(null, [{ path, type: type !== 'rename' ? 'update' : st ? 'create' : 'delete' }]);
  }

  private unwatchTree(path: string): void {
    const prefix = path + '/';
    for (const [p, w] of this.watches) {
      if (p === path || p.startsWith(prefix)) {
        w.handle.close();
        this.watches.delete(p);
        this.listings?.delete(p);
      }
    }
  }

  private isIgnored(path: string): boolean {
    return this.ignore.some((p) => path === p || path.startsWith(p + '/'));
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.close();
    this.emit(error, []);
  }
}

/** Subscribes to every change below `dir` through an {@link InotifyTree}; resolves once all directories are watched, or once `abandoned()` says to stop. */
export async function subscribeInotifyTree(dir: string, emit: Emit, ignore: readonly string[], abandoned?: () => boolean): Promise<InotifySubscription> {
  const tree = new InotifyTree(dir, ignore, emit, abandoned);
  try {
    await tree.start();
  } catch (error) {
    tree.close();
    throw error;
  }
  return {
    unsubscribe: async () => tree.close(),
    takeListing: (d, notBefore) => tree.takeListing(d, notBefore),
    dropListings: () => tree.dropListings(),
  };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
