import type { CapturedSide } from '../changes/capture.js';
import type { ChangeCounts, ChangeEntry } from '../changes/change-entries.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { GitMode } from '../changes/file-change.js';
import type { CheckpointInfo, CheckpointRootInput } from '../store/checkpoints.js';
import { serializeTree, type NewTreeEntry } from '../store/tree.js';
import type { CaptureRecord, PresentedFile, StepRecord, TurnRecord } from './turn-record.js';
import type { TurnSummary } from './turn-summary.js';
import type { WorkspaceRoot } from './workspace-root.js';
import { unreadListsOf, withUnreadLists, type UnreadLists } from './unread-lists.js';

/** Reason recorded on the checkpoint that holds a session's starting state. */
export const SESSION_START_REASON = 'session start';

/** Reason of the checkpoint holding the state an operation left (the next after-the-fact turn's baseline). */
const SETTLED_REASON = 'settled';

/** What the session-start checkpoint records besides the trees. */
export interface SessionStartDetails {
  title: string;
  createdAt: string;
  workingDirectories: string[];
  /** The agent recording into the session, when a harness said so. */
  agent?: string;
  /** An imported session: the name of the folder it was recorded in, which its title names (`import` sets it). */
  recordedIn?: string;
  /** Files present but not read at the start (see {@link UnreadLists}). */
  unread?: UnreadLists;
}

/** A captured side as stored in the journal (the blob itself sits in the checkpoint's `captures` tree). */
interface StoredSide {
  oid: string;
  mode: GitMode;
  size?: number;
  oversized?: boolean;
}

/** What an end checkpoint stores on its `entries` ref. */
interface TurnJournal {
  entries: ChangeEntry[];
  counts?: ChangeCounts;
  summary?: TurnSummary;
  error?: string;
  durationMs?: number;
  automatic?: true;
  editSpan?: { from: string; to: string };
  tools: [string, string][];
  captures: { absPath: string; root: number; before?: StoredSide; after?: StoredSide; leftWorkingDirectory?: true }[];
  presented?: PresentedFile[];
  /** Files present but not read at the turn's start and end. */
  unread?: { before?: UnreadLists; after?: UnreadLists };
}

/** What a step checkpoint records besides the trees. */
interface StepDetails {
  at: string;
  tool?: string;
  paths: string[];
  unread?: UnreadLists;
}

/** One path recorded by a safety checkpoint: its content before an operation wrote it. */
export interface SafetyPath {
  /** Absolute path of the file. */
  absPath: string;
  /** Working-directory index (-1 outside every one); the blob lives in that root's store (root 0 for -1). */
  root: number;
  /** Blob id of the content, absent when the file did not exist. */
  oid?: string;
  /** Git mode of the content. */
  mode?: GitMode;
  /** Permission bits, owner and group of the file before, so `undo` recreates it no wider than it was. */
  perm?: number;
  uid?: number;
  gid?: number;
  /** What the operation wrote there (null: it removed the file); `undo` refuses a file that no longer holds it. */
  result?: { oid: string; mode: GitMode } | null;
}

/** What a safety checkpoint records about the operation it protects against. */
export interface SafetyDetails {
  /** The operation id, e.g. `revert`, `undo`. */
  operation: string;
  /** The changeset URI it was invoked on. */
  changeset: string;
  /** Every path the operation was about to write, with its content before. */
  paths: SafetyPath[];
  /** For `undo`, and for a failed operation that put back what it wrote (`rollback`): the safety checkpoint it cancels. */
  undoes?: number;
  /** For `restore-checkpoint-and-turns`: the last turn kept (null: none). */
  truncateAfter?: string | null;
  /** What the operation reported. */
  message?: string;
  /** The line the session's timeline shows for it ("Reverted lines 3–9 of src/app.ts (turn 2)"). */
  action?: string;
  /** The write-ahead intent of the operation: a restart finishes an operation whose safety checkpoint carries it. */
  intent?: string;
}

/** A safety checkpoint read back. */
export interface SafetyRecord {
  index: number;
  createdAt: string;
  details: SafetyDetails;
}

/** A session read back from the stores. */
export interface LoadedSession {
  details: SessionStartDetails;
  startTrees: RootTrees[];
  turns: TurnRecord[];
  /** True when the store marked the session ended. */
  ended: boolean;
  /** When it was marked ended. */
  endedAt?: string;
  /** The state the last operation after the last turn left, and how many turns there were then. */
  settled?: { trees: RootTrees[]; afterTurns: number };
}

/** What operations record and read of a session's history: the safety checkpoint before each of them. */
export interface SafetyCheckpoints {
  /** Records what an operation is about to overwrite (see {@link SessionJournal.writeSafety}); resolves with the checkpoint's index. */
  write(details: SafetyDetails): Promise<number>;
  /** The safety checkpoints of operations, oldest first. */
  list(): Promise<SafetyRecord[]>;
  /** The safety checkpoints as last read or written, without waiting; undefined until they were read. */
  known(): readonly SafetyRecord[] | undefined;
}

/**
 * Writes a session's history as checkpoints in every working directory's
 * store (each store holds its own trees), and reads it back after a
 * restart. Captured files go into a `captures` subtree of the end
 * checkpoint, so retention keeps them as long as the turn.
 */
export class SessionJournal {
  /** The safety records, once read: operations ask for them at every invocation and to show whether `undo` is possible. */
  private safety: SafetyRecord[] | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly roots: readonly WorkspaceRoot[],
  ) {}

  async writeSessionStart(trees: readonly RootTrees[], details: SessionStartDetails): Promise<void> {
    const unread = unreadListsOf(trees);
    await this.eachRoot(async (root, i) => {
      await root.store.writeCheckpoint({
        sessionId: this.sessionId,
        kind: 'safety',
        reason: SESSION_START_REASON,
        details: unread ? { ...details, unread } : details,
        ...(await this.rootsOf(trees[i]!, i, [])),
      });
    });
    this.safety = safetyRecordsOf(await this.roots[0]!.store.listSessionCheckpoints(this.sessionId));
  }

  async writeTurnStart(turn: TurnRecord): Promise<void> {
    await this.eachRoot(async (root, i) => {
      await root.store.writeCheckpoint({
        sessionId: this.sessionId,
        kind: 'start',
        turnId: turn.id,
        turn: { ...(turn.message !== undefined ? { message: turn.message } : {}), startedAt: turn.startedAt },
        ...(await this.rootsOf(turn.before[i]!, i, [])),
      });
    });
  }

  async writeTurnEnd(turn: TurnRecord): Promise<void> {
    const captures = [...turn.captures.values()];
    const unread = { before: unreadListsOf(turn.before), after: turn.after ? unreadListsOf(turn.after) : undefined };
    const journal: TurnJournal = {
      entries: turn.entries ?? [],
      ...(turn.counts ? { counts: turn.counts } : {}),
      ...(turn.summary ? { summary: turn.summary } : {}),
      ...(turn.error ? { error: turn.error } : {}),
      ...(turn.durationMs !== undefined ? { durationMs: turn.durationMs } : {}),
      ...(turn.automatic ? { automatic: true as const } : {}),
      ...(turn.editSpan ? { editSpan: turn.editSpan } : {}),
      tools: [...turn.tools],
      ...(turn.presented && turn.presented.length > 0 ? { presented: turn.presented } : {}),
      ...(unread.before || unread.after
        ? { unread: { ...(unread.before ? { before: unread.before } : {}), ...(unread.after ? { after: unread.after } : {}) } }
        : {}),
      captures: captures.map((c) => ({
        absPath: c.absPath,
        root: c.root,
        ...(c.before ? { before: stored(c.before) } : {}),
        ...(c.after ? { after: stored(c.after) } : {}),
        ...(c.leftWorkingDirectory ? { leftWorkingDirectory: true as const } : {}),
      })),
    };
    await this.eachRoot(async (root, i) => {
      const mine = captures.map((c, n) => ({ c, n })).filter(({ c }) => Math.max(c.root, 0) === i);
      const entries: NewTreeEntry[] = [];
      for (const { c, n } of mine) {
        for (const [side, ref] of [
          ['before', c.before],
          ['after', c.after],
        ] as const) {
          if (ref && !ref.oversized && ref.oid) entries.push({ name: `${n}-${side}`, mode: ref.mode, oid: ref.oid });
        }
      }
      await root.store.writeCheckpoint({
        sessionId: this.sessionId,
        kind: 'end',
        turnId: turn.id,
        turn: {
          ...(turn.message !== undefined ? { message: turn.message } : {}),
          ...(turn.state ? { state: turn.state } : {}),
          startedAt: turn.startedAt,
          endedAt: new Date(Date.parse(turn.startedAt) + (turn.durationMs ?? 0)),
          tools: [...new Set(turn.tools.values())],
        },
        ...(i === 0 ? { entries: journal } : {}),
        ...(await this.rootsOf(turn.after![i]!, i, entries)),
      });
    });
  }

  /** Records the workspace before one tool call of the turn; the turn's start checkpoint is already written. */
  async writeStep(turn: TurnRecord, step: StepRecord): Promise<void> {
    const unread = unreadListsOf(step.trees);
    const details: StepDetails = { at: step.at, paths: step.paths, ...(step.tool !== undefined ? { tool: step.tool } : {}), ...(unread ? { unread } : {}) };
    await this.eachRoot(async (root, i) => {
      await root.store.writeCheckpoint({
        sessionId: this.sessionId,
        kind: 'step',
        turnId: turn.id,
        step: step.index,
        details,
        ...(await this.rootsOf(step.trees[i]!, i, [])),
      });
    });
  }

  /**
   * Records the content of every path an operation is about to write (the
   * blobs must already be in the stores), before anything is written.
   * Returns the checkpoint's index, the same in every store.
   */
  async writeSafety(details: SafetyDetails): Promise<number> {
    let index = 0;
    let createdAt = '';
    await this.eachRoot(async (root, i) => {
      const entries: NewTreeEntry[] = [];
      for (const [n, p] of details.paths.entries()) {
        if (Math.max(p.root, 0) !== i) continue;
        if (p.oid && p.mode) entries.push({ name: String(n), mode: p.mode, oid: p.oid });
        // What the operation writes stays reachable as long as the record: a restart finishes an interrupted operation from it.
        if (p.result && p.result.mode !== '160000' && (await root.store.hasObject(p.result.oid)))
          entries.push({ name: `${n}-result`, mode: p.result.mode, oid: p.result.oid });
      }
      const tree = await root.store.writeObject('tree', serializeTree(entries));
      const info = await root.store.writeCheckpoint({ sessionId: this.sessionId, kind: 'safety', reason: details.operation, details, tree });
      if (i === 0) {
        index = info.safetyIndex ?? 0;
        createdAt = info.createdAt;
      }
    });
    this.safety?.push({ index, createdAt, details: JSON.parse(JSON.stringify(details)) as SafetyDetails });
    return index;
  }

  /** The safety checkpoints of operations, oldest first (the session-start record is not one). */
  async listSafety(): Promise<SafetyRecord[]> {
    if (this.safety) return [...this.safety];
    const chain = await this.roots[0]!.store.listSessionCheckpoints(this.sessionId);
    this.safety = safetyRecordsOf(chain);
    return [...this.safety];
  }

  /** The safety checkpoints as last read or written, without waiting; undefined until the journal was read or the session started. */
  knownSafety(): readonly SafetyRecord[] | undefined {
    return this.safety;
  }

  /** Records the state an operation left, so a restart starts the next after-the-fact turn from it too. */
  async writeSettled(trees: readonly RootTrees[]): Promise<void> {
    await this.eachRoot(async (root, i) => {
      await root.store.writeCheckpoint({
        sessionId: this.sessionId,
        kind: 'safety',
        reason: SETTLED_REASON,
        details: { operation: SETTLED_REASON, ...(unreadListsOf(trees) ? { unread: unreadListsOf(trees) } : {}) },
        ...(await this.rootsOf(trees[i]!, i, [])),
      });
    });
  }

  /** Marks the session ended in every store (retention may then drop it, oldest first). */
  async markEnded(): Promise<void> {
    await this.eachRoot((root) => root.store.markSessionEnded(this.sessionId));
  }

  /** Reads a session back, or undefined when the stores hold nothing for it. */
  async load(): Promise<LoadedSession | undefined> {
    const chains = await Promise.all(this.roots.map((r) => r.store.listSessionCheckpoints(this.sessionId)));
    const first = chains[0]!;
    this.safety = safetyRecordsOf(first);
    const start = first.find((c) => c.kind === 'safety' && c.reason === SESSION_START_REASON);
    if (!start) return undefined;
    const key = (c: CheckpointInfo) =>
      c.kind === 'safety' ? `safety ${c.safetyIndex}` : c.kind === 'step' ? `step ${c.step} ${c.turnId}` : `${c.kind} ${c.turnId}`;
    const byKey = chains.map((chain) => new Map(chain.map((c) => [key(c), c])));
    const treesAt = (c: CheckpointInfo): RootTrees[] => byKey.map((m, i) => treesOf(m.get(key(c)) ?? (i === 0 ? c : undefined)));
    const turns: TurnRecord[] = [];
    let settled: LoadedSession['settled'];
    for (const c of first) {
      if (c.kind === 'safety' && c.reason === SETTLED_REASON) {
        settled = { trees: withUnreadLists(treesAt(c), (c.details as { unread?: unknown } | undefined)?.unread), afterTurns: turns.length };
        continue;
      }
      const truncate = c.kind === 'safety' ? (c.details as SafetyDetails | undefined)?.truncateAfter : undefined;
      if (truncate !== undefined) {
        const keep = truncate === null ? 0 : turns.findIndex((t) => t.id === truncate) + 1;
        if (truncate === null || keep > 0) turns.splice(keep);
      } else if (c.kind === 'start' && c.turnId !== undefined) {
        const record: TurnRecord = {
          id: c.turnId,
          index: turns.length + 1,
          startedAt: c.turn?.startedAt ?? c.createdAt,
          before: treesAt(c),
          captures: new Map(),
          tools: new Map(),
        };
        if (c.turn?.message !== undefined) record.message = c.turn.message;
        turns.push(record);
      } else if (c.kind === 'step' && c.turnId !== undefined && c.step !== undefined) {
        const record = turns.find((t) => t.id === c.turnId);
        const details = c.details as Partial<StepDetails> | undefined;
        if (!record || !Array.isArray(details?.paths)) continue;
        const step: StepRecord = { index: c.step, at: details.at ?? c.createdAt, paths: details.paths, trees: withUnreadLists(treesAt(c), details.unread) };
        if (typeof details.tool === 'string') step.tool = details.tool;
        (record.steps ??= []).push(step);
      } else if (c.kind === 'end' && c.turnId !== undefined) {
        const record = turns.find((t) => t.id === c.turnId);
        if (!record) continue;
        record.after = treesAt(c);
        record.state = c.turn?.state ?? 'complete';
        const journal = (await this.roots[0]!.store.readChangeEntries(this.sessionId, c.turnId)) as TurnJournal | undefined;
        if (journal) this.applyJournal(record, journal);
      }
    }
    const mine = (await this.roots[0]!.store.listSessions()).find((s) => s.sessionId === this.sessionId);
    return {
      details: start.details as SessionStartDetails,
      startTrees: withUnreadLists(treesAt(start), (start.details as SessionStartDetails | undefined)?.unread),
      turns,
      ended: mine !== undefined && !mine.live,
      ...(mine?.endedAt !== undefined ? { endedAt: mine.endedAt } : {}),
      ...(settled && settled.afterTurns === turns.length ? { settled } : {}),
    };
  }

  private applyJournal(record: TurnRecord, journal: TurnJournal): void {
    record.entries = journal.entries;
    if (journal.counts) record.counts = journal.counts;
    if (journal.summary) record.summary = journal.summary;
    if (journal.error) record.error = journal.error;
    if (journal.durationMs !== undefined) record.durationMs = journal.durationMs;
    if (journal.automatic) record.automatic = true;
    if (journal.editSpan) record.editSpan = journal.editSpan;
    record.tools = new Map(journal.tools);
    if (journal.presented) record.presented = journal.presented;
    if (journal.unread?.before) record.before = withUnreadLists(record.before, journal.unread.before);
    if (journal.unread?.after && record.after) record.after = withUnreadLists(record.after, journal.unread.after);
    for (const c of journal.captures) {
      const store = this.roots[Math.max(c.root, 0)]!.store;
      const side = (s: StoredSide | undefined): CapturedSide => (s ? { ...s, store } : undefined);
      const capture: CaptureRecord = { absPath: c.absPath, root: c.root, before: side(c.before), after: side(c.after) };
      if (c.leftWorkingDirectory) capture.leftWorkingDirectory = true;
      record.captures.set(c.absPath, capture);
    }
  }

  private async rootsOf(trees: RootTrees, rootIndex: number, captures: NewTreeEntry[]): Promise<{ roots: CheckpointRootInput[]; layout: 'single' | 'multi' }> {
    const roots: CheckpointRootInput[] = [{ name: 'workspace', path: this.roots[rootIndex]!.dir, tree: trees.tree }];
    trees.nested.forEach((n, k) => {
      roots.push({ name: `nested-${k}`, path: n.path, tree: n.tree });
    });
    if (captures.length > 0) {
      roots.push({ name: 'captures', tree: await this.roots[rootIndex]!.store.writeObject('tree', serializeTree(captures)) });
    }
    return { roots, layout: roots.length === 1 ? 'single' : 'multi' };
  }

  private async eachRoot(task: (root: WorkspaceRoot, index: number) => Promise<void>): Promise<void> {
    for (let i = 0; i < this.roots.length; i++) await task(this.roots[i]!, i);
  }
}

function stored(side: NonNullable<CapturedSide>): StoredSide {
  return { oid: side.oid, mode: side.mode, ...(side.size !== undefined ? { size: side.size } : {}), ...(side.oversized ? { oversized: true } : {}) };
}

function safetyRecordsOf(chain: readonly CheckpointInfo[]): SafetyRecord[] {
  return chain
    .filter((c) => c.kind === 'safety' && c.reason !== SESSION_START_REASON && c.reason !== SETTLED_REASON && c.details !== undefined)
    .map((c) => ({ index: c.safetyIndex ?? 0, createdAt: c.createdAt, details: c.details as SafetyDetails }));
}

function treesOf(c: CheckpointInfo | undefined): RootTrees {
  if (!c) return { tree: EMPTY_TREE, nested: [] };
  const main = c.roots.find((r) => r.name === 'workspace') ?? c.roots[0]!;
  const nested = c.roots.filter((r) => r.name.startsWith('nested-')).map((r) => ({ path: r.path ?? '', tree: r.tree }));
  return { tree: main.tree, nested };
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
