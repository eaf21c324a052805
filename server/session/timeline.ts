import { basename } from 'node:path';
import type { ChatState, JsonObject, SessionState, StateAction } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/index.js';
import { fileUri } from '../file-uri.js';
import { presentedMeta } from './presented-files.js';
import { chatSummaryOf } from './session-state.js';
import { stepsMeta } from './step-recorder.js';
import type { SafetyDetails } from './session-journal.js';
import type { TurnRecord } from './turn-record.js';
import { summaryMarkdown, type TurnSummary } from './turn-summary.js';
import type { AlsoChangedBy, TimelineMeta, TurnCommit, TurnStats, UserAction } from '../../protocol/extensions/timeline.js';

export type { TimelineMeta, TurnStats, UserAction } from '../../protocol/extensions/timeline.js';

const LISTED_PATHS = 20;
const MAX_USER_ACTIONS = 500;

/** Known provider ids and the names people know them by. */
const AGENT_NAMES: Record<string, string> = { 'claude-code': 'Claude Code', codex: 'Codex', cursor: 'Cursor', 'gemini-cli': 'Gemini CLI' };

/** The name of an agent from a provider id. */
export function agentName(provider: string): string {
  return AGENT_NAMES[provider] ?? provider;
}

/** "Claude Code — fix the login redirect"; without an agent "app — 2026-01-01 10:00". */
export function sessionTitle(opts: { agent?: string | undefined; firstPrompt?: string | undefined; dir: string; createdAt: string }): string {
  const folder = basename(opts.dir) || opts.dir;
  if (opts.agent) return `${opts.agent} — ${opts.firstPrompt ? oneLine(opts.firstPrompt, 60) : folder}`;
  return `${folder} — ${localTime(opts.createdAt)}`;
}

/** "Edited src/app.ts, README.md and 3 more" from a turn's summary. */
function touchedTitle(summary: TurnSummary | undefined): string {
  if (!summary || summary.total === 0) return 'No file changes';
  const names = summary.files.slice(0, 2).map((f) => f.display);
  const more = summary.total - names.length;
  if (more <= 0) return `Edited ${names.join(names.length === 2 ? ' and ' : ', ')}`;
  return `Edited ${names.join(', ')} and ${more} more`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function localTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The session's projection for clients: the chat channel's turn list and the
 * session state's title and `_meta` (turn figures, the user's own actions).
 * Recording decides what happened; this module decides how it reads.
 */
export class SessionTimeline {
  private meta: TimelineMeta = { turns: turnTable(), userActions: [] };
  /** The folder an imported session was recorded in, named by its title instead of the local one. */
  private recordedIn: string | undefined;

  constructor(
    private readonly channels: ChannelStore,
    readonly sessionUri: string,
    readonly chatUri: string,
    private readonly info: { dir: string; createdAt: () => string; explicitTitle: boolean; display: (absPath: string) => string },
  ) {}

  get sessionState(): SessionState {
    return this.channels.getState(this.sessionUri) as SessionState;
  }

  get chatState(): ChatState {
    return this.channels.getState(this.chatUri) as ChatState;
  }

  get current(): Readonly<TimelineMeta> {
    return this.meta;
  }

  /** Builds the figures of restored turns and actions, without publishing (channels are created with them). */
  restore(init: {
    workingDirectories: readonly string[];
    agent?: string | undefined;
    /** The folder an imported session was recorded in: its title names that one. */
    recordedIn?: string | undefined;
    turns: readonly TurnRecord[];
    userActions: readonly UserAction[];
    endedAt?: string | undefined;
  }): void {
    this.meta = { turns: turnTable(), userActions: [...init.userActions].slice(-MAX_USER_ACTIONS) };
    if (init.workingDirectories.length > 1) this.meta.workingDirectories = init.workingDirectories.map(fileUri);
    if (init.agent) this.meta.agent = init.agent;
    if (typeof init.recordedIn === 'string' && init.recordedIn !== '') this.recordedIn = init.recordedIn;
    const prompt = init.turns.find((t) => t.message && !t.automatic)?.message;
    if (prompt) this.meta.firstPrompt = oneLine(prompt, 200);
    if (init.endedAt) this.meta.endedAt = init.endedAt;
    for (const turn of init.turns) if (turn.after) this.meta.turns[turn.id] = statsOf(turn, this.info.display);
  }

  /** The `_meta` the session state carries. */
  sessionMeta(): JsonObject {
    // Dispatched state is frozen: the projection's containers are copied so it stays writable. Per-turn
    // stats are shared, not cloned (each is replaced, never changed): a deep copy in every envelope the
    // replay log keeps made memory grow with the square of the turn count.
    return { ...this.meta, turns: turnTable(this.meta.turns) } as unknown as JsonObject;
  }

  /** The title the session should have now. */
  title(current: string): string {
    if (this.info.explicitTitle) return current;
    return sessionTitle({
      agent: this.meta.agent,
      firstPrompt: this.meta.firstPrompt,
      dir: this.recordedIn ?? this.info.dir,
      createdAt: this.info.createdAt(),
    });
  }

  turnStarted(turn: TurnRecord): void {
    this.dispatchChat({
      type: 'chat/turnStarted',
      turnId: turn.id,
      startedAt: turn.startedAt,
      message: { text: turn.message ?? '', origin: { kind: 'user' } },
    });
    if (!this.meta.firstPrompt && turn.message && !turn.automatic) {
      this.meta.firstPrompt = oneLine(turn.message, 200);
      this.publishMeta();
    }
    this.syncChatSummary();
  }

  turnEnded(turn: TurnRecord): void {
    const summary = turn.summary;
    if (summary)
      this.dispatchChat({ type: 'chat/responsePart', turnId: turn.id, part: { kind: 'markdown', id: 'changes', content: summaryMarkdown(summary) } });
    const meta = summary ? { summary: summary as unknown as Record<string, unknown> } : undefined;
    const base = { turnId: turn.id, duration: turn.durationMs ?? 0, ...(meta ? { _meta: meta } : {}) };
    if (turn.state === 'error') {
      this.dispatchChat({ type: 'chat/error', ...base, error: { errorType: 'TurnError', message: turn.error ?? 'The turn ended with an error' } });
    } else if (turn.state === 'cancelled') {
      this.dispatchChat({ type: 'chat/turnCancelled', ...base });
    } else {
      this.dispatchChat({ type: 'chat/turnComplete', ...base });
    }
    const commits = this.meta.turns[turn.id]?.commits;
    this.meta.turns[turn.id] = statsOf(turn, this.info.display);
    if (commits) this.meta.turns[turn.id]!.commits = commits;
    this.publishMeta();
    this.syncChatSummary();
  }

  /** Turns after `turnId` (all when null) left the session. */
  truncated(turnId: string | null, dropped: readonly TurnRecord[]): void {
    if (dropped.length === 0) return;
    this.dispatchChat(turnId === null ? { type: 'chat/truncated' } : { type: 'chat/truncated', turnId });
    for (const t of dropped) delete this.meta.turns[t.id];
    this.publishMeta();
    this.syncChatSummary();
  }

  /** The commits each turn's lines landed in (turn id → commits, oldest first), replacing what the turns listed. */
  turnCommits(byTurn: ReadonlyMap<string, TurnCommit[]>): void {
    let changed = false;
    for (const [turnId, commits] of byTurn) {
      const stats = this.meta.turns[turnId];
      if (!stats || JSON.stringify(stats.commits ?? []) === JSON.stringify(commits)) continue;
      const next: TurnStats = { ...stats };
      if (commits.length > 0) next.commits = commits;
      else delete next.commits;
      this.meta.turns[turnId] = next;
      changed = true;
    }
    if (changed) this.publishMeta();
  }

  userAction(action: UserAction): void {
    this.meta.userActions = [...this.meta.userActions, action].slice(-MAX_USER_ACTIONS);
    this.publishMeta();
  }

  agent(name: string): void {
    if (this.meta.agent === name) return;
    this.meta.agent = name;
    this.publishMeta();
  }

  /** The turns of other sessions in the same folder that changed this turn's files while it ran (none: the field goes). */
  alsoChangedBy(turnId: string, others: readonly AlsoChangedBy[]): void {
    const stats = this.meta.turns[turnId];
    if (!stats || JSON.stringify(stats.alsoChangedBy ?? []) === JSON.stringify(others)) return;
    const next: TurnStats = { ...stats };
    if (others.length > 0) next.alsoChangedBy = [...others];
    else delete next.alsoChangedBy;
    // Replaced, never changed: published states share the per-turn figures.
    this.meta.turns[turnId] = next;
    this.publishMeta();
  }

  ended(endedAt: string | undefined): void {
    if (endedAt) this.meta.endedAt = endedAt;
    else delete this.meta.endedAt;
    this.dispatchSession({ type: 'session/isArchivedChanged', isArchived: endedAt !== undefined });
    this.publishMeta();
  }

  dispatchSession(action: StateAction): void {
    this.channels.dispatch(this.sessionUri, action);
  }

  dispatchChat(action: StateAction): void {
    this.channels.dispatch(this.chatUri, action);
  }

  private publishMeta(): void {
    if (!this.channels.hasChannel(this.sessionUri)) return;
    this.dispatchSession({ type: 'session/metaChanged', _meta: this.sessionMeta() });
    const state = this.sessionState;
    const title = this.title(state.title);
    if (title !== state.title) this.dispatchSession({ type: 'session/titleChanged', title });
  }

  private syncChatSummary(): void {
    this.dispatchSession({ type: 'session/chatUpdated', chat: this.chatUri, changes: chatSummaryOf(this.chatState) });
  }
}

/**
 * An object keyed by turn id, held by V8 as a hash table. As an ordinary
 * object every turn id added makes a new hidden class, and freezing each
 * published copy one more with its own list of every key: memory the engine
 * keeps for good, growing with the square of the turn count. Deleting a
 * property that is not the last one added turns an object into a hash table
 * for the rest of its life; it reads, iterates and serialises the same.
 */
function turnTable(from?: Record<string, TurnStats>): Record<string, TurnStats> {
  const table: Record<string, unknown> = { a: 0, b: 0 };
  delete table['a'];
  delete table['b'];
  return Object.assign(table as Record<string, TurnStats>, from);
}

function statsOf(turn: TurnRecord, display: (absPath: string) => string): TurnStats {
  const s = turn.summary;
  const stats: TurnStats = {
    files: s?.total ?? 0,
    added: s?.added ?? 0,
    deleted: s?.deleted ?? 0,
    paths: (s?.files ?? []).slice(0, LISTED_PATHS).map((f) => f.display),
    title: turn.automatic ? touchedTitle(s) : oneLine(turn.message ?? '', 120) || touchedTitle(s),
  };
  if (turn.automatic) stats.automatic = true;
  if (turn.editSpan) stats.editSpan = { ...turn.editSpan };
  // Steps and presented files ride here, where AHP's reducers keep them (`session/metaChanged`).
  if (turn.steps?.length) stats.steps = stepsMeta(turn, display);
  if (turn.presented?.length) stats.presentedFiles = presentedMeta(turn);
  return stats;
}

/** The timeline entry of a safety checkpoint. */
export function userActionOf(details: SafetyDetails, at: string, display: (p: SafetyDetails['paths'][number]) => string): UserAction {
  return {
    at,
    operation: details.operation,
    text: details.action ?? details.message ?? details.operation,
    files: details.paths.map(display),
    changeset: details.changeset,
  };
}
