import { realpath, stat } from 'node:fs/promises';
import { AhpErrorCodes, ROOT_CHANNEL, SessionStatus, type SessionIsArchivedChangedAction, type SessionSummary } from '../../protocol/index.js';
import type { ChannelStore } from '../channels/channel-store.js';
import { DomainError } from '../domain-error.js';
import { Emitter, type Event } from '../events.js';
import { ArchiveFlags } from './archive-flags.js';
import { RecordingSession, type RecordingSessionOptions } from './recording-session.js';
import { SESSION_START_REASON, type SessionStartDetails } from './session-journal.js';
import { sessionSummaryOf } from './session-state.js';
import { WorkspaceRoot } from './workspace-root.js';

/** Session defaults applied to every session the manager creates. */
export type SessionDefaults = Omit<
  RecordingSessionOptions,
  'id' | 'workingDirectories' | 'stateDir' | 'channels' | 'title' | 'agent' | 'ended' | 'onStartProgress' | 'startInBackground'
>;

/** Options of {@link SessionManager}. */
export interface SessionManagerOptions {
  /** State directory holding the stores. */
  stateDir: string;
  /** Defaults for every session. */
  defaults?: SessionDefaults;
  /** Receives warnings from sessions (snapshot problems, abandoned turns). */
  log?: (line: string) => void;
}

/** What creating a session takes. */
export interface CreateSessionOptions {
  /** Session id; a ULID when omitted. */
  id?: string;
  /** Working directories (paths); the first is the session default. */
  workingDirectories: readonly string[];
  /** Title; the agent and first prompt, or the first directory and start time, by default. */
  title?: string;
  /** The agent recording into it ("Claude Code"). */
  agent?: string;
  /** What to do when the stores hold this id as ended (see {@link RecordingSessionOptions.ended}). */
  ended?: RecordingSessionOptions['ended'];
  /** Called with the progress of the session's first snapshot (files done, total when known). */
  onStartProgress?: RecordingSessionOptions['onStartProgress'];
  /** Record a new session's first snapshot in the background (see {@link RecordingSessionOptions.startInBackground}). */
  startInBackground?: boolean;
}

/**
 * The live recording sessions of a server: creation and disposal (also over
 * AHP's `createSession` / `disposeSession`), `listSessions`, and the root
 * catalogue notifications.
 */
export class SessionManager {
  private readonly sessions = new Map<string, RecordingSession>();
  private readonly modifiedAt = new Map<string, string>();
  /** The last `SessionSummary.changes` published per session (the changeset module's totals). */
  private readonly changes = new Map<string, SessionSummary['changes']>();
  private readonly added = new Emitter<RecordingSession>();
  private readonly turnRequests = new Emitter<RecordingSession>();
  /** Each session's archived flag, kept across restarts. */
  private readonly archived: ArchiveFlags;

  /** A session was created or opened (every one from now on). */
  readonly onSessionAdded: Event<RecordingSession> = this.added.event;
  /**
   * A client asked for a turn on this session (`harness/turnStarted`), told
   * synchronously before the turn is queued, so a listener can queue work
   * ahead of it: automatic turns hand over here.
   */
  readonly onTurnRequested: Event<RecordingSession> = this.turnRequests.event;

  constructor(
    private readonly store: ChannelStore,
    private readonly opts: SessionManagerOptions,
  ) {
    this.archived = new ArchiveFlags(opts.stateDir);
    // The archived flag a session's state takes — set by a client (AHP's `session/isArchivedChanged`), or
    // by the server as the session ends or resumes — is what it has after a restart.
    store.onEnvelope((envelope, kind) => {
      if (kind !== 'session' || envelope.action.type !== 'session/isArchivedChanged') return;
      const session = this.sessions.get(envelope.channel);
      if (!session) return;
      void this.archived.set(session.id, (envelope.action as SessionIsArchivedChangedAction).isArchived);
      if (envelope.origin) this.touch(session);
    });
  }

  /** Sessions in creation order: recording ones and ended ones kept for review. */
  list(): RecordingSession[] {
    return [...this.sessions.values()];
  }

  /** The live session with this URI, or undefined. */
  get(uri: string): RecordingSession | undefined {
    return this.sessions.get(uri);
  }

  /** The live session with this URI, or a -32001 SessionNotFound error. */
  require(uri: unknown): RecordingSession {
    const session = typeof uri === 'string' ? this.sessions.get(uri) : undefined;
    if (!session) throw new DomainError(AhpErrorCodes.SessionNotFound, `no session ${JSON.stringify(uri)}`);
    return session;
  }

  /** Tells {@link onTurnRequested} listeners that a client asked for a turn on `session`. */
  turnRequested(session: RecordingSession): void {
    this.turnRequests.fire(session);
  }

  /** Creates a recording session and announces it on the root channel. */
  async create(options: CreateSessionOptions): Promise<RecordingSession> {
    const dirs: string[] = [];
    for (const dir of options.workingDirectories) dirs.push(await realDirectory(dir));
    const session = await RecordingSession.create({
      ...this.opts.defaults,
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.title !== undefined ? { title: options.title } : {}),
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
      ...(options.ended !== undefined ? { ended: options.ended } : {}),
      ...(options.onStartProgress !== undefined ? { onStartProgress: options.onStartProgress } : {}),
      ...(options.startInBackground ? { startInBackground: true } : {}),
      workingDirectories: dirs,
      stateDir: this.opts.stateDir,
      channels: this.store,
    });
    this.sessions.set(session.uri, session);
    this.modifiedAt.set(session.uri, session.createdAt);
    const archived = this.archived.get(session.id);
    if (archived !== undefined && archived !== ((session.sessionState.status & SessionStatus.IsArchived) !== 0)) {
      session.dispatchSession({ type: 'session/isArchivedChanged', isArchived: archived });
    }
    session.onWarning((line) => this.opts.log?.(`${session.uri}: ${line}`));
    session.onTurnEnded(() => this.touch(session));
    session.onEnded(() => this.touch(session));
    session.onRetentionDropped((ids) => void this.removeReclaimed(ids));
    this.store.notify(ROOT_CHANNEL, 'root/sessionAdded', { channel: ROOT_CHANNEL, summary: this.summaryOf(session) });
    this.added.fire(session);
    return session;
  }

  /**
   * Ends a session (`harness/sessionEnded`, the hook's `SessionEnd`): recording
   * stops, the session is flagged `IsArchived` and stays listed, reviewable
   * and revertable until retention or {@link forget} removes it.
   */
  async dispose(uri: string): Promise<void> {
    await this.require(uri).end();
  }

  /** Removes a session and its history from the stores for good, and announces its removal. */
  async forget(uri: string): Promise<void> {
    const session = this.require(uri);
    if (!session.isEnded) await session.end();
    this.sessions.delete(uri);
    this.modifiedAt.delete(uri);
    this.changes.delete(uri);
    await session.close();
    for (const dir of session.files.dirs) {
      const root2 = await WorkspaceRoot.acquire({ stateDir: this.opts.stateDir, dir });
      try {
        await root2.store.forgetSession(session.id);
      } finally {
        await root2.release();
      }
    }
    await this.archived.remove(session.id);
    this.store.notify(ROOT_CHANNEL, 'root/sessionRemoved', { channel: ROOT_CHANNEL, session: uri });
  }

  /** Ended sessions retention reclaimed leave the list: their history is gone. */
  private async removeReclaimed(sessionIds: readonly string[]): Promise<void> {
    for (const id of sessionIds) {
      const uri = `ahp-session:/${id}`;
      const session = this.sessions.get(uri);
      if (!session?.isEnded) continue;
      this.sessions.delete(uri);
      this.modifiedAt.delete(uri);
      this.changes.delete(uri);
      await session.close();
      await this.archived.remove(session.id);
      this.store.notify(ROOT_CHANNEL, 'root/sessionRemoved', { channel: ROOT_CHANNEL, session: uri });
    }
  }

  /**
   * Opens the sessions the stores of these directories hold: ended ones for
   * review (what a restart shows as past sessions), the others resumed, so
   * a server that stopped (idle, or asked to) shows everything it recorded.
   * Sessions whose directories are gone, and those already open, are skipped.
   */
  async openStored(directories: readonly string[]): Promise<RecordingSession[]> {
    const opened: RecordingSession[] = [];
    for (const dir of directories) {
      const root = await WorkspaceRoot.acquire({ stateDir: this.opts.stateDir, dir: await realDirectory(dir) });
      let candidates: { id: string; dirs: string[]; endedAt: string; live: boolean }[] = [];
      try {
        for (const stored of await root.store.listSessions()) {
          if (this.sessions.has(`ahp-session:/${stored.sessionId}`)) continue;
          const start = (await root.store.listSessionCheckpoints(stored.sessionId)).find((c) => c.kind === 'safety' && c.reason === SESSION_START_REASON);
          const details = start?.details as SessionStartDetails | undefined;
          if (details?.workingDirectories?.length) {
            candidates.push({
              id: stored.sessionId,
              dirs: details.workingDirectories,
              endedAt: stored.endedAt ?? stored.lastCheckpointAt ?? '',
              live: stored.live,
            });
          }
        }
      } finally {
        await root.release();
      }
      candidates = candidates.sort((a, b) => a.endedAt.localeCompare(b.endedAt));
      for (const c of candidates) {
        if (this.sessions.has(`ahp-session:/${c.id}`)) continue;
        try {
          opened.push(await this.create({ id: c.id, workingDirectories: c.dirs, ...(c.live ? {} : { ended: 'archived' as const }) }));
        } catch (error) {
          this.opts.log?.(`cannot open stored session ${c.id}: ${(error as Error).message}`);
        }
      }
    }
    return opened;
  }

  /**
   * Stops recording every session without ending them (server shutdown):
   * active turns are stored as cancelled and the sessions resume with their
   * turns when opened again.
   */
  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    this.changes.clear();
    await Promise.allSettled(all.map((s) => s.close()));
    await this.archived.flushed();
  }

  /** Sends a summary change (e.g. new `changes` counts) to root subscribers. */
  publishSummaryChange(session: RecordingSession, changes: Partial<SessionSummary>): void {
    const modifiedAt = new Date().toISOString();
    this.modifiedAt.set(session.uri, modifiedAt);
    if (changes.changes !== undefined && this.sessions.has(session.uri)) this.changes.set(session.uri, changes.changes);
    this.store.notify(ROOT_CHANNEL, 'root/sessionSummaryChanged', {
      channel: ROOT_CHANNEL,
      session: session.uri,
      changes: { ...changes, modifiedAt },
    });
  }

  summaryOf(session: RecordingSession): SessionSummary {
    const summary = sessionSummaryOf(session.uri, session.sessionState, session.createdAt, this.modifiedAt.get(session.uri) ?? session.createdAt);
    // The root catalogue carries what a session list shows, not every turn's figures.
    const meta = session.meta;
    summary._meta = {
      ...(meta.workingDirectories ? { workingDirectories: meta.workingDirectories } : {}),
      ...(meta.agent ? { agent: meta.agent } : {}),
      ...(meta.firstPrompt ? { firstPrompt: meta.firstPrompt } : {}),
      ...(meta.endedAt ? { endedAt: meta.endedAt } : {}),
      turnCount: session.turns.length,
    };
    const changes = this.changes.get(session.uri);
    if (changes) summary.changes = changes;
    return summary;
  }

  /** An ended session its agent resumes: it records again. */
  reopen(session: RecordingSession): void {
    session.reopen();
    this.touch(session);
  }

  private touch(session: RecordingSession): void {
    if (!this.sessions.has(session.uri)) return;
    const changes = this.changes.get(session.uri);
    // What a session list shows moves with it: the title, the turn count, the first prompt, when it ended.
    const { title, _meta } = this.summaryOf(session);
    this.publishSummaryChange(session, { status: session.sessionState.status, title, ...(_meta ? { _meta } : {}), ...(changes ? { changes } : {}) });
  }
}

async function realDirectory(dir: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch {
    throw new Error(`${dir} does not exist`);
  }
  if (!(await stat(real)).isDirectory()) throw new Error(`${dir} is not a directory`);
  return real;
}
