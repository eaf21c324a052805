/**
 * How the viewer moves: connecting and landing on a linked view, opening
 * sessions and changesets (entries, turns, steps, comparisons), and
 * following the server — channel changes, a dropped changeset, sessions
 * that come and go. What is shown lives in `state/view-state`; the session
 * list, the channels kept subscribed, the naming of changesets, the diff
 * display and the render queue in the other modules of `state/`.
 */
import type { ActionEnvelope, Changeset, URI } from '../../protocol/index.js';
import type { ViewerClient } from './client.js';
import { countsOf } from './files-model.js';
import { compareView, entryView, isStatic, relabel, stepView, turnOfUri, turnView, type OpenChangeset } from './state/changeset-views.js';
import { SessionChannels } from './state/subscriptions.js';
import { ViewState } from './state/view-state.js';

export type { OpenChangeset } from './state/changeset-views.js';
export type { Notice } from './state/view-state.js';
export type { Part } from './state/render-queue.js';
export type { DiffMode, Layout } from './state/display.js';

/** The viewer: what is shown (`ViewState`) and how it moves with the user and the server. */
export class App extends ViewState {
  private readonly channels: SessionChannels;
  constructor(client: ViewerClient) {
    super(client);
    this.channels = new SessionChannels(client);
    client.on('status', () => this.invalidate('status'));
    client.on('channel', (uri) => this.onChannel(uri));
    client.on('envelope', (envelope) => this.onEnvelope(envelope));
    client.on('notification', ({ method, params }) => this.onNotification(method, params));
    client.on('resynced', () => void this.loadSessions());
    client.on('rejected', ({ action, reason }) => {
      const what = action.type === 'changeset/filesReviewChanged' ? `Could not change "Viewed": ${reason}` : reason;
      this.say({ tone: 'error', text: what });
    });
    client.on('gone', (uri) => {
      if (uri === this.open?.uri) this.say({ tone: 'error', text: 'This changeset is no longer available.' });
      this.invalidate('chips', 'files', 'toolbar', 'diff');
    });
  }

  /** Connects and loads the session list. */
  async start(): Promise<void> {
    // A linked session and changeset come with the handshake, before the session list.
    this.client.want(this.landing.prefetch ?? []);
    await this.client.start();
    const { session, open } = this.landing;
    if (session !== undefined && this.client.mirror.has(session)) {
      // The linked session is here already: open its view while the session list loads.
      this.landing = {};
      const listing = this.loadSessions();
      await this.selectSession(session, open);
      await listing;
      return;
    }
    await this.loadSessions();
  }

  /** Re-fetches the session list (notifications are not replayed after a drop); selects a session when none is. */
  async loadSessions(): Promise<void> {
    await this.sessionList.load();
    this.invalidate('sessions');
    if (this.sessionUri === undefined && this.sessions.size > 0) {
      const { session, open } = this.landing;
      this.landing = {};
      if (session !== undefined && this.sessions.has(session)) await this.selectSession(session, open);
      else await this.selectSession(this.sortedSessions()[0]!.resource);
    }
  }

  /**
   * Opens a session: subscribes to it, its chat and its static changesets (for
   * the chip counts). `openView` opens something other than the session-wide
   * changeset first; it resolves false when it could not.
   */
  async selectSession(uri: URI, openView?: () => Promise<boolean>): Promise<void> {
    if (uri === this.sessionUri) return;
    this.leaveSession();
    this.sessionUri = uri;
    this.invalidate('sessions', 'turns', 'chips', 'toolbar', 'files', 'diff');
    this.events.emit('navigate', undefined);
    try {
      if (!this.client.mirror.has(uri)) await this.client.subscribe(uri);
    } catch (error) {
      this.say({ tone: 'error', text: `Could not open the session: ${(error as Error).message}` });
      return;
    }
    // The chat (turn list) loads alongside the view; the other changesets (chip counts) once the view is drawn.
    void this.syncSessionChannels();
    if (!openView || !(await openView())) {
      // Start on the session-wide changeset: it is live and shows everything so far.
      const sessionEntry = this.catalogue.find((c) => c.changeKind === 'session' && isStatic(c)) ?? this.catalogue.find(isStatic);
      if (sessionEntry && !this.open) await this.openEntry(sessionEntry);
    }
    // The other changesets (800 KB each at most) once the view's first screen is drawn, not in front of its diffs.
    this.afterFirstScreen(() => {
      if (this.sessionUri !== uri) return;
      this.channels.wantStatics();
      void this.syncSessionChannels();
    });
  }

  private leaveSession(): void {
    if (!this.sessionUri) return;
    this.channels.leave();
    this.sessionUri = undefined;
    this.open = undefined;
    this.openTurnId = undefined;
    this.openStep = undefined;
    this.selectedFileId = undefined;
    this.compare = [];
    this.turnCounts.clear();
  }

  /** Subscribes to the chat and static changesets the session's state names (after it changed). */
  private syncSessionChannels(): Promise<void> {
    return this.channels.sync(
      this.chatUri,
      this.catalogue.filter(isStatic).map((entry) => entry.uriTemplate),
    );
  }

  /** Opens a static catalogue entry. */
  async openEntry(entry: Changeset): Promise<void> {
    this.openTurnId = undefined;
    this.openStep = undefined;
    this.compare = [];
    await this.openChangeset(entryView(entry));
  }

  /** Opens what one tool call (step, 1-based) of a turn changed. */
  async openStepOf(turnId: string, step: number): Promise<void> {
    const entry = this.catalogue.find((c) => c.changeKind === 'step');
    if (!entry) return;
    this.openTurnId = turnId;
    this.openStep = step;
    this.compare = [];
    await this.openChangeset(stepView(entry, this.chat, turnId, step));
  }

  /** Opens one turn's changeset. */
  async openTurn(turnId: string): Promise<void> {
    const entry = this.catalogue.find((c) => c.changeKind === 'turn');
    if (!entry) return;
    this.openTurnId = turnId;
    this.openStep = undefined;
    this.compare = [];
    await this.openChangeset(turnView(entry, this.chat, turnId));
  }

  /** Ticks or unticks a turn for comparison; two ticked turns open their comparison. */
  async toggleCompare(turnId: string): Promise<void> {
    this.compare = this.compare.includes(turnId) ? this.compare.filter((t) => t !== turnId) : [...this.compare, turnId].slice(-2);
    this.invalidate('turns');
    if (this.compare.length !== 2) return;
    const order = (this.chat?.turns ?? []).map((t) => t.id);
    const [original, modified] = [...this.compare].sort((a, b) => order.indexOf(a) - order.indexOf(b)) as [string, string];
    await this.openCompare(original, modified);
  }

  /** Opens the comparison of two turns' end states (`original` is the old side). */
  async openCompare(original: string, modified: string): Promise<void> {
    const entry = this.catalogue.find((c) => c.changeKind === 'compare-turns');
    if (!entry) return;
    this.compare = [original, modified];
    this.invalidate('turns');
    this.openTurnId = undefined;
    this.openStep = undefined;
    await this.openChangeset(compareView(entry, this.chat, original, modified));
  }

  private async openChangeset(open: OpenChangeset): Promise<void> {
    const previous = this.open;
    this.open = open;
    this.selectedFileId = undefined;
    this.selectedLine = undefined;
    this.selectionSource = 'pick';
    this.invalidate('turns', 'chips', 'toolbar', 'files', 'diff');
    this.events.emit('navigate', undefined);
    this.channels.opened(previous?.uri, open.uri, (uri) => this.isStaticUri(uri));
    if (this.client.isSubscribed(open.uri) && this.client.mirror.has(open.uri)) return;
    try {
      await this.client.subscribe(open.uri);
    } catch (error) {
      if (this.open?.uri === open.uri) this.say({ tone: 'error', text: `Could not open ${open.label}: ${(error as Error).message}` });
    }
  }

  /** A turn or comparison opened before the chat was mirrored (a deep link) gets its title once it is. */
  private relabelTurn(): void {
    if (!this.open) return;
    const label = relabel(this.open, this.chat, this.openTurnId, this.openStep, this.compare);
    if (!label || label === this.open.label) return;
    this.open = { ...this.open, label };
    this.invalidate('toolbar');
  }

  private isStaticUri(uri: URI): boolean {
    return this.catalogue.some((c) => isStatic(c) && c.uriTemplate === uri);
  }

  private onChannel(uri: URI): void {
    if (uri === this.sessionUri) {
      this.invalidate('chips', 'turns', 'toolbar');
      void this.syncSessionChannels();
    }
    // Today's files may have changed under the recorded diffs (a revert, a turn): they are asked for again.
    const epoch = this.diffEpoch;
    if (epoch !== this.shownEpoch) {
      this.shownEpoch = epoch;
      this.invalidate('diff');
    }
    if (uri === this.chatUri) {
      this.invalidate('turns');
      // A turn starting or ending disables or enables every operation button, the notice's Undo among them.
      const recording = this.chat?.activeTurn?.id;
      if (recording !== this.recordingTurn) {
        this.recordingTurn = recording;
        this.invalidate('toolbar', 'diff', 'status');
      }
      this.relabelTurn();
    }
    // Another view's ticks can differ from the open one's, which the diff headers point out.
    if (this.isStaticUri(uri)) this.invalidate('chips', 'diff');
    else if (this.channels.isRecent(uri)) this.invalidate('diff');
    if (uri === this.sessionChangesetUri) this.invalidate('status');
    const state = this.client.mirror.state(uri, 'changeset');
    const turnId = turnOfUri(this.catalogue, this.chat, uri);
    if (state && turnId !== undefined && state.status === 'ready') {
      this.turnCounts.set(turnId, countsOf(state));
      this.invalidate('turns');
    }
    if (uri === this.open?.uri) {
      // A file that left the changeset (reverted, discarded) gives its selection to its neighbour.
      if (this.selectedFileId !== undefined && !this.selectedFile)
        this.selectedFileId = this.fileRows.neighbourOf(this.selectedFileId, this.changeset?.files ?? []);
      this.invalidate('files', 'toolbar', 'diff', 'chips');
    }
  }

  /** The turn being recorded when the chat last changed. */
  private recordingTurn: string | undefined;

  /** The {@link diffEpoch} the diffs were last drawn under. */
  private shownEpoch = '';

  private onEnvelope(envelope: ActionEnvelope): void {
    const action = envelope.action as { type: string };
    if (envelope.channel === this.open?.uri && action.type === 'changeset/cleared' && envelope.origin === undefined) {
      // The server dropped the channel (e.g. evicted it); a fresh subscribe recomputes it.
      const open = this.open;
      window.setTimeout(() => {
        if (this.open?.uri === open.uri && !this.client.isSubscribed(open.uri)) void this.client.subscribe(open.uri).catch(() => undefined);
      }, 200);
    }
  }

  private onNotification(method: string, params: unknown): void {
    const change = this.sessionList.apply(method, params);
    if (!change) return;
    this.invalidate('sessions');
    if (change.type === 'added' && this.sessionUri === undefined) void this.selectSession(change.session);
    if (change.type === 'removed' && change.session === this.sessionUri) {
      this.leaveSession();
      this.invalidate('turns', 'chips', 'toolbar', 'files', 'diff');
    }
  }
}
