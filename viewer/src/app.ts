/**
 * The viewer's state and the glue between the AHP client and the views:
 * which session, changeset and file are open, the diff mode, cached turn
 * counts. Views read from here and are re-rendered (coalesced to one frame)
 * when what they show changes.
 */
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import { expandChangesetUri } from '../../protocol/changeset/uris.js';
import type {
  ActionEnvelope,
  Changeset,
  ChangesetFile,
  ChangesetState,
  ChatState,
  ListSessionsResult,
  SessionAddedParams,
  SessionRemovedParams,
  SessionState,
  SessionSummary,
  SessionSummaryChangedParams,
  URI,
} from '../../protocol/index.js';
import type { TimelineMeta } from '../../server/session/timeline-meta.js';
import type { ViewerClient } from './client.js';
import { Emitter } from './events.js';
import { buildRows, countsOf, type Counts, type Row } from './files-model.js';
import { NO_FILTER, passes, type FileFilter } from './review/filter.js';
import { loadPreference, savePreference } from './preferences.js';

/** How diffs are drawn. */
export type DiffMode = 'unified' | 'split';

/** All files of a changeset on one scrolling page, or the selected file alone. */
export type Layout = 'all' | 'file';

/** The changeset shown in the main area. */
export interface OpenChangeset {
  /** Its expanded URI. */
  uri: URI;
  /** Heading shown above the file list. */
  label: string;
  /** The catalogue entry's `changeKind`. */
  changeKind: string;
  /** The catalogue entry advertises the review capability. */
  reviewable: boolean;
}

/** Parts of the page that re-render independently. */
export type Part = 'status' | 'sessions' | 'turns' | 'chips' | 'toolbar' | 'files' | 'diff';

/** Something for the user to read: an operation's outcome, a refused review tick, a failure. */
export interface Notice {
  /** How to present it. */
  tone: 'info' | 'error';
  /** The text. */
  text: string;
  /** Offers the session changeset's `undo` next to the notice. */
  offerUndo?: boolean;
}

/** Runs `task` when the page is idle (after the first view is fetched and drawn), or within 1.5 s. */
function whenIdle(task: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(task, { timeout: 1500 });
  else setTimeout(task, 300);
}

/** How many per-turn changesets stay subscribed after they are left. */
const RECENT_VIEWS = 4;

/** Catalogue entries that need no template variables: subscribable as they are. */
export function isStatic(entry: Changeset): boolean {
  return !entry.uriTemplate.includes('{');
}

/** The viewer application state. */
export class App {
  /** Known sessions, by URI. */
  readonly sessions = new Map<URI, SessionSummary>();
  /** The selected session. */
  sessionUri: URI | undefined;
  /** The changeset in the main area. */
  open: OpenChangeset | undefined;
  /** The selected file's id. */
  selectedFileId: string | undefined;
  /** Turn ids ticked for comparison (at most two, oldest selection first). */
  compare: string[] = [];
  /** The turn whose changeset is open, when a single turn (or one of its steps) is. */
  openTurnId: string | undefined;
  /** The step of `openTurnId` whose changeset is open (1-based), when one is. */
  openStep: number | undefined;
  /** Unified or side-by-side diffs. */
  mode: DiffMode = 'unified';
  /** The review page or one file at a time (remembered). */
  layout: Layout = loadPreference('layout', ['all', 'file'], 'all');
  /** Which files the list and the review page show. */
  filter: FileFilter = NO_FILTER;
  /** Context lines requested around each change. */
  context = 3;
  /** The latest notice. */
  notice: Notice | undefined;
  /** Per-turn counts from turn changesets once opened; the session state's figures otherwise. */
  readonly turnCounts = new Map<string, Counts>();
  /** The linked line of the selected file: `L<n>` on the old side, `R<n>` on the new. */
  selectedLine: string | undefined;
  /** Whether the selection came from the user picking a file or from scrolling past it. */
  selectionSource: 'pick' | 'scroll' = 'pick';
  /** Counts the user's picks, so views bring a picked file into view even when it was already selected. */
  picks = 0;
  /** The session to open first and how to open its view (a deep link sets these before the sessions load). */
  landing: { session?: URI; open?: () => Promise<boolean>; prefetch?: URI[] } = {};
  /** `navigate` fires whenever the session, changeset, file or line shown changes. */
  readonly events = new Emitter<{ navigate: undefined }>();

  private rowsCache: { files: readonly ChangesetFile[]; filter: FileFilter; rows: Row[] } | undefined;
  private readonly renderers = new Map<Part, () => void>();
  private readonly dirty = new Set<Part>();
  private frame = 0;

  constructor(readonly client: ViewerClient) {
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

  /** Registers the function that draws one part of the page. */
  renderer(part: Part, render: () => void): void {
    this.renderers.set(part, render);
  }

  /** Schedules parts for re-rendering on the next animation frame. */
  invalidate(...parts: Part[]): void {
    for (const p of parts) this.dirty.add(p);
    if (this.frame === 0) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        const parts = [...this.dirty];
        this.dirty.clear();
        for (const p of parts) this.renderers.get(p)?.();
      });
    }
  }

  /** Shows a notice. */
  say(notice: Notice): void {
    this.notice = notice;
    this.invalidate('status');
  }

  /** The selected session's state, when mirrored. */
  get session(): SessionState | undefined {
    return this.sessionUri ? this.client.mirror.state(this.sessionUri, 'session') : undefined;
  }

  /** The selected session's default chat URI. */
  get chatUri(): URI | undefined {
    const session = this.session;
    return session?.defaultChat ?? session?.chats[0]?.resource;
  }

  /** The default chat's state, when mirrored. */
  get chat(): ChatState | undefined {
    const uri = this.chatUri;
    return uri ? this.client.mirror.state(uri, 'chat') : undefined;
  }

  /** The catalogue entries of the selected session. */
  get catalogue(): Changeset[] {
    return this.session?.changesets ?? [];
  }

  /** The open changeset's state, when mirrored. */
  get changeset(): ChangesetState | undefined {
    return this.open ? this.client.mirror.state(this.open.uri, 'changeset') : undefined;
  }

  /** The URI of the selected session's session-wide changeset (where `undo` lives). */
  get sessionChangesetUri(): URI | undefined {
    const entry = this.catalogue.find((c) => c.changeKind === 'session' && isStatic(c));
    return entry?.uriTemplate;
  }

  /** Rows of the open changeset's file list that pass the filter (memoised on the files array, which the reducers keep immutable). */
  get rows(): Row[] {
    const files = this.changeset?.files ?? [];
    const filter = this.filter;
    if (this.rowsCache?.files !== files || this.rowsCache.filter !== filter) {
      this.rowsCache = { files, filter, rows: buildRows(filter === NO_FILTER ? files : files.filter((f) => passes(f, filter))) };
    }
    return this.rowsCache.rows;
  }

  /** Narrows the file list and the review page. */
  setFilter(filter: FileFilter): void {
    this.filter = filter;
    this.invalidate('files', 'diff', 'toolbar');
  }

  /** Switches between the review page and one file at a time. */
  setLayout(layout: Layout): void {
    if (layout === this.layout) return;
    this.layout = layout;
    savePreference('layout', layout);
    this.invalidate('toolbar', 'diff');
  }

  /** The selected file, when it is in the open changeset. */
  get selectedFile(): ChangesetFile | undefined {
    const id = this.selectedFileId;
    return id === undefined ? undefined : this.changeset?.files.find((f) => f.id === id);
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

  /** Re-fetches every page of `listSessions` (notifications are not replayed after a drop). */
  async loadSessions(): Promise<void> {
    const all: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page: ListSessionsResult = await this.client.request('listSessions', { channel: ROOT_CHANNEL, ...(cursor ? { cursor } : {}) });
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    this.sessions.clear();
    for (const s of all) this.sessions.set(s.resource, s);
    this.invalidate('sessions');
    if (this.sessionUri === undefined && all.length > 0) {
      const { session, open } = this.landing;
      this.landing = {};
      if (session !== undefined && this.sessions.has(session)) await this.selectSession(session, open);
      else await this.selectSession(this.sortedSessions()[0]!.resource);
    }
  }

  /** Sessions, most recently modified first. */
  sortedSessions(): SessionSummary[] {
    return [...this.sessions.values()].sort((a, b) => (a.modifiedAt < b.modifiedAt ? 1 : a.modifiedAt > b.modifiedAt ? -1 : 0));
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
    whenIdle(() => {
      if (this.sessionUri !== uri) return;
      this.staticsWanted = true;
      void this.syncSessionChannels();
    });
  }

  /** Whether the session's static changesets are subscribed (deferred until the first view is drawn). */
  private staticsWanted = false;

  private leaveSession(): void {
    if (!this.sessionUri) return;
    for (const uri of this.client.mirror.uris()) if (uri !== ROOT_CHANNEL) this.client.unsubscribe(uri);
    this.sessionUri = undefined;
    this.open = undefined;
    this.openTurnId = undefined;
    this.openStep = undefined;
    this.selectedFileId = undefined;
    this.compare = [];
    this.turnCounts.clear();
    this.recentViews = [];
    this.staticsWanted = false;
  }

  /** Subscribes to the chat and static changesets the session's state names (after it changed). */
  private async syncSessionChannels(): Promise<void> {
    const wanted: URI[] = [];
    if (this.chatUri) wanted.push(this.chatUri);
    if (this.staticsWanted) for (const entry of this.catalogue) if (isStatic(entry)) wanted.push(entry.uriTemplate);
    await Promise.all(
      wanted.filter((uri) => !this.client.isSubscribed(uri)).map((uri) => this.client.subscribe(uri).catch(() => undefined)),
    );
  }

  /** Opens a static catalogue entry. */
  async openEntry(entry: Changeset): Promise<void> {
    this.openTurnId = undefined;
    this.openStep = undefined;
    this.compare = [];
    await this.openChangeset({ uri: entry.uriTemplate, label: entry.label, changeKind: entry.changeKind, reviewable: entry.capabilities?.review !== undefined });
  }

  /** Opens what one tool call (step, 1-based) of a turn changed. */
  async openStepOf(turnId: string, step: number): Promise<void> {
    const entry = this.catalogue.find((c) => c.changeKind === 'step');
    if (!entry) return;
    this.openTurnId = turnId;
    this.openStep = step;
    this.compare = [];
    const number = (this.chat?.turns.findIndex((t) => t.id === turnId) ?? -1) + 1;
    await this.openChangeset({
      uri: expandChangesetUri(entry.uriTemplate, { turnId, step: String(step) }),
      label: `Turn ${number || turnId}, step ${step}`,
      changeKind: 'step',
      reviewable: entry.capabilities?.review !== undefined,
    });
  }

  /** Opens one turn's changeset. */
  async openTurn(turnId: string): Promise<void> {
    const entry = this.catalogue.find((c) => c.changeKind === 'turn');
    if (!entry) return;
    const turn = this.chat?.turns.find((t) => t.id === turnId);
    this.openTurnId = turnId;
    this.openStep = undefined;
    this.compare = [];
    await this.openChangeset({
      uri: expandChangesetUri(entry.uriTemplate, { turnId }),
      label: `Turn: ${firstLine(turn?.message.text) || turnId}`,
      changeKind: 'turn',
      reviewable: entry.capabilities?.review !== undefined,
    });
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
    const order = (this.chat?.turns ?? []).map((t) => t.id);
    this.compare = [original, modified];
    this.invalidate('turns');
    this.openTurnId = undefined;
    this.openStep = undefined;
    await this.openChangeset({
      uri: expandChangesetUri(entry.uriTemplate, { originalTurnId: original, modifiedTurnId: modified }),
      label: `Compare: turn ${order.indexOf(original) + 1} → turn ${order.indexOf(modified) + 1}`,
      changeKind: 'compare-turns',
      reviewable: entry.capabilities?.review !== undefined,
    });
  }

  private async openChangeset(open: OpenChangeset): Promise<void> {
    const previous = this.open;
    this.open = open;
    this.selectedFileId = undefined;
    this.selectedLine = undefined;
    this.selectionSource = 'pick';
    this.invalidate('turns', 'chips', 'toolbar', 'files', 'diff');
    this.events.emit('navigate', undefined);
    // Static changesets stay subscribed for their chip counts; the last few per-turn ones too, so a
    // file's "Viewed" tick there can be compared with the open view's; older ones are dropped.
    if (previous && previous.uri !== open.uri && !this.isStaticUri(previous.uri)) {
      this.recentViews = [previous.uri, ...this.recentViews.filter((u) => u !== previous.uri && u !== open.uri)];
      for (const old of this.recentViews.splice(RECENT_VIEWS)) this.client.unsubscribe(old);
    }
    this.recentViews = this.recentViews.filter((u) => u !== open.uri);
    if (this.client.isSubscribed(open.uri) && this.client.mirror.has(open.uri)) return;
    try {
      await this.client.subscribe(open.uri);
    } catch (error) {
      if (this.open?.uri === open.uri) this.say({ tone: 'error', text: `Could not open ${open.label}: ${(error as Error).message}` });
    }
  }

  /** A turn or comparison opened before the chat was mirrored (a deep link) gets its title once it is. */
  private relabelTurn(): void {
    const turns = this.chat?.turns ?? [];
    if (!this.open) return;
    let label: string | undefined;
    if (this.open.changeKind === 'turn') label = firstLine(turns.find((t) => t.id === this.openTurnId)?.message.text);
    else if (this.open.changeKind === 'step' && this.openStep !== undefined) {
      const number = turns.findIndex((t) => t.id === this.openTurnId) + 1;
      if (number > 0) label = `Turn ${number}, step ${this.openStep}`;
    } else if (this.open.changeKind === 'compare-turns' && this.compare.length === 2) {
      const [a, b] = this.compare.map((id) => turns.findIndex((t) => t.id === id) + 1);
      if (a && b) label = `Compare: turn ${a} → turn ${b}`;
    }
    if (!label) return;
    this.open = { ...this.open, label: this.open.changeKind === 'turn' ? `Turn: ${label}` : label };
    this.invalidate('toolbar');
  }

  /** Per-turn changesets left recently, newest first, still subscribed. */
  private recentViews: URI[] = [];

  private isStaticUri(uri: URI): boolean {
    return this.catalogue.some((c) => isStatic(c) && c.uriTemplate === uri);
  }

  /** Selects a file by id (and re-renders the list and diff); `line` links one of its lines. */
  selectFile(id: string | undefined, source: 'pick' | 'scroll' = 'pick', line?: string): void {
    if (source === 'pick') this.picks++;
    if (id === this.selectedFileId && line === this.selectedLine) {
      // Picking the selected file again still brings it into view.
      if (source === 'pick') {
        this.selectionSource = 'pick';
        this.invalidate('files', 'diff');
      }
      return;
    }
    this.selectedFileId = id;
    this.selectedLine = line;
    this.selectionSource = source;
    this.invalidate('files', 'diff');
    this.events.emit('navigate', undefined);
  }

  /** Selects the next (`+1`) or previous (`-1`) file in list order. */
  step(delta: 1 | -1): void {
    const files = this.rows.filter((r) => r.type === 'file');
    if (files.length === 0) return;
    const at = files.findIndex((r) => r.file.id === this.selectedFileId);
    const next = at < 0 ? (delta > 0 ? 0 : files.length - 1) : Math.min(files.length - 1, Math.max(0, at + delta));
    this.selectFile(files[next]!.file.id);
  }

  /** Sets a file's "Viewed" flag write-ahead: shown at once, reconciled with the server's echo. */
  setViewed(fileId: string, reviewed: boolean): void {
    if (!this.open?.reviewable) return;
    this.client.dispatch(this.open.uri, { type: 'changeset/filesReviewChanged', files: [fileId], reviewed });
  }

  /** True while the diff pane is too narrow for two columns of code. */
  narrow = false;

  /** The layout diffs are drawn in: side by side falls back to unified in a narrow pane. */
  get effectiveMode(): DiffMode {
    return this.mode === 'split' && this.narrow ? 'unified' : this.mode;
  }

  /** Switches between unified and side-by-side diffs. */
  setMode(mode: DiffMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.invalidate('toolbar', 'diff');
  }

  /** Changes the context lines requested around changes. */
  setContext(context: number): void {
    if (context === this.context) return;
    this.context = context;
    this.invalidate('toolbar', 'diff');
  }

  private onChannel(uri: URI): void {
    if (uri === this.sessionUri) {
      this.invalidate('chips', 'turns', 'toolbar');
      void this.syncSessionChannels();
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
    else if (this.recentViews.includes(uri)) this.invalidate('diff');
    if (uri === this.sessionChangesetUri) this.invalidate('status');
    const state = this.client.mirror.state(uri, 'changeset');
    const turnId = this.turnIdOf(uri);
    if (state && turnId !== undefined && state.status === 'ready') {
      this.turnCounts.set(turnId, countsOf(state));
      this.invalidate('turns');
    }
    if (uri === this.open?.uri) {
      // A file that left the changeset (reverted, discarded) gives its selection to its neighbour.
      if (this.selectedFileId !== undefined && !this.selectedFile) this.reselectAfterRemoval();
      this.invalidate('files', 'toolbar', 'diff', 'chips');
    }
  }

  /** The turn being recorded when the chat last changed. */
  private recordingTurn: string | undefined;

  private lastRows: Row[] = [];

  private reselectAfterRemoval(): void {
    const old = this.lastRows.filter((r) => r.type === 'file').map((r) => r.file.id);
    const at = old.indexOf(this.selectedFileId!);
    const present = new Set((this.changeset?.files ?? []).map((f) => f.id));
    const next = old.slice(at + 1).find((id) => present.has(id)) ?? old.slice(0, Math.max(0, at)).reverse().find((id) => present.has(id));
    this.selectedFileId = next;
  }

  /** Remembers the rows last drawn, to pick a neighbour when the selected file disappears. */
  noteRows(rows: Row[]): void {
    this.lastRows = rows;
  }

  private turnIdOf(uri: URI): string | undefined {
    const entry = this.catalogue.find((c) => c.changeKind === 'turn');
    if (!entry || !this.chat) return undefined;
    return this.chat.turns.find((t) => expandChangesetUri(entry.uriTemplate, { turnId: t.id }) === uri)?.id;
  }

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
    if (method === 'root/sessionAdded') {
      const { summary } = params as SessionAddedParams;
      this.sessions.set(summary.resource, summary);
      this.invalidate('sessions');
      if (this.sessionUri === undefined) void this.selectSession(summary.resource);
    } else if (method === 'root/sessionRemoved') {
      const { session } = params as SessionRemovedParams;
      this.sessions.delete(session);
      if (session === this.sessionUri) {
        this.leaveSession();
        this.invalidate('turns', 'chips', 'toolbar', 'files', 'diff');
      }
      this.invalidate('sessions');
    } else if (method === 'root/sessionSummaryChanged') {
      const { session, changes } = params as SessionSummaryChangedParams;
      const known = this.sessions.get(session);
      if (known) this.sessions.set(session, { ...known, ...changes });
      this.invalidate('sessions');
    }
  }
}

/** The session state's timeline figures (`_meta`), when the server sent them. */
export function timelineOf(session: SessionState | undefined): Partial<TimelineMeta> {
  const meta = session?._meta as Partial<TimelineMeta> | undefined;
  return meta ?? {};
}

/** A turn's counts: from its opened changeset, else from the session state. */
export function turnCountsOf(app: App, turnId: string): Counts | undefined {
  const opened = app.turnCounts.get(turnId);
  if (opened) return opened;
  const stats = timelineOf(app.session).turns?.[turnId];
  return stats ? { files: stats.files, additions: stats.added, deletions: stats.deleted, truncated: false } : undefined;
}

/** The first line of a message, for list labels. */
export function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n', 1)[0]!.trim();
}
