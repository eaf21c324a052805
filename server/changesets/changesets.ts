import { isUtf8 } from 'node:buffer';
import {
  AhpErrorCodes,
  JsonRpcErrorCodes,
  isChangesetUriError,
  parseChangesetUri,
  sessionUri,
  type ChangesetFileDiffParams,
  type ChangesetFilesReviewChangedAction,
  type ResourceReadParams,
  type ResourceReadResult,
} from '../../protocol/index.js';
import { channel as channelCheck } from '../../protocol/validate/checks.js';
import type { ChannelStore } from '../channels/channel-store.js';
import type { ChannelResolveError } from '../channels/index.js';
import { diffChange } from '../changes/file-stats.js';
import { invalidParams, notFound, DomainError } from '../domain-error.js';
import type { ContentProviders, MethodTable } from '../method-table.js';
import { isBinary, type WorkspaceFileDiff } from '../diff/file-diff.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SessionManager } from '../session/session-manager.js';
import { catalogueFor } from './catalogue.js';
import { ChangesetUnavailable, isLive, missingStepMessage } from './changeset-sides.js';
import { stepOf } from '../session/step-recorder.js';
import { CONTENT_SCHEME, parseContentUri } from './content-uri.js';
import { LiveWatcher } from './live-watcher.js';
import { SessionChangesets, type ChangesetChannel, type OperationsFor } from './session-changesets.js';
import { markRevertedHunks } from './reverted-hunks.js';
import { checkFilesParams, filePage } from './file-pages.js';
import { checkFileHistoryParams, fileHistory } from './file-history.js';
import { metaOf } from './changeset-files.js';
import type { FileChange, GitMode } from '../changes/file-change.js';

/** Options of {@link Changesets}. */
export interface ChangesetsOptions {
  stateDir: string;
  /** Most files carried in a changeset's state (default 5000); totals in `_meta` cover the rest, `changesetFiles` lists them. */
  maxFiles?: number;
  /** Most bytes of files (their JSON) carried in a changeset's state (default 800,000), so that no frame passes 1 MiB. */
  maxStateBytes?: number;
  /** Quiet time before live changesets follow working-tree edits (default 300 ms). */
  watchDebounceMs?: number;
}

/**
 * The changesets of every live session: the `ahp-changeset:` channel
 * resolver, live updates after turns and working-tree edits, persisted
 * review, `resourceRead` of file contents and the `changesetFileDiff`
 * command.
 */
export class Changesets {
  private readonly perSession = new Map<string, SessionChangesets>();
  private readonly watchers = new Map<string, LiveWatcher>();
  private readonly turnWork = new Map<string, Promise<void>>();
  private operationsFor: OperationsFor = () => [];
  private shuttingDown = false;
  /** Changesets of disposed sessions whose review writes may still be in flight. */
  private readonly detached = new Set<SessionChangesets>();

  constructor(
    private readonly store: ChannelStore,
    private readonly sessions: SessionManager,
    private readonly opts: ChangesetsOptions,
  ) {
    store.registerResolver('ahp-changeset:', (uri) => this.resolve(uri));
    store.onEnvelope((envelope, kind) => {
      if (kind !== 'changeset' || !envelope.origin || envelope.action.type !== 'changeset/filesReviewChanged') return;
      const action = envelope.action as ChangesetFilesReviewChangedAction;
      this.ownerOf(envelope.channel)?.persistReview(envelope.channel, action.files, action.reviewed);
    });
  }

  /** `changesetFileDiff`, `changesetFiles` and `fileHistory`. */
  methods(): MethodTable {
    return {
      changesetFileDiff: { request: (params) => this.fileDiff(params), check: checkFileDiffParams },
      changesetFiles: { request: async (params) => filePage((await this.channel(params.channel)).channel, params), check: checkFilesParams },
      fileHistory: { request: (params) => fileHistory(this.sessions, params), check: checkFileHistoryParams },
    };
  }

  /** `resourceRead` of the content URIs a changeset's files point at. */
  contentProviders(): ContentProviders {
    return { [CONTENT_SCHEME]: { read: (params) => this.read(params) } };
  }

  /** Installs the operations each changeset advertises. */
  setOperations(operationsFor: OperationsFor): void {
    this.operationsFor = operationsFor;
    for (const sc of this.perSession.values()) sc.refreshOperations();
  }

  /**
   * Sessions closed from now on close for a server shutdown: they resume
   * after the restart, so their changesets stay as clients have them (AHP
   * keeps `changeset/cleared` for recomputes and ended sessions).
   */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /** Stops following the working tree; resolves once refreshes already running have finished (they write to the store). */
  async stopWatching(): Promise<void> {
    const closing = [...this.watchers.values()].map((watcher) => watcher.close());
    this.watchers.clear();
    await Promise.allSettled(closing);
  }

  /** Stops watching and waits for pending computations and review writes. */
  async close(): Promise<void> {
    await this.stopWatching();
    await Promise.allSettled([...this.turnWork.values()]);
    await Promise.allSettled([...this.perSession.values(), ...this.detached].map((sc) => sc.reviews.flushed()));
  }

  /** The changesets of a session. */
  of(session: RecordingSession): SessionChangesets | undefined {
    return this.perSession.get(session.uri);
  }

  /** Resolves once changesets reflect the end of this turn (what `harness/turnEnded` waits for). */
  async afterTurnEnded(sessionUri: string, turnId: string): Promise<void> {
    await this.turnWork.get(`${sessionUri} ${turnId}`);
  }

  /** The current state of a changeset channel, if it exists. */
  stateOf(uri: string): unknown {
    return this.store.getState(uri);
  }

  /** The channel for a changeset URI, computed (for commands that need its files). */
  async channel(uri: string): Promise<{ owner: SessionChangesets; channel: ChangesetChannel }> {
    const error = await this.store.ensureChannel(uri);
    if (error) throw new DomainError(error.code, error.message);
    const owner = this.ownerOf(uri);
    const channel = owner?.channels.get(uri);
    if (!owner || !channel) throw notFound(`no changeset ${uri}`);
    await channel.ready;
    return { owner, channel };
  }

  /** Follows a session's turns with its changesets (every session the manager adds; `service.ts` connects them). */
  attach(session: RecordingSession): void {
    const sc = new SessionChangesets(session, this.store, {
      stateDir: this.opts.stateDir,
      maxFiles: this.opts.maxFiles ?? 5000,
      maxStateBytes: this.opts.maxStateBytes ?? STATE_BYTES,
      operationsFor: (s, p) => this.operationsFor(s, p),
    });
    this.perSession.set(session.uri, sc);
    session.dispatchSession({ type: 'session/changesetsChanged', changesets: catalogueFor(session) });
    session.onTurnEnded((turn) => {
      // A turn cut short by a shutdown is computed after the restart: its stores are closing, and clients keep what they have.
      if (this.shuttingDown) return;
      const key = `${session.uri} ${turn.id}`;
      const work = sc
        .afterTurn(turn.id)
        .then(() => {
          if (!session.isDisposed) this.sessions.publishSummaryChange(session, { ...(sc.totals ? { changes: sc.totals } : {}) });
        })
        .catch(() => undefined)
        .finally(() => setTimeout(() => this.turnWork.delete(key), 60_000).unref());
      this.turnWork.set(key, work);
    });
    session.onDisposed(() => {
      this.perSession.delete(session.uri);
      this.detached.add(sc);
      void sc.reviews.flushed().then(() => this.detached.delete(sc));
      void this.watchers.get(session.uri)?.close();
      this.watchers.delete(session.uri);
      if (!this.shuttingDown) sc.closeAll();
    });
    // The totals of the session changeset as the workspace is now: a resumed or reopened session shows what it holds.
    void sc
      .refreshTotals()
      .then((totals) => {
        if (!session.isDisposed) this.sessions.publishSummaryChange(session, { changes: totals });
      })
      .catch(() => undefined);
  }

  private async resolve(uri: string): Promise<ChannelResolveError | void> {
    const parsed = parseChangesetUri(uri);
    if (isChangesetUriError(parsed)) return { code: JsonRpcErrorCodes.InvalidParams, message: `${uri}: ${parsed.message}` };
    const sc = this.perSession.get(sessionUri(parsed.sessionId));
    if (!sc) return { code: AhpErrorCodes.SessionNotFound, message: `no session ${JSON.stringify(parsed.sessionId)}` };
    const session = sc.session;
    if (parsed.dir !== undefined && parsed.dir >= session.files.count) {
      return { code: AhpErrorCodes.NotFound, message: `session ${parsed.sessionId} has no working directory ${parsed.dir}` };
    }
    if ((parsed.kind === 'uncommitted' || parsed.kind === 'branch') && !session.files.list().some((r, i) => r.repository && (parsed.dir ?? i) === i)) {
      return { code: AhpErrorCodes.NotFound, message: `${parsed.kind} changesets need a git working directory` };
    }
    for (const turnId of [parsed.turnId, parsed.originalTurnId, parsed.modifiedTurnId]) {
      if (turnId !== undefined && !session.turn(turnId)) {
        return { code: AhpErrorCodes.NotFound, message: `no turn ${JSON.stringify(turnId)} in session ${parsed.sessionId}` };
      }
    }
    if (parsed.step !== undefined) {
      const turn = session.turn(parsed.turnId!)!;
      if (!stepOf(turn, parsed.step)) return { code: AhpErrorCodes.NotFound, message: missingStepMessage(turn, parsed.step) };
    }
    sc.open(parsed);
    if (isLive(parsed.kind)) this.ensureWatcher(sc);
  }

  private ensureWatcher(sc: SessionChangesets): void {
    const key = sc.session.uri;
    if (this.watchers.has(key)) return;
    const watcher = new LiveWatcher({
      dirs: sc.session.workingDirectories,
      debounceMs: this.opts.watchDebounceMs ?? 300,
      ignore: [this.opts.stateDir],
      onChange: async () => {
        await sc.refreshLive();
        if (!sc.hasLiveSubscribers()) {
          void watcher.close();
          this.watchers.delete(key);
        }
      },
    });
    this.watchers.set(key, watcher);
  }

  private ownerOf(uri: string): SessionChangesets | undefined {
    const parsed = parseChangesetUri(uri);
    return isChangesetUriError(parsed) ? undefined : this.perSession.get(sessionUri(parsed.sessionId));
  }

  private async fileDiff(params: ChangesetFileDiffParams): Promise<WorkspaceFileDiff> {
    const { owner, channel } = await this.channel(params.channel);
    const change = channel.changes.get(params.fileId);
    if (!change) throw invalidParams(`fileId: no file ${JSON.stringify(params.fileId)} in ${params.channel}`);
    if (params.sinceViewed === true) return this.sinceViewedDiff(owner, channel, change, params);
    try {
      const diff = await diffChange(change, params.context !== undefined ? { context: params.context } : {});
      const owner = this.ownerOf(params.channel);
      if (diff.kind === 'text' && owner) await markRevertedHunks(owner.session, channel.parsed, change, diff.hunks);
      return diff;
    } catch (error) {
      if (error instanceof ChangesetUnavailable) throw notFound(error.message);
      throw error;
    }
  }

  /** The diff from the version ticked "Viewed" to the file now (`sinceViewed: true`). */
  private async sinceViewedDiff(
    owner: SessionChangesets,
    channel: ChangesetChannel,
    change: FileChange,
    params: ChangesetFileDiffParams,
  ): Promise<WorkspaceFileDiff> {
    const file = channel.files.get(params.fileId);
    const viewed = file ? owner.viewedVersion(channel.uri, file) : undefined;
    if (viewed === undefined) throw invalidParams(`fileId: ${file ? metaOf(file).path : params.fileId} has not changed since it was ticked "Viewed"`);
    const store = (change.after ?? change.before)!.store;
    const since: FileChange = { kind: 'modified', root: change.root, path: change.path, absPath: change.absPath };
    if (viewed) since.before = { oid: viewed.oid, mode: viewed.mode as GitMode, store };
    if (change.after) since.after = change.after;
    return diffChange(since, params.context !== undefined ? { context: params.context } : {});
  }

  private async read(params: ResourceReadParams): Promise<ResourceReadResult> {
    const address = parseContentUri(params.uri);
    const sc = address && this.perSession.get(sessionUri(address.sessionId));
    // Only content a changeset of a live session has handed out is served: a forged id gets nothing.
    if (!address || !sc?.builder.issued.has(`${address.root}:${address.oid}`)) {
      throw new DomainError(AhpErrorCodes.ContentNotFound, `no content ${params.uri}`);
    }
    const root = sc.session.files.list()[address.root];
    if (!root) throw new DomainError(AhpErrorCodes.ContentNotFound, `no content ${params.uri}`);
    const { content } = await root.store.readObject(address.oid);
    const text = isUtf8(content) && !isBinary(content);
    const encoding = params.encoding === 'base64' || !text ? 'base64' : 'utf-8';
    return {
      data: Buffer.from(content).toString(encoding === 'base64' ? 'base64' : 'utf8'),
      encoding,
      contentType: text ? 'text/plain; charset=utf-8' : 'application/octet-stream',
    };
  }
}

const changesetChannel = channelCheck('changeset');

/**
 * Bytes of files a changeset's state carries by default: with the rest of
 * the state and the envelope around it, a frame stays under 1 MiB (about
 * 1,400 files of 550 bytes; `changesetFiles` lists the others).
 */
const STATE_BYTES = 800_000;

function checkFileDiffParams(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'params must be an object';
  const p = params as Record<string, unknown>;
  const channelProblem = changesetChannel(p['channel'], 'params.channel');
  if (channelProblem !== undefined) return channelProblem;
  if (typeof p['fileId'] !== 'string' || p['fileId'].length === 0) return 'params.fileId must be a non-empty string';
  if (p['sinceViewed'] !== undefined && typeof p['sinceViewed'] !== 'boolean') return 'params.sinceViewed must be a boolean';
  const context = p['context'];
  if (context !== undefined && (typeof context !== 'number' || !Number.isInteger(context) || context < 0 || context > 1000)) {
    return 'params.context must be an integer from 0 to 1000';
  }
  return undefined;
}
