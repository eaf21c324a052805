import { relative } from 'node:path';
import { countChanges, recordChangeEntries } from '../changes/change-entries.js';
import { collectTreeChanges, type RootTrees } from '../changes/collect-changes.js';
import { classify, type FileChange } from '../changes/file-change.js';
import { detectRenames } from '../changes/renames.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { toSlashes } from '../paths.js';
import { ulid } from '../ulid.js';
import { captureAfter, captureBefore, editTarget } from './captures.js';
import type { SessionFiles } from './session-files.js';
import type { SessionJournal } from './session-journal.js';
import { SessionError } from './session-error.js';
import { treesWithWrites, type WrittenFile } from './settled-trees.js';
import { recordStep } from './step-recorder.js';
import type { CaptureRecord, TurnEndState, TurnRecord } from './turn-record.js';
import { DEFAULT_MAX_FILES, summarizeTurn, type ChangedFileSummary, type TurnSummary } from './turn-summary.js';

/** Options of a turn's start (see `RecordingSession.startTurn`). */
export interface StartTurnOptions {
  /** Turn id; a ULID when omitted. Must be unique within the session. */
  id?: string;
  /** The prompt or description of the turn. */
  message?: string;
  /**
   * Where the turn's starting trees come from: `snapshot` (default) records
   * the workspace now; `previous` reuses the end state of the last turn (or
   * the session's start), for turns noticed only after their first change.
   */
  baseline?: 'snapshot' | 'previous';
  /** Recorded without a harness: the timeline names it by what it touched. */
  automatic?: boolean;
}

/** Options of a turn's end (see `RecordingSession.endTurn`). */
export interface EndTurnOptions {
  /** How the turn ended (default `complete`). */
  state?: TurnEndState;
  /** Error text for `state: 'error'`. */
  error?: string;
  /** When the first and last file change of the turn were seen (automatic turns), ISO 8601. */
  editSpan?: { from: string; to: string };
}

/** A handle on the active turn. */
export interface TurnHandle {
  readonly id: string;
  /** Captures the named paths before a tool edits them; resolves with the paths captured. */
  beforeEdit(paths: readonly string[], opts?: { tool?: string }): Promise<string[]>;
  /** Ends the turn and resolves with its summary. */
  end(opts?: EndTurnOptions): Promise<TurnSummary>;
}

/** What the recorder is given by its session. */
export interface TurnRecorderDeps {
  files: SessionFiles;
  journal: SessionJournal;
  /** Snapshots every working directory (the caller is in the session's queue). */
  snapshot(): Promise<RootTrees[]>;
  warn(line: string): void;
  /** Retention dropped these ended sessions from a store the session writes to. */
  retentionDropped(sessionIds: string[]): void;
  /** Most files listed in a turn summary. */
  maxFiles?: number | undefined;
  /** Captured files above this size are listed as oversized. */
  captureMaxBytes?: number | undefined;
}

/**
 * The turns of one session and how each is recorded: its baseline, the
 * steps and captures before tool calls, its end snapshot, changes, summary
 * and change entries, in the stores before anything is reported. Every
 * method expects to run in the session's serial queue.
 */
export class TurnRecorder {
  /** Turns in order, ended and active. */
  readonly turns: TurnRecord[] = [];
  /** Trees of every working directory when the session began. */
  startTrees: RootTrees[] = [];
  /** The turn being recorded. */
  active: TurnRecord | undefined;
  /** The workspace as the server itself last left it (after an operation wrote files); newer than the last turn's end. */
  settled: { trees: RootTrees[]; afterTurns: number } | undefined;
  private readonly changeCache = new WeakMap<TurnRecord, Promise<FileChange[]>>();

  constructor(private readonly deps: TurnRecorderDeps) {}

  /** The recorded turn with this id (ended or active). */
  turn(id: string): TurnRecord | undefined {
    return this.turns.find((t) => t.id === id);
  }

  /** Records a turn's start; the caller has ended the turn that was active. */
  async begin(opts: StartTurnOptions): Promise<TurnRecord> {
    const id = opts.id ?? ulid();
    if (this.turn(id)) throw new SessionError('conflict', `turn "${id}" already exists in this session`);
    const record: TurnRecord = {
      id,
      index: this.turns.length + 1,
      startedAt: new Date().toISOString(),
      before: (opts.baseline === 'previous' ? this.previousTrees() : undefined) ?? (await this.deps.snapshot()),
      captures: new Map(),
      tools: new Map(),
    };
    if (opts.message !== undefined) record.message = opts.message;
    if (opts.automatic) record.automatic = true;
    await this.deps.journal.writeTurnStart(record);
    this.turns.push(record);
    this.active = record;
    return record;
  }

  /** A step checkpoint, then captures of the paths (see `RecordingSession.beforeEdit`). */
  async beforeEdit(turnId: string, paths: readonly string[], tool: string | undefined): Promise<string[]> {
    const turn = this.requireActive(turnId);
    const { files } = this.deps;
    // Every path is checked before anything is copied: one outside path refuses the whole request.
    const targets = [];
    for (const p of paths) targets.push(await editTarget(files, p));
    await recordStep(
      turn,
      targets.map((t) => t.absPath),
      tool,
      { snapshot: () => this.deps.snapshot(), journal: this.deps.journal },
    );
    return captureBefore(files, turn, targets, paths, tool, this.deps.captureMaxBytes);
  }

  /** Ends a turn: its record is complete (or marked failed) when this resolves. */
  async finish(turn: TurnRecord, opts: EndTurnOptions): Promise<TurnSummary> {
    const { files, journal } = this.deps;
    const endStartedAt = Date.now();
    const state = opts.state ?? 'complete';
    this.active = undefined;
    const span = opts.editSpan;
    const durationMs = span ? Math.max(0, Date.parse(span.to) - Date.parse(span.from)) : Math.max(0, Date.now() - Date.parse(turn.startedAt));
    turn.durationMs = durationMs;
    if (span) turn.editSpan = { from: span.from, to: span.to };
    turn.state = state;
    if (opts.error) turn.error = opts.error;
    try {
      turn.after = await this.deps.snapshot();
      await captureAfter(files, turn, (line) => this.deps.warn(line), this.deps.captureMaxBytes);
      await files.flush();
      const changes = await this.turnChanges(turn);
      turn.summary = await this.summarize(turn, changes);
      turn.entries = await recordChangeEntries(changes, {
        turnId: turn.id,
        pathRoots: files.list().map((r) => r.repository?.workTree ?? r.dir),
        workingDirectories: [...files.dirs],
        tools: turn.tools,
      });
      turn.counts = countChanges(turn.entries);
      await journal.writeTurnEnd(turn);
      for (const root of files.list()) {
        const report = await root.maintain();
        if (report.droppedSessions.length > 0) {
          this.deps.warn(`store over its budget: dropped ${report.droppedSessions.length} ended session(s), ${report.sizeBefore} → ${report.sizeAfter} bytes`);
          this.deps.retentionDropped(report.droppedSessions.map((s) => s.sessionId));
        }
      }
    } catch (error) {
      // The record of this turn is lost, but the session and the next turn go on.
      const message = `recording turn "${turn.id}" failed: ${(error as Error).message}`;
      this.deps.warn(message);
      turn.state = 'error';
      turn.error = message;
      turn.summary = summarizeTurn([], { turn: turn.id, cwd: files.dirs[0]! });
    }
    // The next turn end reads this one's end trees again; what earlier turns read is history.
    files.dropUnusedSince(endStartedAt);
    return turn.summary;
  }

  /** The changes of one ended turn: tree changes plus captured paths the trees do not cover. Cached: a turn never changes once ended. */
  turnChanges(turn: TurnRecord): Promise<FileChange[]> {
    if (!turn.after) return Promise.resolve([]);
    let cached = this.changeCache.get(turn);
    if (!cached) {
      cached = this.computeTurnChanges(turn);
      this.changeCache.set(turn, cached);
      cached.catch(() => this.changeCache.delete(turn));
    }
    return cached;
  }

  /** The end trees of the last turn, or the session's start trees before any turn (or as an operation left them); undefined when the last turn has none. */
  previousTrees(): RootTrees[] | undefined {
    if (this.settled && this.settled.afterTurns === this.turns.length) return this.settled.trees;
    const last = this.turns.at(-1);
    return last ? last.after : this.startTrees;
  }

  /**
   * The state the next turn noticed after the fact starts from, after an
   * operation wrote files: the last recorded state plus exactly what it
   * wrote (a snapshot when that cannot be computed). Stored before it counts.
   */
  async settle(writes: readonly WrittenFile[]): Promise<void> {
    const { files } = this.deps;
    const base = this.previousTrees();
    const sources = files.list().map((r, i) => ({ dir: r.dir, store: r.store, reader: files.source(i).reader }));
    const edited = base ? await treesWithWrites(sources, base, writes).catch(() => undefined) : undefined;
    if (edited) await files.flush();
    this.settled = { trees: edited ?? (await this.deps.snapshot()), afterTurns: this.turns.length };
    await this.deps.journal.writeSettled(this.settled.trees);
  }

  /** Drops every turn after `turnId` (all when null) and returns them. */
  dropAfter(turnId: string | null): TurnRecord[] {
    const keep = turnId === null ? 0 : this.turns.findIndex((t) => t.id === turnId) + 1;
    if (turnId !== null && keep === 0) throw new SessionError('not-found', `no turn "${turnId}" in this session`);
    return this.turns.splice(keep);
  }

  /** The active turn, which must be `turnId`. */
  requireActive(turnId: string): TurnRecord {
    if (typeof turnId !== 'string' || turnId.length === 0) throw new SessionError('invalid', 'turnId must be a non-empty string');
    if (!this.active) throw new SessionError('invalid', `no turn is active in this session (got turnId "${turnId}")`);
    if (this.active.id !== turnId) {
      throw new SessionError('invalid', `turnId "${turnId}" does not match the active turn "${this.active.id}"`);
    }
    return this.active;
  }

  private async computeTurnChanges(turn: TurnRecord): Promise<FileChange[]> {
    const { files } = this.deps;
    const changes = await collectTreeChanges(files.treeSources(), turn.before, turn.after ?? []);
    for (const capture of turn.captures.values()) {
      if (await this.coveredBySnapshot(capture, turn)) continue;
      const kind = classify(capture.before, capture.after);
      if (!kind) continue;
      const root = capture.root;
      const change: FileChange = {
        kind,
        root,
        path: root >= 0 ? toSlashes(relative(files.dirs[root]!, capture.absPath)) : capture.absPath,
        absPath: capture.absPath,
        captured: true,
      };
      if (capture.before) change.before = capture.before;
      if (capture.after) change.after = capture.after;
      if (capture.leftWorkingDirectory) change.leftWorkingDirectory = true;
      changes.push(change);
    }
    return detectRenames(changes);
  }

  private async summarize(turn: TurnRecord, changes: readonly FileChange[]): Promise<TurnSummary> {
    const { files } = this.deps;
    const listed: ChangedFileSummary[] = [];
    for (const change of changes) {
      const stats = await files.stats(change);
      const file: ChangedFileSummary = { path: change.path, display: files.display(change), added: stats.added, deleted: stats.deleted };
      if (stats.binary) file.binary = true;
      if (stats.oversized) {
        file.oversized = true;
        file.added = 0;
        file.deleted = 0;
      }
      listed.push(file);
    }
    return summarizeTurn(listed, {
      turn: turn.id,
      cwd: files.dirs[0]!,
      maxFiles: this.deps.maxFiles ?? DEFAULT_MAX_FILES,
      snapshot: { before: turn.before[0]!.tree, after: turn.after![0]!.tree },
    });
  }

  private async coveredBySnapshot(capture: CaptureRecord, turn: TurnRecord): Promise<boolean> {
    if (capture.root < 0) return false;
    const source = this.deps.files.source(capture.root);
    const rel = toSlashes(relative(source.dir, capture.absPath));
    for (const trees of [turn.before[capture.root], turn.after?.[capture.root]]) {
      if (!trees) continue;
      const nested = trees.nested.find((n) => rel.startsWith(`${n.path}/`));
      const hit = nested ? await lookupPath(source.reader, nested.tree, rel.slice(nested.path.length + 1)) : await lookupPath(source.reader, trees.tree, rel);
      if (hit) return true;
    }
    return false;
  }
}
