/**
 * `WorkspaceSnapshotter`: captures a working directory as a git tree, cheaply
 * enough to run at the start and end of every agent turn. Reads the user's
 * repository (index, HEAD, info/exclude) but never writes to it; objects go to
 * the given store and the stat cache to `cacheDir`.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { closeSync, lstatSync, readFileSync, realpathSync, statSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { mkdirPrivateSync, openPrivateSync } from '../private-files.js';
import type { ObjectStore } from '../store/types.js';
import { BUILTIN_EXCLUDES, DEFAULT_NON_REPO_MAX_FILE_BYTES } from './builtin-excludes.js';
import { DEFAULT_CORE_SETTINGS, globalGitFiles, readCoreSettings, readFilterDrivers, type CoreSettings, type GitEnvironment } from './git-config.js';
import { EMPTY_TREE_OID } from './git-objects.js';
import { findGitRepository, pathInWorkTree, type GitRepositoryLocation } from './git-repository.js';
import { IgnoreStack, parseIgnoreFile, type IgnoreLevel } from './ignore-rules.js';
import { parseIndexSafely, readIndexBytes } from './index-file.js';
import { AttributeStack, parseAttributes, type AttributeLevel } from './git-attributes.js';
import { IndexLookup } from './index-lookup.js';
import { LstatPrefetch, PREFETCH_MIN_ENTRIES } from './lstat-prefetch.js';
import { loadStatCache, saveStatCache, type CachedEntry, type DirState } from './stat-cache.js';
import { Walker, type RuleContext, type SnapshotHooks, type SnapshotWarning, type UnreadFile, type UnreadMarks } from './walker.js';
import { ChangeTracker, HandedFeed, type ChangeTrackingStats, type WalkPlan } from './change-tracking.js';
import { buildTouchedTree, isTouchedAround, touchedBelow, type ChangeFeed, type TakenChanges, type TouchedNode, type TouchedPath } from './touched-paths.js';
import { MODE_GITLINK } from './git-objects.js';
import type { ListingSource } from './given-listings.js';

/** During a busy session the stat cache file is rewritten at most this often (see `scheduleSave`). */
const CACHE_SAVE_INTERVAL_MS = 30_000;

/** How to snapshot one workspace. */
export interface SnapshotOptions {
  /** The directory to capture. A repository's top, a directory inside one, or any directory. */
  root: string;
  /** Where blobs and trees are written. */
  store: ObjectStore;
  /**
   * A directory this snapshotter owns for its stat cache (created if
   * missing). Keep it outside the user's repository; when it is inside
   * `root` it is excluded from snapshots automatically.
   */
  cacheDir: string;
  /**
   * Extra exclude patterns in `.gitignore` syntax, relative to `root`, with
   * the highest precedence (a workspace `.gitignore` cannot re-include them).
   * Applied in repositories and elsewhere. Default: none.
   */
  extraExcludes?: readonly string[];
  /**
   * Excludes for workspaces that are not git repositories, with the lowest
   * precedence (like a global excludes file). `true` (default) uses
   * `BUILTIN_EXCLUDES`; `false` none; a list replaces the built-in list.
   * Never applied inside repositories, whose own ignore rules decide.
   */
  builtinExcludes?: boolean | readonly string[];
  /**
   * Files larger than this many bytes are not recorded (a warning says so).
   * Git LFS files are exempt, their content is never stored. Default: 50 MiB
   * outside repositories, no limit inside them.
   */
  maxFileBytes?: number;
  /** Also snapshot nested repositories and submodules as roots of their own. Default: true. */
  nested?: boolean;
  /**
   * Called at most every ~100 ms during a walk with the files recorded so far
   * and the previous snapshot's count (when known), and once at the end of
   * the walk with `done === total`.
   */
  onProgress?: (done: number, total?: number) => void;
  /** HOME and XDG_CONFIG_HOME used to find the global excludes and attributes files. Default: `process.env`. */
  env?: GitEnvironment;
  /**
   * Index entries from which a first snapshot stats files on a second
   * thread as well. Default: {@link PREFETCH_MIN_ENTRIES}, where it starts
   * to pay on this project's benchmark machine.
   */
  prefetchMinEntries?: number;
  /** Test hooks. */
  hooks?: SnapshotHooks;
  /**
   * Paths touched since the previous snapshot, from a file watcher: with it
   * a snapshot visits only those (or answers with the previous snapshot when
   * nothing was touched), and walks everything when the feed cannot vouch
   * for its list. Default: none, every snapshot walks the tree.
   */
  changes?: ChangeFeed;
  /**
   * Directory listings already read (by the file watcher as it set itself
   * up): a walk takes a directory's listing from here instead of reading
   * it again when the directory is unchanged since (see {@link ListingSource}).
   */
  listings?: ListingSource;
}

/**
 * The file system's current time as the stat cache compares it (a file
 * written now in `cacheDir`, its mtime), and `performance.now()` just
 * after: anything read after `at` was read at or after `ms`.
 */
export function fileSystemClock(cacheDir: string): { ms: number; at: number } {
  const clockFile = join(resolve(cacheDir), 'clock');
  mkdirPrivateSync(dirname(clockFile));
  const fd = openPrivateSync(clockFile, 'w');
  try {
    writeSync(fd, 'x');
  } finally {
    closeSync(fd);
  }
  const ms = lstatSync(clockFile).mtimeMs;
  return { ms, at: performance.now() };
}

/** A nested repository captured as a root of its own. */
export interface NestedSnapshot {
  /** Path relative to the parent root, '/'-separated. */
  path: string;
  /** Tree id of the nested repository's working tree. */
  tree: string;
  /** The nested snapshot in full. */
  snapshot: SnapshotResult;
}

/** The outcome of one snapshot. */
export interface SnapshotResult {
  /** Tree id of the workspace (the empty tree when nothing is recorded). */
  tree: string;
  /** Number of blobs, symlinks and gitlinks recorded in the tree. */
  files: number;
  /** Nested repositories and submodules, each snapshotted with its own rules. */
  nested: NestedSnapshot[];
  /** Paths that could not be recorded, and why. */
  warnings: SnapshotWarning[];
  /**
   * Files present but not read (unreadable, oversized, no longer a regular
   * file), this root only: the tree keeps their content last read, when
   * there was one, so they never show as deleted. See {@link unreadFiles}.
   */
  unread: UnreadFile[];
  /** Wall time of this snapshot in milliseconds (nested snapshots included). */
  ms: number;
  /** Part of `ms` spent in the store's `flush()` (writing and syncing a pack), this root only. */
  flushMs: number;
  /** The root is (inside) a git repository. */
  isGitRepository: boolean;
  /** The repository's git directory, when it is one. */
  gitDir?: string;
  /** Files read and hashed in this snapshot. */
  hashed: number;
  /** Files whose id came from the stat cache. */
  reusedFromCache: number;
  /** Files whose id came from the repository index (first snapshot only). */
  seededFromIndex: number;
  /** Trees encoded in this snapshot (unchanged directories keep their id). */
  treesWritten: number;
}

function readText(p: string): string | undefined {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\!# ]/g, (c) => '\\' + c);
}

function validate(opts: SnapshotOptions): void {
  if (typeof opts !== 'object' || opts === null) throw new TypeError('SnapshotOptions must be an object');
  if (typeof opts.root !== 'string' || opts.root === '') throw new TypeError('SnapshotOptions.root must be a non-empty path');
  if (typeof opts.cacheDir !== 'string' || opts.cacheDir === '') throw new TypeError('SnapshotOptions.cacheDir must be a non-empty path');
  const s = opts.store as Partial<ObjectStore> | undefined;
  if (!s || typeof s.writeObject !== 'function' || typeof s.flush !== 'function') throw new TypeError('SnapshotOptions.store must be an ObjectStore');
  const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (opts.extraExcludes !== undefined && !isStrings(opts.extraExcludes)) throw new TypeError('SnapshotOptions.extraExcludes must be an array of strings');
  if (opts.builtinExcludes !== undefined && typeof opts.builtinExcludes !== 'boolean' && !isStrings(opts.builtinExcludes)) {
    throw new TypeError('SnapshotOptions.builtinExcludes must be a boolean or an array of strings');
  }
  if (opts.maxFileBytes !== undefined && !(typeof opts.maxFileBytes === 'number' && opts.maxFileBytes >= 0 && !Number.isNaN(opts.maxFileBytes))) {
    throw new TypeError('SnapshotOptions.maxFileBytes must be a non-negative number');
  }
  if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') throw new TypeError('SnapshotOptions.onProgress must be a function');
}

/** Captures one workspace as git trees, incrementally, between turns and across restarts. */
export class WorkspaceSnapshotter {
  private readonly root: string;
  private readonly cacheFile: string;
  private state: DirState | undefined;
  private refTimeMs = 0;
  private loaded = false;
  /** Entries not read last time: every walk visits them again, so each snapshot lists them in `unread`. */
  private readonly unreadMarks: UnreadMarks = { entries: new WeakSet(), dirs: new WeakSet() };
  private queue: Promise<unknown> = Promise.resolve();
  private pendingSave: (() => void) | undefined;
  /** The in-memory state is newer than the cache file (a save was left for later); what to save it with. */
  private unsaved: { identity: string; refTimeMs: number } | undefined;
  private lastSaveAt = 0;
  private saveError: string | undefined;
  private readonly nestedSnapshotters = new Map<string, WorkspaceSnapshotter>();
  private readonly ruleFiles = new Map<string, { oid: string; text: string }>();
  private readonly tracker: ChangeTracker | undefined;
  private lastResult: SnapshotResult | undefined;
  private index: IndexLookup | undefined;
  /** Every entry was decided in this process (conversion keys are not in the saved cache). */
  private decidedAll = false;

  constructor(private readonly opts: SnapshotOptions) {
    validate(opts);
    this.root = resolve(opts.root);
    this.cacheFile = join(resolve(opts.cacheDir), 'stat-cache.bin');
    this.tracker = opts.changes ? new ChangeTracker(opts.changes) : undefined;
  }

  /** Captures the workspace now. Calls are serialised. */
  snapshot(): Promise<SnapshotResult> {
    const run = this.queue.then(() => this.run(false));
    this.queue = run.catch(() => undefined);
    return run.then((r) => r.result);
  }

  /**
   * Walks the whole tree and counts the changes the file watcher did not
   * report (see `changeTracking`); the snapshot state is brought up to date
   * on the way. Resolves with the missed paths (none without a watcher).
   */
  verify(): Promise<string[]> {
    const run = this.queue.then(() => this.run(true));
    this.queue = run.catch(() => undefined);
    return run.then((r) => r.missed);
  }

  /** What change tracking did; undefined without a change feed. */
  get changeTracking(): ChangeTrackingStats | undefined {
    return this.tracker?.stats;
  }

  /**
   * The trees of the in-memory state (this root's and its nested
   * repositories'): every object id the stat cache names is reachable from
   * them. Undefined until a snapshot has run in this process.
   */
  get cachedTrees(): string[] | undefined {
    if (!this.state) return undefined;
    const trees = this.state.tree !== undefined ? [this.state.tree] : [];
    for (const nested of this.nestedSnapshotters.values()) trees.push(...(nested.cachedTrees ?? []));
    return trees;
  }

  /** The filesystem's current time, read from a file we just wrote (the same clock as file mtimes). */
  private fsNow(): number {
    return fileSystemClock(this.opts.cacheDir).ms;
  }

  private identity(repo: GitRepositoryLocation | undefined): string {
    return JSON.stringify({
      v: 1,
      root: this.root,
      repo: repo?.workTree ?? null,
      extra: this.opts.extraExcludes ?? [],
      builtin: repo ? null : this.builtinList(),
      max: this.maxFileBytes(repo),
    });
  }

  private builtinList(): readonly string[] {
    const b = this.opts.builtinExcludes ?? true;
    return b === true ? BUILTIN_EXCLUDES : b === false ? [] : b;
  }

  private maxFileBytes(repo: GitRepositoryLocation | undefined): number {
    return this.opts.maxFileBytes ?? (repo ? Number.MAX_SAFE_INTEGER : DEFAULT_NON_REPO_MAX_FILE_BYTES);
  }

  /** Ignore and attribute rules that apply at the root, from sources outside the walk. */
  private rootRules(repo: GitRepositoryLocation | undefined, rootPath: string, core: CoreSettings, filters: ReadonlySet<string> | undefined): RuleContext {
    // Settings that change what is recorded: a change re-decides every entry.
    const coreKey = JSON.stringify(core);
    const keyParts: string[] = coreKey === JSON.stringify(DEFAULT_CORE_SETTINGS) ? [] : ['core\n' + coreKey];
    if (filters) keyParts.push('filters\n' + [...filters].sort().join('\n'));
    const caseFold = core.ignoreCase;
    const first: IgnoreLevel[] = [];
    const last: IgnoreLevel[] = [];
    const extra = [...(this.opts.extraExcludes ?? [])];
    const cacheDirPath = resolve(this.opts.cacheDir);
    let cacheReal = cacheDirPath;
    try {
      cacheReal = realpathSync.native(cacheDirPath);
    } catch {
      // Not created yet: compare the path as given.
    }
    const cacheRel = relative(rootPath, cacheReal);
    if (cacheRel === '' || (!cacheRel.startsWith('..') && !isAbsolute(cacheRel))) {
      extra.push('/' + escapeGlob(cacheRel.split(sep).join('/')) + '/');
    }
    if (extra.length) first.push({ patterns: parseIgnoreFile(extra.join('\n'), caseFold), prepend: '', strip: 0 });

    const prefix = repo ? pathInWorkTree(repo.workTree, rootPath) : '';
    const global = globalGitFiles(this.opts.env ?? process.env, repo ? join(repo.commonDir, 'config') : undefined);
    const ancestorIgnores: IgnoreLevel[] = [];
    const ancestorAttrs: AttributeLevel[] = [];
    if (repo && prefix !== '') {
      // .gitignore/.gitattributes between the work tree top and the root apply too.
      const parts = prefix.slice(0, -1).split('/');
      for (let i = 0; i < parts.length; i++) {
        const dir = join(repo.workTree, ...parts.slice(0, i));
        const below = parts.slice(i).join('/') + '/';
        const gi = readText(join(dir, '.gitignore'));
        if (gi !== undefined) {
          ancestorIgnores.push({ patterns: parseIgnoreFile(gi, caseFold), prepend: below, strip: 0 });
          keyParts.push('a-ignore:' + dir + '\n' + gi);
        }
        const ga = readText(join(dir, '.gitattributes'));
        if (ga !== undefined) {
          ancestorAttrs.push({ rules: parseAttributes(ga, { macros: i === 0, caseFold }), prepend: below, strip: 0 });
          keyParts.push('a-attr:' + dir + '\n' + ga);
        }
      }
    }
    if (repo) {
      const ex = readText(join(repo.commonDir, 'info', 'exclude'));
      if (ex !== undefined) {
        last.push({ patterns: parseIgnoreFile(ex, caseFold), prepend: prefix, strip: 0 });
        keyParts.push('exclude\n' + ex);
      }
    }
    const gx = global.excludesFile ? readText(global.excludesFile) : undefined;
    if (gx !== undefined) {
      last.push({ patterns: parseIgnoreFile(gx, caseFold), prepend: prefix, strip: 0 });
      keyParts.push('global\n' + gx);
    }
    if (!repo) {
      const builtin = this.builtinList();
      if (builtin.length) last.push({ patterns: parseIgnoreFile(builtin.join('\n')), prepend: '', strip: 0 });
    }

    const attrFirst: AttributeLevel[] = [];
    const attrLast: AttributeLevel[] = [];
    if (repo) {
      const ia = readText(join(repo.commonDir, 'info', 'attributes'));
      if (ia !== undefined) {
        attrFirst.push({ rules: parseAttributes(ia, { macros: true, caseFold }), prepend: prefix, strip: 0 });
        keyParts.push('info-attr\n' + ia);
      }
    }
    const gattr = global.attributesFile ? readText(global.attributesFile) : undefined;
    if (gattr !== undefined) {
      attrLast.push({ rules: parseAttributes(gattr, { macros: true, caseFold }), prepend: prefix, strip: 0 });
      keyParts.push('global-attr\n' + gattr);
    }
    let ignore = IgnoreStack.create(first, last);
    for (const l of ancestorIgnores) ignore = ignore.push(l);
    let attrs = AttributeStack.create(attrFirst, attrLast);
    for (const l of ancestorAttrs) attrs = attrs.push(l);
    const key = createHash('sha1').update(keyParts.join('\0')).digest('hex');
    return { ignore, attrs, key };
  }

  /**
   * Persists the stat cache right after the snapshot has been returned, so
   * the caller does not wait for it; the next snapshot (or `saveCache`) saves it
   * first if it has not happened yet. Within `CACHE_SAVE_INTERVAL_MS` of the
   * last save it is left for later (`saveCache`, or a snapshot after the
   * interval): encoding the whole cache at every turn of a busy session was
   * most of the memory a turn allocated. Losing it in a crash only costs
   * re-hashing: the saved file stays consistent on its own.
   */
  private scheduleSave(identity: string, refTimeMs: number, root: DirState): void {
    if (Date.now() - this.lastSaveAt < CACHE_SAVE_INTERVAL_MS) {
      this.pendingSave = undefined;
      this.unsaved = { identity, refTimeMs };
      return;
    }
    const save = (): void => {
      if (this.pendingSave !== save) return;
      this.pendingSave = undefined;
      this.writeCache(identity, refTimeMs, root);
    };
    this.pendingSave = save;
    setImmediate(save);
  }

  private writeCache(identity: string, refTimeMs: number, root: DirState): void {
    try {
      saveStatCache(this.cacheFile, identity, refTimeMs, root);
      this.unsaved = undefined;
      this.lastSaveAt = Date.now();
    } catch (err) {
      // Reported with the next snapshot; the old cache file stays valid.
      this.saveError = err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * Writes the stat cache of the last snapshot now, if it has not been
   * written yet. Call it before a retention pass (whose kept trees are the
   * in-memory state's) and before closing the store.
   */
  async saveCache(): Promise<void> {
    await this.queue;
    if (this.pendingSave) this.pendingSave();
    else if (this.unsaved && this.state) this.writeCache(this.unsaved.identity, this.unsaved.refTimeMs, this.state);
    for (const s of this.nestedSnapshotters.values()) await s.saveCache();
  }

  /**
   * Forgets the in-memory state and drops a stat cache save not yet written,
   * so nothing is written into `cacheDir` afterwards (call it before deleting
   * the cache directory, e.g. after objects were removed from the store).
   * A later `snapshot()` starts cold again.
   */
  discard(): void {
    this.pendingSave = undefined;
    this.unsaved = undefined;
    this.state = undefined;
    this.lastResult = undefined;
    this.loaded = false;
    for (const s of this.nestedSnapshotters.values()) s.discard();
    this.nestedSnapshotters.clear();
    this.index?.close();
    this.index = undefined;
    this.decidedAll = false;
  }

  private async run(verifying: boolean): Promise<{ result: SnapshotResult; missed: string[] }> {
    const t0 = performance.now();
    // The walk mutates the cached state in place: the previous state must be on disk first.
    this.pendingSave?.();
    const st = statSync(this.root, { throwIfNoEntry: false });
    if (!st?.isDirectory()) throw new Error(`snapshot root ${this.root} is not a directory`);
    // A root reached through a symlink is walked at its real location.
    const rootPath = realpathSync.native(this.root);
    const repo = findGitRepository(rootPath);
    const identity = this.identity(repo);
    let cold = false;
    if (!this.loaded) {
      const c = loadStatCache(this.cacheFile, identity);
      this.state = c?.root;
      this.refTimeMs = c?.refTimeMs ?? 0;
      this.loaded = true;
      cold = c === undefined;
    }
    const core = repo ? readCoreSettings(this.opts.env ?? process.env, join(repo.commonDir, 'config')) : DEFAULT_CORE_SETTINGS;
    const filters = repo ? readFilterDrivers(this.opts.env ?? process.env, join(repo.commonDir, 'config')) : undefined;
    const rules = this.rootRules(repo, rootPath, core, filters);
    const index = this.indexLookup(repo);
    const prefix = repo ? pathInWorkTree(repo.workTree, rootPath) : '';
    // Paths added to or removed from the index since the last snapshot: git never ignores a tracked path.
    let redecide = cold || !index ? undefined : redecidedPaths(index.membershipChanges(), prefix);
    if (!cold && !this.decidedAll) redecide = 'all';
    this.decidedAll = true;
    let plan: WalkPlan | undefined;
    let reported: TouchedPath[] | undefined;
    if (this.tracker && verifying) {
      const taken = await this.tracker.planVerification();
      if ('touched' in taken) reported = taken.touched;
    } else if (this.tracker) {
      plan = await this.tracker.plan({
        hasState: this.state !== undefined,
        hasResult: this.lastResult !== undefined,
        rulesKey: `${identity}\0${rules.key}`,
        ...(redecide === 'all' ? { walkAll: 'every entry is decided afresh' } : redecide ? { extra: redecide.touched } : {}),
      });
      if (plan.kind === 'reuse') return { result: this.reusedResult(t0), missed: [] };
    }
    const { touched, visitAll } = this.walkSelection(plan, reported);
    const indexBytes = cold && repo ? readIndexBytes(repo.indexFile) : undefined;
    // Started before the index is parsed: the worker finds the paths itself.
    let prefetch = repo ? LstatPrefetch.start(repo.workTree, indexBytes?.buf, availableParallelism(), this.opts.prefetchMinEntries) : undefined;
    const seed = indexBytes && parseIndexSafely(indexBytes);
    if (!seed) {
      prefetch?.stop();
      prefetch = undefined;
    }
    if (cold && index) {
      // A cold walk decides every entry anyway; the lookup starts from the index just parsed.
      if (seed && indexBytes) index.adopt(seed, indexBytes);
      index.membershipChanges();
    }
    let now = this.fsNow();
    const listings = this.opts.listings;
    const walker = new Walker(
      {
        store: this.opts.store,
        prevRefTimeMs: this.refTimeMs,
        seed,
        seedPrefix: prefix,
        redecide: redecide === 'all' ? 'all' : redecide?.paths,
        prefetch,
        maxFileBytes: this.maxFileBytes(repo),
        hooks: this.opts.hooks ?? {},
        onProgress: this.opts.onProgress,
        progressTotal: this.state?.files,
        touched,
        visitAll,
        collectChanged: reported !== undefined,
        core,
        index,
        filters,
        unreadMarks: this.unreadMarks,
        listings,
      },
      this.ruleFiles,
    );
    let root: DirState;
    try {
      try {
        root = await walker.walkRoot(this.state, rootPath, rules);
      } finally {
        prefetch?.stop();
        // Given listings serve one walk only: what was not taken goes.
        listings?.release();
      }
      // A listing read before `now` is trusted next time only if its directory has not changed since its clock (see ListingSource).
      if (listings && walker.counters.dirsGiven > 0) now = Math.min(now, listings.clockMs);
      let tree = root.tree;
      if (tree === undefined) {
        tree = await this.opts.store.writeObject('tree', new Uint8Array(0));
        if (tree !== EMPTY_TREE_OID) throw new Error(`object store returned ${tree} for the empty tree`);
      }
      // Objects first, then the cache that refers to them.
      const tFlush = performance.now();
      await this.opts.store.flush();
      const flushMs = performance.now() - tFlush;
      if (walker.changed || walker.counters.racy > 0 || cold) {
        this.refTimeMs = now;
        this.scheduleSave(identity, now, root);
      }
      this.state = root;
      const handed = this.handedToNested(plan, reported);
      const nested = this.opts.nested === false ? [] : await this.snapshotNested(walker.nested, walker.warnings, handed, root);
      const c = walker.counters;
      const result: SnapshotResult = {
        tree,
        files: root.files,
        nested,
        warnings: walker.warnings,
        unread: walker.unread,
        ms: performance.now() - t0,
        flushMs,
        isGitRepository: repo !== undefined,
        hashed: c.hashed,
        reusedFromCache: c.reusedFromCache,
        seededFromIndex: c.seededFromIndex,
        treesWritten: c.treesWritten,
      };
      if (repo) result.gitDir = repo.gitDir;
      if (this.saveError) {
        result.warnings.push({ path: '', message: `could not save the stat cache: ${this.saveError}` });
        this.saveError = undefined;
      }
      this.lastResult = result;
      let missed: string[] = [];
      if (this.tracker) {
        this.tracker.noteBlind(walker.blind, plan ?? { kind: 'full', reason: 'verification', paths: reported });
        if (reported) missed = await this.tracker.settleVerification(walker.changedPaths, reported);
      }
      return { result, missed };
    } catch (err) {
      // The in-memory state may be half-updated: start again from the saved cache.
      this.state = undefined;
      this.lastResult = undefined;
      this.loaded = false;
      throw err;
    }
  }

  /** The repository index as `git add` consults it, checked for changes once per snapshot. */
  private indexLookup(repo: GitRepositoryLocation | undefined): IndexLookup | undefined {
    if (!repo) return undefined;
    this.index ??= new IndexLookup(repo.indexFile, repo.objectsDir);
    this.index.refresh();
    return this.index;
  }

  /** The previous snapshot, when nothing was touched since. */
  private reusedResult(t0: number): SnapshotResult {
    const last = this.lastResult!;
    return { ...last, warnings: [], ms: performance.now() - t0, flushMs: 0, hashed: 0, reusedFromCache: last.files, seededFromIndex: 0, treesWritten: 0 };
  }

  /** Which paths the walk follows: the touched ones, or (undefined) all of them. */
  private walkSelection(plan: WalkPlan | undefined, reported: TouchedPath[] | undefined): { touched: TouchedNode | undefined; visitAll: boolean } {
    if (!this.state) return { touched: undefined, visitAll: false };
    if (reported) return { touched: buildTouchedTree(reported), visitAll: true };
    if (plan?.kind === 'incremental') return { touched: plan.touched, visitAll: plan.visitAll };
    // Walking everything, the touched paths still tell which new directories the watch cannot see into.
    if (plan?.kind === 'full' && plan.paths) return { touched: buildTouchedTree(plan.paths), visitAll: true };
    return { touched: undefined, visitAll: false };
  }

  /** What nested repositories' snapshotters are told changed below them; undefined: they walk everything. */
  private handedToNested(plan: WalkPlan | undefined, reported: TouchedPath[] | undefined): TouchedPath[] | undefined {
    if (reported) return undefined;
    if (plan?.kind === 'incremental' || (plan?.kind === 'full' && plan.paths)) return plan.paths;
    return undefined;
  }

  private async snapshotNested(
    found: { path: string; fsPath: string | Buffer }[],
    warnings: SnapshotWarning[],
    touched: TouchedPath[] | undefined,
    root: DirState,
  ): Promise<NestedSnapshot[]> {
    const out: NestedSnapshot[] = [];
    const seen = new Set<string>();
    if (touched) {
      // Nested repositories the walk did not reach are as they were.
      const visited = new Set(found.map((n) => n.path));
      for (const prev of this.lastResult?.nested ?? []) {
        if (visited.has(prev.path) || isTouchedAround(touched, prev.path) || !isGitlinkAt(root, prev.path)) continue;
        seen.add(prev.path);
        out.push(prev);
      }
    }
    for (const n of found) {
      if (typeof n.fsPath !== 'string') continue;
      seen.add(n.path);
      let s = this.nestedSnapshotters.get(n.path);
      if (!s) {
        const id = createHash('sha1').update(n.path).digest('hex').slice(0, 16);
        const opts: SnapshotOptions = { root: n.fsPath, store: this.opts.store, cacheDir: join(this.opts.cacheDir, 'nested', id) };
        if (this.opts.maxFileBytes !== undefined) opts.maxFileBytes = this.opts.maxFileBytes;
        if (this.opts.env) opts.env = this.opts.env;
        if (this.opts.hooks) opts.hooks = this.opts.hooks;
        if (this.opts.prefetchMinEntries !== undefined) opts.prefetchMinEntries = this.opts.prefetchMinEntries;
        if (this.opts.changes) opts.changes = new HandedFeed(this.opts.changes);
        s = new WorkspaceSnapshotter(opts);
        this.nestedSnapshotters.set(n.path, s);
      }
      const taken: TakenChanges = touched ? { touched: touchedBelow(touched, n.path) } : { unknown: 'the parent walked everything' };
      if (s.opts.changes instanceof HandedFeed) s.opts.changes.hand(taken);
      try {
        const snap = await s.snapshot();
        out.push({ path: n.path, tree: snap.tree, snapshot: snap });
      } catch (err) {
        // A nested repository that vanished or broke mid-snapshot does not fail its parent.
        warnings.push({ path: n.path, message: `nested repository not snapshotted: ${err instanceof Error ? err.message : String(err)}` });
      }
    }
    for (const k of [...this.nestedSnapshotters.keys()]) if (!seen.has(k)) this.nestedSnapshotters.delete(k);
    out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return out;
  }
}

/**
 * The index paths whose membership changed, as walk-root paths to decide
 * again (each with its directories) and to visit; 'all' passes through.
 */
function redecidedPaths(changed: string[] | 'all', prefix: string): 'all' | { paths: Set<string>; touched: TouchedPath[] } | undefined {
  if (changed === 'all') return 'all';
  if (changed.length === 0) return undefined;
  const paths = new Set<string>();
  const touched: TouchedPath[] = [];
  for (const p of changed) {
    if (!p.startsWith(prefix) || p.length === prefix.length) continue;
    const rel = p.slice(prefix.length);
    touched.push({ path: rel, created: false });
    for (let end = rel.length; end > 0 && !paths.has(rel.slice(0, end)); end = rel.lastIndexOf('/', end - 1)) paths.add(rel.slice(0, end));
  }
  return touched.length ? { paths, touched } : undefined;
}

/** True when `path` ('a/b') names a nested repository recorded as a gitlink in the walked state. */
function isGitlinkAt(root: DirState, path: string): boolean {
  let dir: DirState | undefined = root;
  const names = path.split('/');
  for (let i = 0; i < names.length; i++) {
    const e: CachedEntry | undefined = dir?.entries.find((x) => x.name === names[i]);
    if (!e) return false;
    if (i === names.length - 1) return e.mode === MODE_GITLINK;
    dir = e.dir;
  }
  return false;
}

/** The unread files of a snapshot and of its nested repositories, by path relative to its root. */
export function unreadFiles(result: SnapshotResult, prefix = ''): UnreadFile[] {
  const own = result.unread.map((u) => ({ ...u, path: prefix + u.path }));
  return [...own, ...result.nested.flatMap((n) => unreadFiles(n.snapshot, `${prefix}${n.path}/`))];
}
