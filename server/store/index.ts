/**
 * Opening a workspace's store: the shadow repository under the state
 * directory, with read-only fallback to the workspace's own repository.
 */
import { chmod, readFile, realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StoreInputError } from './errors.js';
import { mkdirPrivate, PRIVATE_DIR_MODE, tightenPrivateTree, writeFileAtomic } from '../private-files.js';
import { describeValue, isOid } from './object-format.js';
import { initShadowRepo, lockShadowRepo, shadowTmpDir, type ShadowLock } from './shadow-repo.js';
import { ShadowStore } from './shadow-store.js';
import { defaultStateDir, workspaceLayout, type WorkspaceLayout } from './state-dir.js';
import type { ObjectStore, ObjectType, StoredObject } from './types.js';
import { Checkpoints, type CheckpointInfo, type CheckpointInput, type StoredSession, type TimeInput } from './checkpoints.js';
import { enforceBudget, storeSize, type EnforceBudgetOptions, type RetentionReport } from './retention.js';
import { compactStore, DEFAULT_COMPACT_IDLE_MS, IdleTimer, type CompactionReport } from './compaction.js';
import { TreeReader, type TreeEntry } from './tree.js';
import { diffTrees, type TreeChange } from './tree-diff.js';
import { findWorkspaceGitDir, objectDirsWithAlternates, primaryObjectsDir } from './workspace-repo.js';

export { defaultStateDir, workspaceLayout } from './state-dir.js';
export { EMPTY_TREE_OID, hashObject } from './object-format.js';
export { serializeTree } from './tree.js';
export { StoreBusyError, StoreInputError } from './errors.js';

/** Options of {@link openWorkspaceStore}. */
export interface OpenWorkspaceStoreOptions {
  /** State directory holding every store; {@link defaultStateDir} when omitted. */
  stateDir?: string;
  /** The workspace (working directory) whose changes are recorded. */
  workspaceDir: string;
  /**
   * The workspace repository's git directory. When omitted it is found by
   * looking for `.git` in the workspace and its parents; none means the
   * workspace is not a repository and nothing is read from one.
   */
  gitDir?: string;
  /** Byte budget of the shadow repository used by retention; 2 GiB by default. */
  budgetBytes?: number;
  /** More shadow packs than this are consolidated into one after a flush; 50 by default. */
  maxPacks?: number;
  /**
   * Quiet time (ms) after the last flush or checkpoint before the store
   * compacts its packs with deltas, when enough was written since the last
   * compaction; 5 s by default, `Infinity` never.
   */
  compactAfterIdleMs?: number;
  /**
   * Where the store reports what goes wrong in the background (a compaction
   * that failed and when it is tried again); `console.warn` by default.
   */
  log?: (message: string) => void;
}

/** What `workspace.json` records about the store's workspace. */
export interface WorkspaceRecord {
  /** Format version of this file. */
  version: 1;
  /** Real path of the workspace directory. */
  path: string;
  /** Git directory read as fallback, if any. */
  gitDir?: string;
}

/** A workspace's store: objects now; checkpoints, tree diff and retention build on it. */
export interface WorkspaceStore extends ObjectStore {
  /** Real path of the workspace directory. */
  readonly workspaceDir: string;
  /** The workspace repository's git directory, when the workspace is in one. */
  readonly gitDir: string | undefined;
  /** Paths of this store on disk. */
  readonly layout: WorkspaceLayout;
  /** Parsed entries of a tree, in git order (cached). */
  readTree(oid: string): Promise<readonly TreeEntry[]>;
  /** Changed paths between two trees (undefined = empty tree), sorted by path; see {@link diffTrees}. */
  diffTrees(treeA: string | undefined, treeB: string | undefined): Promise<TreeChange[]>;
  /** Writes a turn or safety checkpoint (flushing objects first) and returns it. */
  writeCheckpoint(input: CheckpointInput): Promise<CheckpointInfo>;
  /** Every checkpoint of a session, in chain order. */
  listSessionCheckpoints(sessionId: string): Promise<CheckpointInfo[]>;
  /** The checkpoint a ref points at, or undefined when the ref does not exist. */
  readCheckpoint(ref: string): Promise<CheckpointInfo | undefined>;
  /** The change entries stored with a turn, or undefined. */
  readChangeEntries(sessionId: string, turnId: string): Promise<unknown>;
  /** Sessions present in the store, live or ended. */
  listSessions(): Promise<StoredSession[]>;
  /** Marks a session ended, making it eligible for retention. */
  markSessionEnded(sessionId: string, endedAt?: TimeInput): Promise<void>;
  /** Deletes every ref of a session (the user forgot it); its objects go at the next pack rewrite. */
  forgetSession(sessionId: string): Promise<void>;
  /** The byte budget `enforceBudget` applies by default. */
  readonly budgetBytes: number;
  /** Bytes on disk of the shadow repository. */
  storeSize(): Promise<number>;
  /**
   * Drops ended sessions past the age limit and the oldest ended sessions
   * until the store fits its budget, removing what they alone held in the
   * same pass, and unreachable objects. Never drops a live session, nor one
   * whose objects cannot be removed now.
   */
  enforceBudget(options?: EnforceBudgetOptions): Promise<RetentionReport>;
  /**
   * Incremented whenever retention may have removed objects; persisted, so it
   * also changes across restarts. A caller that caches object ids across
   * turns (the snapshot engine's stat cache) must re-check them with
   * `hasObject` (or rewrite them) when this differs from the value it saw.
   */
  readonly collectionGeneration: number;
  /**
   * Also reads (never writes) objects from another repository's git
   * directory — a nested repository whose blobs snapshots reference.
   */
  addFallbackGitDir(gitDir: string): Promise<void>;
  /**
   * Rewrites the shadow packs into one, each version of a path a delta
   * against the next newer one (see docs/store.md, "Deltas"). Runs by
   * itself in idle time; `force` compacts even when little was written.
   */
  compact(options?: { force?: boolean; maxDepth?: number }): Promise<CompactionReport>;
  /**
   * Milliseconds idle compactions have held still, in all, because callers
   * were using the store (a turn end): they yield to it.
   */
  readonly compactionHeldMs: number;
  /** Flushes buffered objects and releases the store's lock. */
  close(): Promise<void>;
}

const DEFAULT_BUDGET = 2 * 1024 ** 3;

function formatDelay(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms)} ms`;
}

async function requireDirectory(path: unknown, what: string): Promise<string> {
  if (typeof path !== 'string' || path.length === 0) throw new StoreInputError(`${what} must be a non-empty path, got ${describeValue(path)}`);
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new StoreInputError(`${what} ${JSON.stringify(path)} does not exist`);
  }
  if (!(await stat(real)).isDirectory()) throw new StoreInputError(`${what} ${JSON.stringify(path)} is not a directory`);
  return real;
}

/** Opens (creating if needed) the store of a workspace. Reopening later sees everything written before. */
export async function openWorkspaceStore(options: OpenWorkspaceStoreOptions): Promise<WorkspaceStore> {
  if (typeof options !== 'object' || options === null) throw new StoreInputError('openWorkspaceStore needs an options object');
  const workspaceDir = await requireDirectory(options.workspaceDir, 'workspaceDir');
  const stateDir = options.stateDir ?? defaultStateDir();
  if (typeof stateDir !== 'string' || stateDir.length === 0) throw new StoreInputError(`stateDir must be a non-empty path, got ${describeValue(stateDir)}`);
  const budgetBytes = options.budgetBytes ?? DEFAULT_BUDGET;
  if (typeof budgetBytes !== 'number' || !Number.isFinite(budgetBytes) || budgetBytes < 0) {
    throw new StoreInputError(`budgetBytes must be a non-negative number, got ${describeValue(budgetBytes)}`);
  }
  if (options.maxPacks !== undefined && (!Number.isInteger(options.maxPacks) || options.maxPacks < 1)) {
    throw new StoreInputError(`maxPacks must be a positive integer, got ${describeValue(options.maxPacks)}`);
  }
  if (options.compactAfterIdleMs !== undefined && (typeof options.compactAfterIdleMs !== 'number' || !(options.compactAfterIdleMs >= 0))) {
    throw new StoreInputError(`compactAfterIdleMs must be a non-negative number, got ${describeValue(options.compactAfterIdleMs)}`);
  }
  if (options.log !== undefined && typeof options.log !== 'function') throw new StoreInputError(`log must be a function, got ${describeValue(options.log)}`);
  const gitDir = options.gitDir !== undefined ? await requireDirectory(options.gitDir, 'gitDir') : await findWorkspaceGitDir(workspaceDir);
  const objectsDir = gitDir ? await primaryObjectsDir(gitDir) : undefined;
  const objectDirs = objectsDir ? await objectDirsWithAlternates(objectsDir) : [];

  const layout = workspaceLayout(stateDir, workspaceDir);
  await mkdirPrivate(layout.root);
  await tightenStore(stateDir, layout);
  await initShadowRepo(layout.shadowDir, objectDirs[0]);
  const lock = await lockShadowRepo(layout.shadowDir);
  try {
    await recordWorkspace(layout, { version: 1, path: workspaceDir, ...(gitDir ? { gitDir } : {}) });
    const objects = await ShadowStore.open({
      shadowDir: layout.shadowDir,
      workspaceObjectDirs: objectDirs,
      ...(options.maxPacks !== undefined ? { maxPacks: options.maxPacks } : {}),
    });
    return new OpenStore(
      workspaceDir,
      gitDir,
      layout,
      objects,
      lock,
      budgetBytes,
      options.compactAfterIdleMs ?? DEFAULT_COMPACT_IDLE_MS,
      options.log ?? ((message) => console.warn(message)),
    );
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * A store written by an earlier version, or under a loose umask, may be
 * readable by others: the state directory and `workspaces/` become 0700 and
 * this workspace's store is walked once, directories 0700, files 0600.
 */
async function tightenStore(stateDir: string, layout: WorkspaceLayout): Promise<void> {
  await chmod(stateDir, PRIVATE_DIR_MODE);
  await chmod(dirname(layout.root), PRIVATE_DIR_MODE);
  await tightenPrivateTree(layout.root);
}

async function recordWorkspace(layout: WorkspaceLayout, record: WorkspaceRecord): Promise<void> {
  const text = `${JSON.stringify(record, null, 2)}\n`;
  const current = await readFile(layout.workspaceJson, 'utf8').catch(() => undefined);
  if (current !== text) await writeFileAtomic(layout.workspaceJson, text, shadowTmpDir(layout.shadowDir));
}

/**
 * A compaction holds still while a flush or checkpoint is under way and
 * until the store has not been used for this long (a turn end writing,
 * checkpointing and reading back what it changed), so the turn end gets the
 * processor and the disk to itself.
 */
const BUSY_QUIET_MS = 200;
/** …but for at most this long in all per compaction, so a store read all the time still compacts. */
const MAX_HOLD_MS = 60_000;

class OpenStore implements WorkspaceStore {
  private readonly trees: TreeReader;
  private readonly checkpoints: Checkpoints;
  private readonly idle: IdleTimer;
  /** When a caller last used the store (compaction's own reads go to `objects` directly and do not count). */
  private lastUse = Number.NEGATIVE_INFINITY;
  /** Flushes and checkpoints under way (a pack or a ref being written and synced, which can take longer than the quiet time). */
  private inFlight = 0;
  /** Abandons a compaction {@link compact} started when the store closes. */
  private readonly closing = new AbortController();
  /** Milliseconds compactions held still for callers, in all; for tests and benchmarks. */
  compactionHeldMs = 0;

  constructor(
    readonly workspaceDir: string,
    readonly gitDir: string | undefined,
    readonly layout: WorkspaceLayout,
    private readonly objects: ShadowStore,
    private readonly lock: ShadowLock,
    readonly budgetBytes: number,
    compactAfterIdleMs: number,
    log: (message: string) => void,
  ) {
    this.trees = new TreeReader(objects);
    this.checkpoints = new Checkpoints(layout.shadowDir, objects, this.trees);
    this.idle = new IdleTimer(
      compactAfterIdleMs,
      async (signal) => {
        let budget = MAX_HOLD_MS;
        const pause = async (): Promise<void> => {
          budget -= await this.holdWhileBusy(budget);
        };
        await compactStore(this.layout.shadowDir, this.objects, { control: { signal, pause } });
      },
      (error, retryInMs) => {
        const reason = error instanceof Error ? error.message : String(error);
        const next = retryInMs === undefined ? 'it is tried again after the next turn' : `trying again in ${formatDelay(retryInMs)}`;
        log(
          `changeset-server: compacting the store of ${this.workspaceDir} failed (${reason}); ${next}. Nothing recorded is lost: the store keeps its packs as they were.`,
        );
      },
    );
  }

  /**
   * Called by an idle compaction each time it gives the event loop a turn:
   * holds still while callers are using the store, for at most `budgetMs`.
   * Returns how long it held.
   */
  private async holdWhileBusy(budgetMs: number): Promise<number> {
    const start = performance.now();
    let at = start;
    for (;;) {
      const quietFor = this.inFlight > 0 ? 0 : performance.now() - this.lastUse;
      if (quietFor >= BUSY_QUIET_MS || performance.now() - start >= budgetMs || this.closing.signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, BUSY_QUIET_MS - quietFor + 1));
      this.compactionHeldMs += performance.now() - at;
      at = performance.now();
    }
    return performance.now() - start;
  }

  private used(): void {
    this.lastUse = performance.now();
  }

  async writeCheckpoint(input: CheckpointInput): Promise<CheckpointInfo> {
    this.inFlight++;
    try {
      const written = await this.checkpoints.write(input);
      this.idle.poke();
      return written;
    } finally {
      this.inFlight--;
      this.used();
    }
  }

  compact(options: { force?: boolean; maxDepth?: number } = {}): Promise<CompactionReport> {
    return compactStore(this.layout.shadowDir, this.objects, { ...options, control: { signal: this.closing.signal } });
  }

  listSessionCheckpoints(sessionId: string): Promise<CheckpointInfo[]> {
    return this.checkpoints.list(sessionId);
  }

  readCheckpoint(ref: string): Promise<CheckpointInfo | undefined> {
    return this.checkpoints.read(ref);
  }

  readChangeEntries(sessionId: string, turnId: string): Promise<unknown> {
    return this.checkpoints.readChangeEntries(sessionId, turnId);
  }

  listSessions(): Promise<StoredSession[]> {
    return this.checkpoints.listSessions();
  }

  markSessionEnded(sessionId: string, endedAt?: TimeInput): Promise<void> {
    return this.checkpoints.markEnded(sessionId, endedAt);
  }

  async forgetSession(sessionId: string): Promise<void> {
    const stored = (await this.checkpoints.listSessions()).find((s) => s.sessionId === sessionId);
    if (stored) await this.checkpoints.dropSession(stored.refPrefix);
  }

  storeSize(): Promise<number> {
    return storeSize(this.layout.shadowDir);
  }

  async enforceBudget(options: EnforceBudgetOptions = {}): Promise<RetentionReport> {
    if (typeof options !== 'object' || options === null) throw new StoreInputError('enforceBudget options must be an object');
    const budget = options.budgetBytes ?? this.budgetBytes;
    if (typeof budget !== 'number' || !Number.isFinite(budget) || budget < 0) {
      throw new StoreInputError(`budgetBytes must be a non-negative number, got ${describeValue(budget)}`);
    }
    if (options.graceMs !== undefined && (typeof options.graceMs !== 'number' || !(options.graceMs >= 0))) {
      throw new StoreInputError(`graceMs must be a non-negative number, got ${describeValue(options.graceMs)}`);
    }
    if (options.maxAgeMs !== undefined && (typeof options.maxAgeMs !== 'number' || !(options.maxAgeMs >= 0))) {
      throw new StoreInputError(`maxAgeMs must be a non-negative number, got ${describeValue(options.maxAgeMs)}`);
    }
    if (options.keepRoots !== undefined && (!Array.isArray(options.keepRoots) || !options.keepRoots.every((oid) => isOid(oid)))) {
      throw new StoreInputError('keepRoots must be an array of object ids');
    }
    if (options.beforeCollect !== undefined && typeof options.beforeCollect !== 'function') {
      throw new StoreInputError('beforeCollect must be a function');
    }
    return enforceBudget({ shadowDir: this.layout.shadowDir, objects: this.objects, checkpoints: this.checkpoints }, budget, options);
  }

  get collectionGeneration(): number {
    return this.objects.collectionGeneration;
  }

  readTree(oid: string): Promise<readonly TreeEntry[]> {
    this.used();
    return this.trees.read(oid);
  }

  diffTrees(treeA: string | undefined, treeB: string | undefined): Promise<TreeChange[]> {
    this.used();
    return diffTrees(this.trees, treeA, treeB);
  }

  writeObject(type: ObjectType, content: Uint8Array): Promise<string> {
    this.used();
    return this.objects.writeObject(type, content);
  }

  hasObject(oid: string): Promise<boolean> {
    this.used();
    return this.objects.hasObject(oid);
  }

  readObject(oid: string): Promise<StoredObject> {
    this.used();
    return this.objects.readObject(oid);
  }

  async addFallbackGitDir(gitDir: string): Promise<void> {
    await this.objects.addFallbackObjectDirs(await objectDirsWithAlternates(await primaryObjectsDir(gitDir)));
  }

  async flush(): Promise<void> {
    this.inFlight++;
    try {
      await this.objects.flush();
      this.idle.poke();
    } finally {
      this.inFlight--;
      this.used();
    }
  }

  async close(): Promise<void> {
    try {
      this.closing.abort();
      await this.idle.stop();
      await this.checkpoints.drain();
      await this.objects.close();
    } finally {
      await this.lock.release();
    }
  }
}
