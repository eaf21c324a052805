import { ChangesetServer, type ChangesetServerOptions } from './app.js';
import { Changesets } from './changesets/changesets.js';
import { registerHarnessMethods } from './harness/methods.js';
import { ChangesetOperations } from './operations/operations.js';
import type { RecordingSession } from './session/recording-session.js';
import { findResumableSession } from './session/resume.js';
import { SessionManager, type SessionDefaults } from './session/session-manager.js';
import { registerSessionMethods } from './session/session-methods.js';
import { defaultStateDir } from './store/index.js';
import { DisposableStore } from './events.js';
import { SessionCommands } from './connection/session-commands.js';

/** Options of {@link ChangesetService}. */
export interface ChangesetServiceOptions extends ChangesetServerOptions {
  /** Where stores and server data live; the user's state home by default. */
  stateDir?: string;
  /** Defaults for every recording session. */
  sessionDefaults?: SessionDefaults;
  /** Most files a changeset's state carries (default 5000); `ChangesetState._meta` totals cover the rest. */
  changesetMaxFiles?: number;
  /** Serve the content of presented files outside the working directories (`serve --serve-outside-files`); off by default. */
  serveOutsideFiles?: boolean;
}

/**
 * The whole product in one object: the AHP server, its recording sessions,
 * the harness methods, changesets and operations, wired together.
 */
export class ChangesetService {
  readonly server: ChangesetServer;
  readonly sessions: SessionManager;
  readonly changesets: Changesets;
  readonly operations: ChangesetOperations;
  readonly stateDir: string;
  /** What this service connected, let go of at {@link stop}. */
  private readonly wiring = new DisposableStore();

  constructor(options: ChangesetServiceOptions = {}) {
    this.stateDir = options.stateDir ?? defaultStateDir();
    this.server = new ChangesetServer({ ...options, stateDir: this.stateDir });
    const log = options.log ?? ((line: string) => process.stderr.write(`changeset-server: ${line}\n`));
    this.sessions = new SessionManager(this.server, {
      stateDir: this.stateDir,
      log,
      ...(options.sessionDefaults ? { defaults: options.sessionDefaults } : {}),
    });
    this.server.setSessionProvider(new SessionCommands(this.sessions));
    this.changesets = new Changesets(this.server, this.sessions, {
      stateDir: this.stateDir,
      ...(options.changesetMaxFiles !== undefined ? { maxFiles: options.changesetMaxFiles } : {}),
    });
    this.operations = new ChangesetOperations(this.server, this.sessions, this.changesets);
    // Each session added is followed by its changesets, then told whether undo is possible (which reads them).
    this.wiring.add(
      this.sessions.onSessionAdded((session) => {
        this.changesets.attach(session);
        void this.operations.refreshUndo(session);
      }),
    );
    registerHarnessMethods(this.server, this.sessions, () => (uri, turnId) => this.changesets.afterTurnEnded(uri, turnId), {
      serveOutsideFiles: options.serveOutsideFiles === true,
    });
    registerSessionMethods(this.server, this.sessions);
  }

  /**
   * Opens every session recorded over these directories that is not open
   * yet: ended ones for review, the others resumed (past and paused
   * sessions stay listed across restarts). Call after {@link openWorkspace}.
   */
  async openHistory(workingDirectories: readonly string[]): Promise<RecordingSession[]> {
    return this.sessions.openStored(workingDirectories);
  }

  /**
   * Records a session over working directories. Unless `resume` is false,
   * the latest unended session over exactly these directories is picked up
   * again with its turns (what a restart of `serve` does).
   */
  async openWorkspace(workingDirectories: readonly string[], opts: { resume?: boolean; title?: string } = {}): Promise<RecordingSession> {
    const id = opts.resume === false ? undefined : await findResumableSession(this.stateDir, workingDirectories);
    return this.sessions.create({
      workingDirectories,
      ...(id !== undefined ? { id } : {}),
      ...(opts.title !== undefined ? { title: opts.title } : {}),
    });
  }

  /** Starts listening; resolves with the WebSocket URL. */
  async start(): Promise<{ url: string }> {
    return this.server.start();
  }

  /**
   * Records active turns as cancelled and stops recording (sessions stay
   * resumable, their changesets are not cleared), then closes every client
   * with 1001 and stops listening.
   */
  async stop(): Promise<void> {
    this.changesets.beginShutdown();
    // What still writes to the stores finishes before they close: live changesets' refreshes (a snapshot each) and
    // operations' last steps (their record, the session's totals).
    await this.changesets.stopWatching();
    await this.operations.settled();
    await this.sessions.closeAll();
    await this.changesets.close();
    await this.server.stop();
  }
}
