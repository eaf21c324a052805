import { ChangesetServer, type ChangesetServerOptions } from './app.js';
import type { AutoTurns } from './auto-turns/index.js';
import { Changesets } from './changesets/changesets.js';
import { Comments } from './comments/comments.js';
import { CommitTrackers } from './provenance/commit-tracker.js';
import { harnessMethods } from './harness/methods.js';
import { presentedContent } from './harness/present-files.js';
import { ChangesetOperations } from './operations/operations.js';
import { lineProvenance, provenanceMethods } from './provenance/index.js';
import { isFileTool } from './provenance/attribute-change.js';
import { forgetLineProvenance } from './provenance/line-provenance.js';
import type { RecordingSession } from './session/recording-session.js';
import { findResumableSession } from './session/resume.js';
import { trackSharedFolders } from './session/shared-folder.js';
import { SessionManager, type SessionDefaults } from './session/session-manager.js';
import { sessionMethods } from './session/session-methods.js';
import { defaultStateDir } from './store/index.js';
import { DisposableStore } from './events.js';
import { mirrorSetting, MirrorSettingsError, startMirror } from './mirror/serve-mirror.js';
import type { MirrorRemote } from './mirror/mirror-remote.js';
import type { MirrorService } from './mirror/mirror-service.js';
import { createEndpointSecurity, endpointOfUrl, type EndpointSecurity, type EndpointSecurityOptions } from './security/index.js';
import { SessionCommands } from './connection/session-commands.js';

/** Options of {@link ChangesetService}. */
export interface ChangesetServiceOptions extends ChangesetServerOptions {
  /** Where stores and server data live; the user's state home by default. */
  stateDir?: string;
  /** Defaults for every recording session. */
  sessionDefaults?: SessionDefaults;
  /** Most files a changeset's state carries (default 5000); `ChangesetState._meta` totals cover the rest. */
  changesetMaxFiles?: number;
  /** Most bytes of files (their JSON) a changeset's state carries (default 800,000); `changesetFiles` lists the rest. */
  changesetMaxStateBytes?: number;
  /** Serve the content of presented files outside the working directories (`serve --serve-outside-files`); off by default. */
  serveOutsideFiles?: boolean;
  /**
   * The bearer token, origin checks and web viewer files (`serve`); their
   * hooks replace `checkUpgrade`, `selectProtocol` and `handleHttpRequest`.
   * Without it every upgrade is accepted and plain HTTP gets a placeholder.
   */
  security?: Omit<EndpointSecurityOptions, 'endpoint'>;
  /** Mirror every session's checkpoints to a git remote once started: `serve --mirror`'s value, else `$CHANGESET_SERVER_MIRROR` of `env`. */
  mirror?: { url: string | undefined; env: NodeJS.ProcessEnv };
  /** Record turns from file-system quiet periods in the session {@link ChangesetService.openWorkspace} opens (`serve --auto-turns`). */
  autoTurns?: { quietMs: number };
  /** Attach an authorship note (Git AI Standard 3.0.0, `refs/notes/ai`) to each new commit of the workspace repositories (`serve --notes`); off by default. */
  notes?: boolean;
}

/** A setting the service cannot run with (an unsafe security setting, a bad mirror remote): nothing was opened or started. */
export class ServiceSettingsError extends Error {}

/**
 * The whole product in one object: the AHP server, its recording sessions,
 * the harness methods, changesets and operations, wired together.
 */
export class ChangesetService {
  readonly server: ChangesetServer;
  readonly sessions: SessionManager;
  readonly changesets: Changesets;
  readonly operations: ChangesetOperations;
  /** Review comments of every session. */
  readonly comments: Comments;
  /** The commits of the workspace repositories, linked to the turns whose lines landed in them. */
  readonly commits: CommitTrackers;
  readonly stateDir: string;
  /** The token, origin checks and viewer files, when the service was given {@link ChangesetServiceOptions.security}. */
  readonly security: EndpointSecurity | undefined;
  /** What this service connected, let go of at {@link stop}. */
  private readonly wiring = new DisposableStore();
  private readonly log: (line: string) => void;
  private readonly mirrorRemote: MirrorRemote | undefined;
  private mirror: MirrorService | undefined;
  private readonly autoTurns: AutoTurns[] = [];

  /** Throws {@link ServiceSettingsError}, before anything is opened, for settings it cannot run with. */
  constructor(private readonly options: ChangesetServiceOptions = {}) {
    this.stateDir = options.stateDir ?? defaultStateDir();
    const security = options.security;
    this.security = security && setting(() => createEndpointSecurity({ ...security, endpoint: () => endpointOfUrl(this.server?.url) }), Error);
    const mirror = options.mirror;
    this.mirrorRemote = mirror && setting(() => mirrorSetting(mirror.url, mirror.env), MirrorSettingsError);
    const hooks = this.security;
    this.server = new ChangesetServer({
      ...options,
      stateDir: this.stateDir,
      ...(hooks ? { checkUpgrade: hooks.checkUpgrade, selectProtocol: hooks.selectProtocol, handleHttpRequest: hooks.handleHttpRequest } : {}),
    });
    const log = options.log ?? ((line: string) => process.stderr.write(`changeset-server: ${line}\n`));
    this.log = log;
    this.sessions = new SessionManager(this.server.store, {
      stateDir: this.stateDir,
      log,
      ...(options.sessionDefaults ? { defaults: options.sessionDefaults } : {}),
    });
    this.server.setSessionProvider(new SessionCommands(this.sessions));
    this.changesets = new Changesets(this.server.store, this.sessions, {
      stateDir: this.stateDir,
      ...(options.changesetMaxFiles !== undefined ? { maxFiles: options.changesetMaxFiles } : {}),
      ...(options.changesetMaxStateBytes !== undefined ? { maxStateBytes: options.changesetMaxStateBytes } : {}),
    });
    this.operations = new ChangesetOperations(this.sessions, this.changesets);
    this.comments = new Comments(this.sessions, this.changesets);
    this.commits = new CommitTrackers({
      provenance: (params) => lineProvenance(this.sessions, params),
      notes: options.notes === true,
      ignore: [this.stateDir],
      log,
    });
    // A provider, not an event: the changesets ask which operations each of them offers, and their status.
    this.changesets.setOperations((session, parsed) => this.operations.offeredOn(session, parsed));
    // Each session added is followed by its changesets, then told whether undo is possible (which reads them).
    this.wiring.add(
      this.sessions.onSessionAdded((session) => {
        this.changesets.attach(session);
        this.comments.attach(session);
        this.commits.attach(session);
        void this.operations.refreshUndo(session);
      }),
    );
    // Two sessions recording one folder at once: each turn says which turns of the other changed its files meanwhile.
    this.wiring.add(trackSharedFolders(this.sessions, { writesOnlyNamed: isFileTool, changed: (sessions) => sessions.forEach(forgetLineProvenance) }));
    // Every method served besides AHP's core ones, registered here and only here (the map is protocol/methods.ts).
    this.server.register(this.changesets.methods());
    this.server.register(this.operations.methods());
    this.server.register(harnessMethods(this.sessions, (uri, turnId) => this.changesets.afterTurnEnded(uri, turnId)));
    this.server.register(sessionMethods(this.sessions));
    this.server.register(this.comments.methods());
    this.server.register(provenanceMethods(this.sessions));
    this.server.registerContentProviders(this.changesets.contentProviders());
    this.server.registerContentProviders(presentedContent(this.sessions, { serveOutsideFiles: options.serveOutsideFiles === true }));
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
  async openWorkspace(
    workingDirectories: readonly string[],
    opts: { resume?: boolean; title?: string; startInBackground?: boolean } = {},
  ): Promise<RecordingSession> {
    const auto = this.options.autoTurns;
    // Loaded only when asked for: a server without automatic turns never pays for their modules.
    const autoTurns = auto && (await import('./auto-turns/index.js'));
    const id = opts.resume === false ? undefined : await findResumableSession(this.stateDir, workingDirectories);
    const session = await this.sessions.create({
      workingDirectories,
      ...(id !== undefined ? { id } : {}),
      ...(opts.title !== undefined ? { title: opts.title } : {}),
      // `serve` answers at once: a new session's first snapshot runs in the background and what needs it waits.
      ...(opts.startInBackground ? { startInBackground: true } : {}),
    });
    if (auto && autoTurns)
      this.autoTurns.push(autoTurns.startAutoTurns(this.sessions, session, { quietMs: auto.quietMs, ignoreDirs: [this.stateDir], log: this.log }));
    return session;
  }

  /** Starts listening, then mirroring when asked to; resolves with the WebSocket URL. */
  async start(): Promise<{ url: string }> {
    const started = await this.server.start();
    if (this.mirrorRemote) {
      this.mirror = await startMirror(this, this.mirrorRemote, this.log);
      this.server.register(this.mirror.methods());
    }
    return started;
  }

  /**
   * Stops in order: automatic turns; then active turns are recorded as
   * cancelled and recording stops (sessions stay resumable, their
   * changesets are not cleared); every client is closed with 1001 and the
   * server stops listening; the mirror pushes what the sessions stored last
   * (within `mirrorGraceMs`, its default when not given); and what the
   * service connected is let go of.
   */
  async stop(opts: { mirrorGraceMs?: number } = {}): Promise<void> {
    for (const auto of this.autoTurns.splice(0)) auto.stop();
    this.changesets.beginShutdown();
    // What still writes to the stores finishes before they close: live changesets' refreshes (a snapshot each) and
    // operations' last steps (their record, the session's totals).
    await this.changesets.stopWatching();
    await this.operations.settled();
    await this.comments.settled();
    await this.commits.close();
    await this.sessions.closeAll();
    await this.changesets.close();
    await this.server.stop();
    // After the sessions closed: the turns they stored as cancelled go out too.
    await this.mirror?.stop(opts.mirrorGraceMs);
    this.mirror = undefined;
    this.wiring.dispose();
  }
}

/** Reads one setting; what it throws as `kind` (a bad value) becomes a {@link ServiceSettingsError} with the same message. */
function setting<T>(read: () => T, kind: abstract new (...args: never[]) => Error): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof kind) throw new ServiceSettingsError(error.message, { cause: error });
    throw error;
  }
}
