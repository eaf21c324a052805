/**
 * A recursive watch built from one non-recursive `fs.watch` per directory.
 * On Linux every such watch shares the event loop's single inotify
 * descriptor, so events reach JavaScript in the order the kernel queued
 * them, with no batching delay: a marker event proves every earlier change
 * has been delivered within a fraction of a millisecond. New directories
 * are watched first and listed second, so nothing created in them is
 * missed; a directory moved or renamed is watched again under its new path.
 */
import { lstatSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';
import type { DirectoryEvent } from './directory-watcher.js';

type Emit = (error: Error | null, events: DirectoryEvent[]) => void;

const YIELD_EVERY_MS = 10;

class InotifyTree {
  private readonly watches = new Map<string, { handle: FSWatcher; ino: number }>();
  private readonly rootName: string;
  private closed = false;

  constructor(
    private readonly root: string,
    private readonly ignore: readonly string[],
    private readonly emit: Emit,
  ) {
    this.rootName = basename(root);
  }

  /** Watches every directory below the root; resolves once all are watched. */
  async start(): Promise<void> {
    const queue = [this.root];
    let last = performance.now();
    for (let i = 0; i < queue.length && !this.closed; i++) {
      this.watchDir(queue[i]!, queue, false);
      if (performance.now() - last > YIELD_EVERY_MS) {
        await new Promise<void>((r) => setImmediate(r));
        last = performance.now();
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) w.handle.close();
    this.watches.clear();
  }

  /** Watches `dir` and queues its subdirectories; `report`: tell about them as created (their parent is new). */
  private watchDir(dir: string, queue: string[], report: boolean): void {
    if (this.closed || this.isIgnored(dir)) return;
    let ino: number;
    let handle: FSWatcher;
    try {
      ino = lstatSync(dir).ino;
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
    let names: { name: string; isDirectory(): boolean }[];
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

/** Subscribes to every change below `dir` through an {@link InotifyTree}; resolves once all directories are watched. */
export async function subscribeInotifyTree(dir: string, emit: Emit, ignore: readonly string[]): Promise<{ unsubscribe(): Promise<void> }> {
  const tree = new InotifyTree(dir, ignore, emit);
  try {
    await tree.start();
  } catch (error) {
    tree.close();
    throw error;
  }
  return { unsubscribe: async () => tree.close() };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
