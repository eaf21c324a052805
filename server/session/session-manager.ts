import { realpath, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  AhpErrorCodes,
  parseChannel,
  ROOT_CHANNEL,
  type CreateSessionParams,
  type DisposeSessionParams,
  type ListSessionsParams,
  type ListSessionsResult,
  type SessionSummary,
} from '../../protocol/index.js';
import type { ChangesetServer } from '../app.js';
import { invalidParams, RpcError } from '../connection/errors.js';
import type { SessionProvider } from '../connection/providers.js';
import { RecordingSession, type RecordingSessionOptions } from './recording-session.js';
import { sessionSummaryOf } from './session-state.js';

/** Session defaults applied to every session the manager creates. */
export type SessionDefaults = Omit<RecordingSessionOptions, 'id' | 'workingDirectories' | 'stateDir' | 'channels' | 'title'>;

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
  /** Title; the first directory's name by default. */
  title?: string;
}

type SessionListener = (session: RecordingSession) => void;

/**
 * The live recording sessions of a server: creation and disposal (also over
 * AHP's `createSession` / `disposeSession`), `listSessions`, and the root
 * catalogue notifications.
 */
export class SessionManager implements SessionProvider {
  private readonly sessions = new Map<string, RecordingSession>();
  private readonly creating = new Set<string>();
  private readonly modifiedAt = new Map<string, string>();
  private readonly addedListeners = new Set<SessionListener>();

  constructor(
    private readonly server: ChangesetServer,
    private readonly opts: SessionManagerOptions,
  ) {}

  /** Live sessions in creation order. */
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
    if (!session) throw new RpcError(AhpErrorCodes.SessionNotFound, `no session ${JSON.stringify(uri)}`);
    return session;
  }

  /** Calls `listener` for every session created from now on. */
  onSessionAdded(listener: SessionListener): () => void {
    this.addedListeners.add(listener);
    return () => this.addedListeners.delete(listener);
  }

  /** Creates a recording session and announces it on the root channel. */
  async create(options: CreateSessionOptions): Promise<RecordingSession> {
    const dirs: string[] = [];
    for (const dir of options.workingDirectories) dirs.push(await realDirectory(dir));
    const session = await RecordingSession.create({
      ...this.opts.defaults,
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.title !== undefined ? { title: options.title } : {}),
      workingDirectories: dirs,
      stateDir: this.opts.stateDir,
      channels: this.server.store,
    });
    this.sessions.set(session.uri, session);
    this.modifiedAt.set(session.uri, session.createdAt);
    session.on('warning', (line) => this.opts.log?.(`${session.uri}: ${line}`));
    session.on('turnEnded', () => this.touch(session));
    this.server.notifyRoot('root/sessionAdded', { channel: ROOT_CHANNEL, summary: this.summaryOf(session) });
    for (const listener of this.addedListeners) listener(session);
    return session;
  }

  /** Disposes a session and announces its removal. */
  async dispose(uri: string): Promise<void> {
    const session = this.require(uri);
    this.sessions.delete(uri);
    this.modifiedAt.delete(uri);
    await session.dispose();
    this.server.notifyRoot('root/sessionRemoved', { channel: ROOT_CHANNEL, session: uri });
  }

  /**
   * Stops recording every session without ending them (server shutdown):
   * active turns are stored as cancelled and the sessions resume with their
   * turns when opened again.
   */
  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.close()));
  }

  /** Sends a summary change (e.g. new `changes` counts) to root subscribers. */
  publishSummaryChange(session: RecordingSession, changes: Partial<SessionSummary>): void {
    const modifiedAt = new Date().toISOString();
    this.modifiedAt.set(session.uri, modifiedAt);
    this.server.notifyRoot('root/sessionSummaryChanged', {
      channel: ROOT_CHANNEL,
      session: session.uri,
      changes: { ...changes, modifiedAt },
    });
  }

  summaryOf(session: RecordingSession): SessionSummary {
    const summary = sessionSummaryOf(session.uri, session.sessionState, session.createdAt, this.modifiedAt.get(session.uri) ?? session.createdAt);
    const changes = this.changesOf?.(session);
    if (changes) summary.changes = changes;
    return summary;
  }

  /** Supplies `SessionSummary.changes` (installed by the changeset module). */
  changesOf: ((session: RecordingSession) => SessionSummary['changes'] | undefined) | undefined;

  // --- SessionProvider: the AHP commands ---

  listSessions(params: ListSessionsParams): ListSessionsResult {
    const all = this.list();
    let start = 0;
    if (params.cursor !== undefined) {
      start = Number(params.cursor);
      if (!/^\d+$/.test(params.cursor) || start > all.length) throw invalidParams(`cursor: unknown cursor "${params.cursor}"`);
    }
    const limit = params.limit ?? 100;
    const page = all.slice(start, start + limit);
    const result: ListSessionsResult = { items: page.map((s) => this.summaryOf(s)) };
    if (start + limit < all.length) result.nextCursor = String(start + limit);
    return result;
  }

  async createSession(params: CreateSessionParams): Promise<null> {
    const parsed = parseChannel(params.channel);
    if (parsed?.kind !== 'session') throw invalidParams('channel: must be an ahp-session:/<id> URI');
    if (this.sessions.has(params.channel) || this.creating.has(params.channel)) {
      throw new RpcError(AhpErrorCodes.SessionAlreadyExists, `session ${params.channel} already exists`);
    }
    const dirs = workingDirectoriesOf(params);
    this.creating.add(params.channel);
    try {
      await this.create({ id: parsed.id, workingDirectories: dirs });
    } catch (error) {
      if (error instanceof RpcError) throw error;
      throw invalidParams(`workingDirectory: ${(error as Error).message}`);
    } finally {
      this.creating.delete(params.channel);
    }
    return null;
  }

  async disposeSession(params: DisposeSessionParams): Promise<null> {
    await this.dispose(params.channel);
    return null;
  }

  private touch(session: RecordingSession): void {
    if (!this.sessions.has(session.uri)) return;
    const changes = this.changesOf?.(session);
    this.publishSummaryChange(session, { status: session.sessionState.status, ...(changes ? { changes } : {}) });
  }
}

/** The working directories a `createSession` names: `config.workingDirectories`, else `workingDirectory`. */
function workingDirectoriesOf(params: CreateSessionParams): string[] {
  const fromConfig = params.config?.['workingDirectories'];
  if (fromConfig !== undefined) {
    if (!Array.isArray(fromConfig) || fromConfig.length === 0 || !fromConfig.every((d) => typeof d === 'string' && d.length > 0)) {
      throw invalidParams('config.workingDirectories: must be a non-empty array of file: URIs or absolute paths');
    }
    return fromConfig.map((d: string, i: number) => toPath(d, `config.workingDirectories[${i}]`));
  }
  if (params.workingDirectory === undefined) throw invalidParams('workingDirectory: required (a file: URI)');
  return [toPath(params.workingDirectory, 'workingDirectory')];
}

function toPath(value: string, field: string): string {
  if (value.startsWith('file:')) {
    try {
      return fileURLToPath(value);
    } catch {
      throw invalidParams(`${field}: not a valid file: URI`);
    }
  }
  if (value.startsWith('/')) return value;
  throw invalidParams(`${field}: must be a file: URI or an absolute path`);
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
