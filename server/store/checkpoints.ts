/**
 * Checkpoints: commits in the shadow repository on per-session refs. Each
 * session's checkpoints form one chain (parent = the session's previous
 * checkpoint, `head` = the latest), so `git log <prefix>head` shows a
 * session's whole history.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkpointMessage,
  parseCheckpointMessage,
  SESSIONS_PREFIX,
  sessionRefs,
  type CheckpointKind,
  type CheckpointTrailer,
  type RootLayout,
  type TurnState,
} from './checkpoint-format.js';
import { parseCommit, serializeCommit } from './commit.js';
import { StoreInputError } from './errors.js';
import { isNotFound } from '../private-files.js';
import { SerialQueue } from '../serial-queue.js';
import { assertOid, describeValue, EMPTY_TREE_OID } from './object-format.js';
import { deleteRef, listRefs, readRef, writeRef } from './refs.js';
import { serializeTree, type TreeReader } from './tree.js';
import type { ObjectStore } from './types.js';

export type { CheckpointKind, RootLayout, TurnState } from './checkpoint-format.js';

/** One root of a checkpoint as given by the caller. */
export interface CheckpointRootInput {
  /** Entry name of this root in a multi-root tree (a single path component, unique per checkpoint). */
  name: string;
  /** The directory this root snapshots, recorded for display and restore. */
  path?: string;
  /** The root's snapshot tree id. */
  tree: string;
}

/** A point in time given as an ISO 8601 string, epoch milliseconds or a Date. */
export type TimeInput = string | number | Date;

/** Metadata of the turn a start or end checkpoint belongs to. */
export interface TurnMetadata {
  /** The turn's message (for example the user prompt). */
  message?: string;
  /** How the turn ended; meaningful on end checkpoints. */
  state?: TurnState;
  /** When the turn started. */
  startedAt?: TimeInput;
  /** When the turn ended. */
  endedAt?: TimeInput;
  /** Names of the tools the turn used. */
  tools?: string[];
}

interface CheckpointInputBase {
  /** The session's id (any non-empty string up to 1024 characters). */
  sessionId: string;
  /** The snapshot tree of a single-root session; give this or `roots`. */
  tree?: string;
  /** The roots of the snapshot, in order; give this or `tree`. */
  roots?: CheckpointRootInput[];
  /** Tree layout; `single` for one root, `multi` otherwise, unless given. */
  layout?: RootLayout;
}

/** A checkpoint at a turn's start or end. */
export interface TurnCheckpointInput extends CheckpointInputBase {
  /** `start` (baseline before the agent acts) or `end` (after the turn). */
  kind: 'start' | 'end';
  /** The turn's id (any non-empty string up to 1024 characters). */
  turnId: string;
  /** Turn metadata recorded in the commit message. */
  turn?: TurnMetadata;
  /**
   * The turn's change entries: any JSON-serialisable value, stored as a blob
   * on the turn's `entries` ref (replacing an earlier one of the same turn).
   */
  entries?: unknown;
}

/** The workspace before one tool call of a turn (a step of the turn). */
export interface StepCheckpointInput extends CheckpointInputBase {
  /** Always `step`. */
  kind: 'step';
  /** The turn's id; its start checkpoint is written first. */
  turnId: string;
  /** Position of the step within the turn, starting at 1. */
  step: number;
  /** Caller-defined JSON about the tool call (its name, the paths it named). */
  details?: unknown;
}

/** A checkpoint taken before a destructive operation so it can be undone. */
export interface SafetyCheckpointInput extends CheckpointInputBase {
  /** Always `safety`. */
  kind: 'safety';
  /** Why it was taken, e.g. `revert turn 3`. */
  reason: string;
  /** Caller-defined JSON about the operation. */
  details?: unknown;
}

/** What {@link Checkpoints.write} accepts. */
export type CheckpointInput = TurnCheckpointInput | StepCheckpointInput | SafetyCheckpointInput;

/** One root of a stored checkpoint. */
export interface CheckpointRoot {
  /** Entry name in a multi-root tree (as given when written). */
  name: string;
  /** The directory the root snapshots, if recorded. */
  path?: string;
  /** The root's snapshot tree id. */
  tree: string;
}

/** A stored checkpoint. */
export interface CheckpointInfo {
  /** The ref pointing at the checkpoint commit. */
  ref: string;
  /** The checkpoint commit id. */
  commit: string;
  /** The commit's tree: the single root's tree or the multi-root tree. */
  tree: string;
  /** The session's previous checkpoint commit, if any. */
  parent?: string;
  /** The session's raw id. */
  sessionId: string;
  /** Which kind of checkpoint this is. */
  kind: CheckpointKind;
  /** Position in the session's chain, starting at 1. */
  seq: number;
  /** When it was written (ISO 8601). */
  createdAt: string;
  /** Turn number within the session, starting at 1 (turn checkpoints). */
  turnIndex?: number;
  /** The turn's raw id (turn checkpoints). */
  turnId?: string;
  /** Turn metadata with times as ISO 8601 strings (turn checkpoints). */
  turn?: { message?: string; state?: TurnState; startedAt?: string; endedAt?: string; tools?: string[] };
  /** Position of the step within its turn, starting at 1 (step checkpoints). */
  step?: number;
  /** Number of the safety checkpoint within the session (safety checkpoints). */
  safetyIndex?: number;
  /** Why the safety checkpoint was taken (safety checkpoints). */
  reason?: string;
  /** Caller-defined details of the operation (safety checkpoints) or the tool call (step checkpoints). */
  details?: unknown;
  /** Tree layout. */
  layout: RootLayout;
  /** The roots with their trees. */
  roots: CheckpointRoot[];
  /** The turn's `entries` ref (turn checkpoints). */
  entriesRef?: string;
}

/** A session found in the store. */
export interface StoredSession {
  /** The session's raw id. */
  sessionId: string;
  /** True until the session is marked ended. */
  live: boolean;
  /** When the session was marked ended (ISO 8601). */
  endedAt?: string;
  /** Number of checkpoints in the session's chain. */
  checkpointCount: number;
  /** When the latest checkpoint was written (ISO 8601). */
  lastCheckpointAt?: string;
  /** The ref prefix holding the session's refs. */
  refPrefix: string;
}

const MAX_ID = 1024;
const MAX_TEXT = 1024 * 1024;

function requireString(value: unknown, what: string, max: number, allowEmpty = false): string {
  if (typeof value !== 'string') throw new StoreInputError(`${what} must be a string, got ${describeValue(value)}`);
  if (!allowEmpty && value.length === 0) throw new StoreInputError(`${what} must not be empty`);
  if (value.length > max) throw new StoreInputError(`${what} is longer than ${max} characters`);
  return value;
}

function toIso(value: unknown, what: string): string {
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime()))
    throw new StoreInputError(`${what} must be an ISO 8601 time, epoch milliseconds or a Date, got ${describeValue(value)}`);
  return date.toISOString();
}

function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new StoreInputError(`${what} is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (text === undefined) throw new StoreInputError(`${what} is not JSON-serialisable`);
  return text;
}

const TURN_STATES: readonly TurnState[] = ['complete', 'cancelled', 'error'];

/** Per-session chain position, cached after the first read (the store has a single writer). */
interface SessionHead {
  commit: string | undefined;
  seq: number;
}

/** Checkpoint storage over a shadow repository. */
export class Checkpoints {
  private readonly heads = new Map<string, SessionHead>();
  /**
   * Per session, encoded turn id → turn number: read from the refs once, then
   * kept up to date by the writes (this process is the store's only writer).
   * Reading every turn ref at each checkpoint made a turn cost grow with the
   * session's length.
   */
  private readonly turnIndexes = new Map<string, Map<string, number>>();
  private readonly queue = new SerialQueue();

  constructor(
    private readonly repo: string,
    private readonly objects: ObjectStore,
    private readonly trees: TreeReader,
  ) {}

  /** Writes a checkpoint commit and its refs; objects are flushed before any ref points at them. */
  async write(input: CheckpointInput): Promise<CheckpointInfo> {
    if (typeof input !== 'object' || input === null) throw new StoreInputError('checkpoint input must be an object');
    const sessionId = requireString(input.sessionId, 'sessionId', MAX_ID);
    return this.queue.run(() => this.writeUnlocked(sessionId, input));
  }

  /** Resolves once every checkpoint write queued so far has finished. */
  async drain(): Promise<void> {
    await this.queue.run(async () => undefined);
  }

  /** Every checkpoint of a session, in chain order. */
  async list(sessionId: string): Promise<CheckpointInfo[]> {
    const refs = sessionRefs(requireString(sessionId, 'sessionId', MAX_ID));
    const all = await listRefs(this.repo, refs.prefix);
    const out: CheckpointInfo[] = [];
    for (const [ref, oid] of all) {
      if (/\/turns\/[^/]+\/(start|end)$/.test(ref) || /\/safety\/\d+$/.test(ref) || /\/steps\/[^/]+\/\d+$/.test(ref)) {
        out.push(await this.readCommit(ref, oid));
      }
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The checkpoint a ref points at, or undefined when the ref does not exist. */
  async read(ref: string): Promise<CheckpointInfo | undefined> {
    requireString(ref, 'ref', 4096);
    if (!ref.startsWith(SESSIONS_PREFIX)) throw new StoreInputError(`ref ${JSON.stringify(ref)} is not under ${SESSIONS_PREFIX}`);
    const oid = await readRef(this.repo, ref);
    return oid ? this.readCommit(ref, oid) : undefined;
  }

  /** The change entries stored for a turn, or undefined when none were stored. */
  async readChangeEntries(sessionId: string, turnId: string): Promise<unknown> {
    requireString(sessionId, 'sessionId', MAX_ID);
    requireString(turnId, 'turnId', MAX_ID);
    const index = await this.findTurnIndex(sessionId, turnId);
    if (index === undefined) return undefined;
    const oid = await readRef(this.repo, sessionRefs(sessionId).turn(index, turnId, 'entries'));
    if (!oid) return undefined;
    return JSON.parse(Buffer.from((await this.objects.readObject(oid)).content).toString('utf8'));
  }

  /** Every session with refs in the store. */
  async listSessions(): Promise<StoredSession[]> {
    let names: string[];
    try {
      names = await readdir(join(this.repo, SESSIONS_PREFIX));
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
    const out: StoredSession[] = [];
    for (const name of names) {
      const summary = await this.summarise(`${SESSIONS_PREFIX}${name}/`);
      if (summary) out.push(summary);
    }
    return out;
  }

  /** Marks a session ended (the first end time is kept); writing a checkpoint later makes it live again. */
  async markEnded(sessionId: string, endedAt: TimeInput = new Date()): Promise<void> {
    requireString(sessionId, 'sessionId', MAX_ID);
    const when = toIso(endedAt, 'endedAt');
    return this.queue.run(async () => {
      const refs = sessionRefs(sessionId);
      if (await readRef(this.repo, refs.ended)) return;
      const blob = await this.objects.writeObject('blob', Buffer.from(`${JSON.stringify({ sessionId, endedAt: when })}\n`));
      await this.objects.flush();
      await writeRef(this.repo, refs.ended, blob);
    });
  }

  /**
   * Deletes every ref of the session whose refs live under `refPrefix`. The
   * `ended` marker goes last, so an interrupted drop is finished by the next one.
   */
  dropSession(refPrefix: string): Promise<void> {
    return this.queue.run(async () => {
      const refs = await listRefs(this.repo, refPrefix);
      const endedRef = `${refPrefix}ended`;
      for (const ref of refs.keys()) if (ref !== endedRef) await deleteRef(this.repo, ref);
      await deleteRef(this.repo, endedRef);
      for (const id of [...this.heads.keys()]) if (sessionRefs(id).prefix === refPrefix) this.heads.delete(id);
      for (const id of [...this.turnIndexes.keys()]) if (sessionRefs(id).prefix === refPrefix) this.turnIndexes.delete(id);
    });
  }

  private async writeUnlocked(sessionId: string, input: CheckpointInput): Promise<CheckpointInfo> {
    const refs = sessionRefs(sessionId);
    const kind = input.kind;
    if (kind !== 'start' && kind !== 'end' && kind !== 'step' && kind !== 'safety') {
      throw new StoreInputError(`kind must be start, end, step or safety, got ${describeValue(kind)}`);
    }
    // Validate everything before writing anything.
    const fields: Partial<CheckpointTrailer> = {};
    let entriesJson: string | undefined;
    let turnId: string | undefined;
    if (input.kind === 'safety') {
      fields.reason = requireString(input.reason, 'reason', MAX_TEXT);
      if (input.details !== undefined) fields.details = JSON.parse(toJson(input.details, 'details'));
    } else if (input.kind === 'step') {
      turnId = requireString(input.turnId, 'turnId', MAX_ID);
      if (!Number.isInteger(input.step) || input.step < 1 || input.step > 999_999) {
        throw new StoreInputError(`step must be an integer from 1 to 999999, got ${describeValue(input.step)}`);
      }
      fields.step = input.step;
      if (input.details !== undefined) fields.details = JSON.parse(toJson(input.details, 'details'));
    } else {
      turnId = requireString(input.turnId, 'turnId', MAX_ID);
      Object.assign(fields, this.turnFields(input.turn));
      if (input.entries !== undefined) entriesJson = toJson(input.entries, 'entries');
    }
    const { layout, roots, tree } = await this.resolveRoots(input);
    const head = await this.sessionHead(sessionId);
    const createdAt = new Date();
    const trailer: CheckpointTrailer = {
      v: 1,
      kind,
      sessionId,
      seq: head.seq + 1,
      createdAt: createdAt.toISOString(),
      ...fields,
      layout,
      roots: roots.map((r) => ({ name: r.name, ...(r.path !== undefined ? { path: r.path } : {}) })),
    };
    let ref: string;
    let entriesRef: string | undefined;
    let entriesBlob: string | undefined;
    if (turnId === undefined) {
      trailer.safetyIndex = (await this.maxSafetyIndex(sessionId)) + 1;
      ref = refs.safetyRef(trailer.safetyIndex);
    } else {
      trailer.turnId = turnId;
      trailer.turnIndex = (await this.findTurnIndex(sessionId, turnId)) ?? (await this.maxTurnIndex(sessionId)) + 1;
      if (kind === 'step') {
        ref = refs.stepRef(trailer.turnIndex, turnId, trailer.step!);
      } else {
        ref = refs.turn(trailer.turnIndex, turnId, kind === 'end' ? 'end' : 'start');
        entriesRef = refs.turn(trailer.turnIndex, turnId, 'entries');
      }
      if (entriesRef && entriesJson !== undefined) {
        entriesBlob = await this.objects.writeObject('blob', Buffer.from(`${entriesJson}\n`, 'utf8'));
        trailer.entries = entriesBlob;
      }
    }
    const parents = head.commit ? [head.commit] : [];
    const commit = await this.objects.writeObject('commit', serializeCommit(tree, parents, checkpointMessage(trailer), createdAt));
    await this.objects.flush();
    if (entriesRef && entriesBlob) await writeRef(this.repo, entriesRef, entriesBlob);
    await writeRef(this.repo, ref, commit);
    if (turnId !== undefined) (await this.turnIndexesOf(sessionId)).set(encodedTurn(sessionId, turnId), trailer.turnIndex!);
    await writeRef(this.repo, refs.head, commit);
    // A session that records again after being ended is live again.
    if (await readRef(this.repo, refs.ended)) await deleteRef(this.repo, refs.ended);
    this.heads.set(sessionId, { commit, seq: trailer.seq });
    return this.info(ref, commit, tree, parents[0], trailer, roots, entriesRef);
  }

  private turnFields(turn: TurnMetadata | undefined): Partial<CheckpointTrailer> {
    if (turn === undefined) return {};
    if (typeof turn !== 'object' || turn === null) throw new StoreInputError('turn must be an object');
    const out: Partial<CheckpointTrailer> = {};
    if (turn.message !== undefined) out.message = requireString(turn.message, 'turn.message', MAX_TEXT, true);
    if (turn.state !== undefined) {
      if (!TURN_STATES.includes(turn.state)) throw new StoreInputError(`turn.state must be one of ${TURN_STATES.join(', ')}, got ${describeValue(turn.state)}`);
      out.state = turn.state;
    }
    if (turn.startedAt !== undefined) out.startedAt = toIso(turn.startedAt, 'turn.startedAt');
    if (turn.endedAt !== undefined) out.endedAt = toIso(turn.endedAt, 'turn.endedAt');
    if (turn.tools !== undefined) {
      if (!Array.isArray(turn.tools)) throw new StoreInputError('turn.tools must be an array of strings');
      out.tools = turn.tools.map((t, i) => requireString(t, `turn.tools[${i}]`, MAX_ID));
    }
    return out;
  }

  private async resolveRoots(input: CheckpointInputBase): Promise<{ layout: RootLayout; roots: CheckpointRoot[]; tree: string }> {
    let roots: CheckpointRoot[];
    if (input.roots !== undefined) {
      if (input.tree !== undefined) throw new StoreInputError('give either tree or roots, not both');
      if (!Array.isArray(input.roots) || input.roots.length === 0) throw new StoreInputError('roots must be a non-empty array');
      roots = input.roots.map((r, i) => {
        if (typeof r !== 'object' || r === null) throw new StoreInputError(`roots[${i}] must be an object`);
        const name = requireString(r.name, `roots[${i}].name`, 255);
        assertOid(r.tree, `roots[${i}].tree`);
        const path = r.path === undefined ? undefined : requireString(r.path, `roots[${i}].path`, 4096);
        return { name, tree: r.tree, ...(path !== undefined ? { path } : {}) };
      });
    } else {
      assertOid(input.tree, 'tree');
      roots = [{ name: 'root', tree: input.tree }];
    }
    const layout = input.layout ?? (roots.length === 1 ? 'single' : 'multi');
    if (layout !== 'single' && layout !== 'multi') throw new StoreInputError(`layout must be single or multi, got ${describeValue(layout)}`);
    if (layout === 'single' && roots.length !== 1) throw new StoreInputError('the single layout takes exactly one root');
    for (const root of roots) {
      if (root.tree === EMPTY_TREE_OID) await this.objects.writeObject('tree', new Uint8Array(0));
      await this.trees.verify(root.tree);
    }
    const tree =
      layout === 'single'
        ? roots[0]!.tree
        : await this.objects.writeObject('tree', serializeTree(roots.map((r) => ({ mode: '040000', name: r.name, oid: r.tree }))));
    return { layout, roots, tree };
  }

  private async sessionHead(sessionId: string): Promise<SessionHead> {
    const cached = this.heads.get(sessionId);
    if (cached) return cached;
    const commit = await readRef(this.repo, sessionRefs(sessionId).head);
    let seq = 0;
    if (commit) {
      const parsed = parseCommit((await this.objects.readObject(commit)).content, commit);
      seq = parseCheckpointMessage(parsed.message, commit).seq;
    }
    const head = { commit, seq };
    this.heads.set(sessionId, head);
    return head;
  }

  private async turnRefs(sessionId: string): Promise<{ index: number; encoded: string }[]> {
    const refs = sessionRefs(sessionId);
    const out: { index: number; encoded: string }[] = [];
    for (const ref of (await listRefs(this.repo, refs.turns)).keys()) {
      const match = /^(\d+)-([^/]+)\//.exec(ref.slice(refs.turns.length));
      if (match) out.push({ index: Number(match[1]), encoded: match[2]! });
    }
    return out;
  }

  private async turnIndexesOf(sessionId: string): Promise<Map<string, number>> {
    let indexes = this.turnIndexes.get(sessionId);
    if (!indexes) {
      indexes = new Map();
      for (const t of await this.turnRefs(sessionId)) indexes.set(t.encoded, t.index);
      this.turnIndexes.set(sessionId, indexes);
    }
    return indexes;
  }

  private async findTurnIndex(sessionId: string, turnId: string): Promise<number | undefined> {
    return (await this.turnIndexesOf(sessionId)).get(encodedTurn(sessionId, turnId));
  }

  private async maxTurnIndex(sessionId: string): Promise<number> {
    let max = 0;
    for (const index of (await this.turnIndexesOf(sessionId)).values()) max = Math.max(max, index);
    return max;
  }

  private async maxSafetyIndex(sessionId: string): Promise<number> {
    const refs = sessionRefs(sessionId);
    const names = [...(await listRefs(this.repo, refs.safety)).keys()];
    return Math.max(0, ...names.map((n) => Number(n.slice(refs.safety.length))).filter(Number.isFinite));
  }

  private async readCommit(ref: string, oid: string): Promise<CheckpointInfo> {
    const object = await this.objects.readObject(oid);
    if (object.type !== 'commit') throw new StoreInputError(`ref ${ref} points at a ${object.type}, not a checkpoint commit`);
    const commit = parseCommit(object.content, oid);
    const trailer = parseCheckpointMessage(commit.message, oid);
    let roots: CheckpointRoot[];
    if (trailer.layout === 'multi') {
      const entries = await this.trees.read(commit.tree);
      roots = trailer.roots.map((r) => {
        const entry = entries.find((e) => e.name === r.name && e.kind === 'tree');
        return { ...r, tree: entry?.oid ?? EMPTY_TREE_OID };
      });
    } else {
      roots = trailer.roots.map((r) => ({ ...r, tree: commit.tree }));
    }
    const entriesRef =
      (trailer.kind === 'start' || trailer.kind === 'end') && trailer.turnIndex !== undefined && trailer.turnId !== undefined
        ? sessionRefs(trailer.sessionId).turn(trailer.turnIndex, trailer.turnId, 'entries')
        : undefined;
    return this.info(ref, oid, commit.tree, commit.parents[0], trailer, roots, entriesRef);
  }

  private info(
    ref: string,
    commit: string,
    tree: string,
    parent: string | undefined,
    t: CheckpointTrailer,
    roots: CheckpointRoot[],
    entriesRef: string | undefined,
  ): CheckpointInfo {
    const info: CheckpointInfo = { ref, commit, tree, sessionId: t.sessionId, kind: t.kind, seq: t.seq, createdAt: t.createdAt, layout: t.layout, roots };
    if (parent) info.parent = parent;
    if (t.kind === 'safety') {
      if (t.safetyIndex !== undefined) info.safetyIndex = t.safetyIndex;
      if (t.reason !== undefined) info.reason = t.reason;
      if (t.details !== undefined) info.details = t.details;
    } else if (t.kind === 'step') {
      if (t.turnIndex !== undefined) info.turnIndex = t.turnIndex;
      if (t.turnId !== undefined) info.turnId = t.turnId;
      if (t.step !== undefined) info.step = t.step;
      if (t.details !== undefined) info.details = t.details;
    } else {
      if (t.turnIndex !== undefined) info.turnIndex = t.turnIndex;
      if (t.turnId !== undefined) info.turnId = t.turnId;
      const turn: NonNullable<CheckpointInfo['turn']> = {};
      if (t.message !== undefined) turn.message = t.message;
      if (t.state !== undefined) turn.state = t.state;
      if (t.startedAt !== undefined) turn.startedAt = t.startedAt;
      if (t.endedAt !== undefined) turn.endedAt = t.endedAt;
      if (t.tools !== undefined) turn.tools = t.tools;
      info.turn = turn;
      if (entriesRef) info.entriesRef = entriesRef;
    }
    return info;
  }

  private async summarise(prefix: string): Promise<StoredSession | undefined> {
    const head = await readRef(this.repo, `${prefix}head`);
    const ended = await readRef(this.repo, `${prefix}ended`);
    let sessionId: string | undefined;
    let endedAt: string | undefined;
    let checkpointCount = 0;
    let lastCheckpointAt: string | undefined;
    if (ended) {
      const marker = JSON.parse(Buffer.from((await this.objects.readObject(ended)).content).toString('utf8')) as { sessionId?: unknown; endedAt?: unknown };
      if (typeof marker.sessionId === 'string') sessionId = marker.sessionId;
      if (typeof marker.endedAt === 'string') endedAt = marker.endedAt;
    }
    if (head) {
      const commit = parseCommit((await this.objects.readObject(head)).content, head);
      const trailer = parseCheckpointMessage(commit.message, head);
      sessionId ??= trailer.sessionId;
      checkpointCount = trailer.seq;
      lastCheckpointAt = trailer.createdAt;
    }
    if (sessionId === undefined) return undefined;
    const summary: StoredSession = { sessionId, live: !ended, checkpointCount, refPrefix: prefix };
    if (endedAt) summary.endedAt = endedAt;
    if (lastCheckpointAt) summary.lastCheckpointAt = lastCheckpointAt;
    return summary;
  }
}

/** A turn id as it appears in its refs' directory name (after the turn number). */
function encodedTurn(sessionId: string, turnId: string): string {
  return sessionRefs(sessionId).turn(0, turnId, 'start').split('/').at(-2)!.replace(/^\d+-/, '');
}
