import {
  formatChangesetUri,
  type ChangesetFile,
  type ChangesetOperation,
  type ChangesetState,
  type ChangesSummary,
  type ParsedChangesetUri,
  type StateAction,
} from '../../protocol/index.js';
import type { ChannelStore } from '../channels/index.js';
import type { RootTrees } from '../changes/collect-changes.js';
import type { FileChange } from '../changes/file-change.js';
import { SessionDelta } from '../changes/session-delta.js';
import { compareDisplay } from '../session/display-path.js';
import type { RecordingSession } from '../session/recording-session.js';
import { ChangesetFileBuilder, metaOf } from './changeset-files.js';
import { produceChanges } from './changeset-producer.js';
import { ChangesetUnavailable, isLive } from './changeset-sides.js';
import { ReviewStore } from './review-store.js';
import { stepEndTrees, stepOf } from '../session/step-recorder.js';

/** Supplies the operations a changeset offers (the operations module installs one). */
export type OperationsFor = (session: RecordingSession, parsed: ParsedChangesetUri) => ChangesetOperation[];

/** One changeset channel this server produces. */
export interface ChangesetChannel {
  readonly uri: string;
  readonly parsed: ParsedChangesetUri;
  /** Every file, by id, including those left out of the state by `maxFiles`. */
  files: Map<string, ChangesetFile>;
  /** The change behind each file, by id. */
  changes: Map<string, FileChange>;
  /** Resolves when the latest computation finished. */
  ready: Promise<void>;
  /** The channel's state has been computed at least once. */
  computed: boolean;
  /** Counts the computations that published: what a `changesetFiles` cursor is valid for. */
  version: number;
}

/** Options shared by every session's changesets. */
export interface SessionChangesetsOptions {
  stateDir: string;
  /** Most files carried in a changeset's state; the totals cover all (default 5000). */
  maxFiles: number;
  /** Most bytes of files (their JSON) carried in a changeset's state, so that no frame passes 1 MiB. */
  maxStateBytes: number;
  operationsFor: OperationsFor;
}

/**
 * The changeset channels of one session: computing them, keeping live ones
 * current, applying persisted review flags and resetting them when content
 * changes.
 */
export class SessionChangesets {
  readonly channels = new Map<string, ChangesetChannel>();
  readonly builder: ChangesetFileBuilder;
  readonly reviews: ReviewStore;
  private sessionTotals: ChangesSummary | undefined;
  /** The session changeset followed turn by turn, for its channel and the session's totals. */
  private readonly delta: SessionDelta;

  constructor(
    readonly session: RecordingSession,
    private readonly store: ChannelStore,
    private readonly opts: SessionChangesetsOptions,
  ) {
    this.builder = new ChangesetFileBuilder(session);
    this.reviews = new ReviewStore(opts.stateDir, session.id);
    this.delta = new SessionDelta(session.files.treeSources(), () => session.startTrees);
  }

  /** Totals of the session changeset as of the last turn end (for `SessionSummary.changes`). */
  get totals(): ChangesSummary | undefined {
    return this.sessionTotals;
  }

  /** Creates the channel in `computing` state and starts computing it. */
  open(parsed: ParsedChangesetUri): ChangesetChannel {
    const uri = formatChangesetUri(parsed);
    const existing = this.channels.get(uri);
    if (existing && this.store.hasChannel(uri)) return existing;
    const channel: ChangesetChannel = { uri, parsed, files: new Map(), changes: new Map(), ready: Promise.resolve(), computed: false, version: 0 };
    const initial: ChangesetState = { status: 'computing', files: [] };
    const operations = this.opts.operationsFor(this.session, parsed);
    if (operations.length > 0) initial.operations = operations;
    this.store.createChannel(uri, 'changeset', initial, { reviewable: true });
    this.channels.set(uri, channel);
    if (!isPending(this.session, parsed)) this.recompute(channel);
    return channel;
  }

  /** Recomputes a channel (queued behind its previous computation). */
  recompute(channel: ChangesetChannel, current?: RootTrees[]): Promise<void> {
    channel.ready = channel.ready.then(() => this.compute(channel, current)).catch(() => undefined);
    return channel.ready;
  }

  /** Live channels, and turn channels waiting for their turn to end, after a turn ended. */
  async afterTurn(turnId: string): Promise<void> {
    const turn = this.session.turn(turnId);
    const current = turn?.after;
    const work: Promise<void>[] = [];
    for (const channel of this.channels.values()) {
      if (!this.store.hasChannel(channel.uri)) continue;
      const p = channel.parsed;
      if (isLive(p.kind)) work.push(this.recompute(channel, current));
      else if (!channel.computed && !isPending(this.session, p)) work.push(this.recompute(channel));
    }
    await Promise.all(work);
    await this.refreshTotals(current);
  }

  /** Recomputes live channels after the working tree changed; channels nobody watches are dropped instead. */
  async refreshLive(): Promise<void> {
    const live = [...this.channels.values()].filter((c) => isLive(c.parsed.kind) && this.store.hasChannel(c.uri));
    if (live.length === 0) return;
    const watched = live.filter((c) => (this.store.getChannel(c.uri)?.subscriberCount ?? 0) > 0);
    for (const c of live) if (!watched.includes(c)) this.close(c.uri);
    if (watched.length === 0) return;
    const current = await this.session.currentTrees();
    await Promise.all(watched.map((c) => this.recompute(c, current)));
  }

  /** True when some live channel has a subscriber (file watching is needed). */
  hasLiveSubscribers(): boolean {
    for (const c of this.channels.values()) {
      if (isLive(c.parsed.kind) && (this.store.getChannel(c.uri)?.subscriberCount ?? 0) > 0) return true;
    }
    return false;
  }

  /** Records a client's review action (already reduced into the channel) so it survives a restart. */
  persistReview(uri: string, fileIds: readonly string[], reviewed: boolean): void {
    const channel = this.channels.get(uri);
    if (!channel) return;
    const files = fileIds.flatMap((id) => {
      const file = channel.files.get(id);
      if (!file) return [];
      // Files are frozen once dispatched: keep a copy that mirrors the reduced state.
      const { reviewed: _old, ...rest } = file;
      channel.files.set(id, reviewed ? { ...rest, reviewed: true } : rest);
      return [{ id, contentKey: contentKey(file) }];
    });
    void this.reviews.set(uri, files, reviewed);
  }

  /** Re-publishes the operations of every channel (after their status or availability changed). */
  refreshOperations(): void {
    for (const channel of this.channels.values()) {
      if (!this.store.hasChannel(channel.uri)) continue;
      this.dispatch(channel.uri, { type: 'changeset/operationsChanged', operations: this.opts.operationsFor(this.session, channel.parsed) });
    }
  }

  /** Publishes one operation's new status on a channel. */
  setOperationStatus(uri: string, operationId: string, info: { status: ChangesetOperation['status']; error?: ChangesetOperation['error'] }): void {
    if (!this.store.hasChannel(uri)) return;
    this.dispatch(uri, { type: 'changeset/operationStatusChanged', operationId, status: info.status, ...(info.error ? { error: info.error } : {}) });
  }

  /** Removes one channel (its subscribers get `changeset/cleared` and are unsubscribed). */
  close(uri: string): void {
    this.channels.delete(uri);
    this.store.removeChannel(uri);
  }

  /** Removes every channel of the session. */
  closeAll(): void {
    for (const uri of [...this.channels.keys()]) this.close(uri);
  }

  /** Updates the session changeset's totals from the given (or a fresh) state of the working tree. */
  async refreshTotals(current?: RootTrees[]): Promise<ChangesSummary> {
    const changes = await produceChanges(this.session, { sessionId: this.session.id, kind: 'session' }, current, this.delta);
    const totals: ChangesSummary = { additions: 0, deletions: 0, files: changes.length };
    for (const change of changes) {
      const stats = await this.session.files.stats(change);
      totals.additions! += stats.added;
      totals.deletions! += stats.deleted;
    }
    this.sessionTotals = totals;
    return totals;
  }

  private async compute(channel: ChangesetChannel, current?: RootTrees[]): Promise<void> {
    if (!this.store.hasChannel(channel.uri)) return;
    let files: ChangesetFile[];
    const changes = new Map<string, FileChange>();
    try {
      files = [];
      for (const change of await produceChanges(this.session, channel.parsed, current, this.delta)) {
        const file = await this.builder.build(change);
        changes.set(file.id, change);
        files.push(file);
      }
      files.sort((a, b) => compareDisplay(metaOf(a).path, metaOf(b).path));
    } catch (error) {
      if (error instanceof ChangesetUnavailable && error.reason === 'pending') return;
      if (!this.store.hasChannel(channel.uri)) return;
      this.dispatch(channel.uri, {
        type: 'changeset/statusChanged',
        status: 'error',
        error: { errorType: error instanceof ChangesetUnavailable ? 'NotFound' : 'ComputeFailed', message: (error as Error).message },
      });
      return;
    }
    if (!this.store.hasChannel(channel.uri)) return;
    for (const file of files) {
      const viewed = this.reviews.viewedAt(channel.uri, file.id);
      if (viewed === undefined) continue;
      // Ticked at this very content: still viewed. Ticked at another: the tick is gone, and the file says it changed since.
      if (viewed === contentKey(file)) file.reviewed = true;
      else (file._meta as Record<string, unknown>)['changedSinceViewed'] = true;
    }
    this.publish(channel, files);
    channel.version++;
    channel.changes = changes;
    channel.files = new Map(files.map((f) => [f.id, f]));
    channel.computed = true;
  }

  private publish(channel: ChangesetChannel, files: ChangesetFile[]): void {
    const state = this.store.getState(channel.uri) as ChangesetState;
    const limited = files.slice(0, this.carried(files));
    const incremental = channel.computed && state.status === 'ready' && limited.length === files.length && state.files.length === channel.files.size;
    if (incremental) {
      const next = new Set(files.map((f) => f.id));
      for (const id of channel.files.keys()) if (!next.has(id)) this.dispatch(channel.uri, { type: 'changeset/fileRemoved', fileId: id });
      for (const file of files) {
        const old = channel.files.get(file.id);
        if (!old || JSON.stringify(old) !== JSON.stringify(file)) this.dispatch(channel.uri, { type: 'changeset/fileSet', file });
      }
      return;
    }
    const operations = this.opts.operationsFor(this.session, channel.parsed);
    // A turn's steps and presented files are in the session state's `_meta.turns`, where AHP's reducers keep them.
    const meta = files.length > limited.length ? totalsMeta(files) : {};
    const action: StateAction = {
      type: 'changeset/contentChanged',
      files: limited,
      ...(operations.length > 0 ? { operations } : {}),
      ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
    } as StateAction;
    this.dispatch(channel.uri, action);
    if (state.status !== 'ready') this.dispatch(channel.uri, { type: 'changeset/statusChanged', status: 'ready' });
  }

  /** How many of `files` the state carries: at most `maxFiles`, and no more than `maxStateBytes` of them. */
  private carried(files: readonly ChangesetFile[]): number {
    const most = Math.min(files.length, this.opts.maxFiles);
    let bytes = 0;
    for (let i = 0; i < most; i++) {
      bytes += Buffer.byteLength(JSON.stringify(files[i])) + 1;
      if (bytes > this.opts.maxStateBytes) return i;
    }
    return most;
  }

  private dispatch(uri: string, action: StateAction): void {
    this.store.dispatch(uri, action);
  }

  /** The version of a file that was ticked "Viewed" (its new side then), when it has changed since; undefined otherwise. */
  viewedVersion(uri: string, file: ChangesetFile): { oid: string; mode: string } | null | undefined {
    const viewed = this.reviews.viewedAt(uri, file.id);
    if (viewed === undefined || viewed === contentKey(file)) return undefined;
    const [, , oid, mode] = viewed.split(':');
    return oid && mode ? { oid, mode } : null;
  }
}

/** Identifies a file's content on both sides: review applies only while it is unchanged. */
function contentKey(file: ChangesetFile): string {
  const m = metaOf(file);
  return `${m.beforeOid ?? ''}:${m.beforeMode ?? ''}:${m.afterOid ?? ''}:${m.afterMode ?? ''}`;
}

function totalsMeta(files: readonly ChangesetFile[]): Record<string, unknown> {
  let additions = 0;
  let deletions = 0;
  for (const f of files) {
    additions += f.edit.diff?.added ?? 0;
    deletions += f.edit.diff?.removed ?? 0;
  }
  return { totalFiles: files.length, additions, deletions, truncated: true };
}

function isPending(session: RecordingSession, parsed: ParsedChangesetUri): boolean {
  if (parsed.kind === 'step') {
    const turn = session.turn(parsed.turnId!);
    return turn !== undefined && stepOf(turn, parsed.step!) !== undefined && stepEndTrees(turn, parsed.step!) === undefined;
  }
  const ids = parsed.kind === 'turn' ? [parsed.turnId!] : parsed.kind === 'compare-turns' ? [parsed.originalTurnId!, parsed.modifiedTurnId!] : [];
  return ids.some((id) => session.turn(id) !== undefined && session.turn(id)!.after === undefined);
}
