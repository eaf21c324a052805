import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { collectTreeChanges, type RootSource, type RootTrees } from '../changes/collect-changes.js';
import type { FileChange } from '../changes/file-change.js';
import { statsOf, type FileStats } from '../changes/file-stats.js';
import { detectRenames } from '../changes/renames.js';
import { displayPathBytes } from '../path-bytes.js';
import { isInsideDir, toSlashes } from '../paths.js';
import { unreadFiles } from '../snapshot/index.js';
import { CachingReads } from '../store/caching-reads.js';
import { TreeReader } from '../store/tree.js';
import { displayPath } from './display-path.js';
import { WorkspaceRoot, type WorkspaceRootOptions } from './workspace-root.js';

/** A working directory's reads, cached for the session. */
export interface SessionSource extends RootSource {
  store: CachingReads;
}

/** Reports snapshot progress: files done, and the total when known. */
export type ProgressReport = (done: number, total?: number) => void;

/**
 * A session's working directories and what reads them: the store and
 * snapshotter of each ({@link WorkspaceRoot}), the cached tree reads, the
 * labels reviewers see. What code outside the session layer reads of a
 * session's files goes through here.
 */
export class SessionFiles {
  /** The working directories, as real paths; the first is the session's default. */
  readonly dirs: readonly string[];
  private readonly sourceList: readonly SessionSource[];
  private readonly statsCache = new Map<string, FileStats>();

  private constructor(private readonly rootList: readonly WorkspaceRoot[]) {
    this.dirs = rootList.map((r) => r.dir);
    this.sourceList = rootList.map((r): SessionSource => {
      const store = new CachingReads(r.store);
      return { dir: r.dir, store, reader: new TreeReader(store) };
    });
  }

  /** Opens (or shares) every working directory; none stays open when one fails. */
  static async open(dirs: readonly string[], options: Omit<WorkspaceRootOptions, 'dir'>): Promise<SessionFiles> {
    const roots: WorkspaceRoot[] = [];
    try {
      for (const dir of dirs) roots.push(await WorkspaceRoot.acquire({ ...options, dir }));
    } catch (error) {
      await Promise.allSettled(roots.map((r) => r.release()));
      throw error;
    }
    return new SessionFiles(roots);
  }

  /** Number of working directories. */
  get count(): number {
    return this.rootList.length;
  }

  /** The working directory at `index`; a negative index (a path outside them all) means the first, whose store keeps such files. */
  root(index: number): WorkspaceRoot {
    return this.rootList[Math.max(index, 0)]!;
  }

  /** Every working directory, in order. */
  list(): readonly WorkspaceRoot[] {
    return this.rootList;
  }

  /** The cached reads of the working directory at `index` (the first for a negative one). */
  source(index: number): SessionSource {
    return this.sourceList[Math.max(index, 0)]!;
  }

  /** The cached reads of every working directory, in order (what tree comparisons take). */
  treeSources(): readonly SessionSource[] {
    return this.sourceList;
  }

  /** Index of the working directory containing an absolute path, or -1. */
  rootIndexOf(absPath: string): number {
    return this.rootList.findIndex((r) => isInsideDir(r.dir, absPath));
  }

  /** Resolves a harness path: absolute as given, relative to the first working directory. */
  resolvePath(p: string): string {
    return isAbsolute(p) ? resolve(p) : resolve(this.rootList[0]!.dir, p);
  }

  /** The label a reviewer sees for a changed file; `path` is relative to its working directory, or '' when not known. */
  display(change: { absPath: string; root: number; path: string }): string {
    if (this.rootList.length > 1 && change.root >= 0) {
      return displayPathBytes(`${basename(this.rootList[change.root]!.dir)}/${change.path}`);
    }
    // Inside the working directory the label is the path itself: the same string, not a new copy for every
    // summary, timeline entry and changeset file that shows it.
    if (change.root === 0 && change.path !== '' && sep === '/') return displayPathBytes(change.path);
    const first = this.rootList[0]!;
    return displayPath(change.absPath, {
      workingDirectory: first.dir,
      ...(first.repository ? { repositoryRoot: first.repository.workTree } : {}),
    });
  }

  /** The label of an absolute path, in whichever working directory holds it. */
  displayOf(absPath: string): string {
    const root = this.rootIndexOf(absPath);
    return this.display({ absPath, root, path: root >= 0 ? toSlashes(relative(this.rootList[root]!.dir, absPath)) : absPath });
  }

  /** Writes what the stores hold in memory, so every object id handed out is readable after a crash. */
  async flush(): Promise<void> {
    await Promise.all(this.rootList.map((r) => r.store.flush()));
  }

  /** The file changes between two recorded states, with renames paired. */
  async changesBetween(before: readonly (RootTrees | undefined)[], after: readonly (RootTrees | undefined)[]): Promise<FileChange[]> {
    const changes = await collectTreeChanges(this.sourceList, before, after);
    return detectRenames(changes);
  }

  /** Line counts of a change, cached by content. */
  stats(change: FileChange): Promise<FileStats> {
    return statsOf(change, this.statsCache);
  }

  /** Snapshots every working directory in turn; `warn` hears what a snapshot could not read. */
  async snapshot(report: ProgressReport | undefined, warn: (line: string) => void): Promise<RootTrees[]> {
    const out: RootTrees[] = [];
    let counted = 0;
    for (const root of this.rootList) {
      let done = 0;
      // The count runs on across working directories, so it never goes back; a total is known for one directory only.
      const onProgress =
        report &&
        ((d: number, t?: number) => {
          done = d;
          report(counted + d, this.rootList.length === 1 ? t : undefined);
        });
      const result = await root.snapshot(onProgress);
      counted += done;
      for (const warning of result.warnings) warn(`${displayPathBytes(warning.path)}: ${warning.message}`);
      const unread = unreadFiles(result);
      out.push({ tree: result.tree, nested: result.nested.map((n) => ({ path: n.path, tree: n.tree })), ...(unread.length > 0 ? { unread } : {}) });
    }
    return out;
  }

  /** Forgets cached reads not used since `since` (ms): what earlier turns read is history. */
  dropUnusedSince(since: number): void {
    for (const source of this.sourceList) {
      source.store.dropUnusedSince(since);
      source.reader.dropUnusedSince(since);
    }
  }

  /** Lets go of every working directory (the last user of one closes its store). */
  async release(): Promise<void> {
    await Promise.allSettled(this.rootList.map((r) => r.release()));
  }
}
