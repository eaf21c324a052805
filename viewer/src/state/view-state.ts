/**
 * What the viewer shows: the selected session, the open changeset, the
 * selected file and line, the filter, the diff display, the notice — and
 * what follows from them (the mirrored states, the file rows). Changing a
 * part of it re-renders the parts of the page that show it, once per frame.
 * How it changes with the user's navigation and the server's messages is
 * `App`'s job.
 */
import type { Changeset, ChangesetFile, ChangesetState, ChatState, SessionState, SessionSummary, URI } from '../../../protocol/index.js';
import type { ViewerClient } from '../client.js';
import { Emitter } from '../events.js';
import type { Counts, Row } from '../files-model.js';
import { NO_FILTER, type FileFilter } from '../review/filter.js';
import { isStatic, type OpenChangeset } from './changeset-views.js';
import { AllFiles } from './all-files.js';
import { DiffDisplay } from './display.js';
import { FileRows } from './file-rows.js';
import { RenderQueue, type Part } from './render-queue.js';
import { SessionList } from './session-list.js';

/** The longest work deferred until a view's first screen waits for that screen's diffs. */
const FIRST_SCREEN_MAX_MS = 3000;

/** Runs `task` when the page is next idle, or within 0.5 s. */
function whenIdle(task: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(task, { timeout: 500 });
  else setTimeout(task, 50);
}

/** Something for the user to read: an operation's outcome, a refused review tick, a failure. */
export interface Notice {
  /** How to present it. */
  tone: 'info' | 'error';
  /** The text. */
  text: string;
  /** Offers the session changeset's `undo` next to the notice. */
  offerUndo?: boolean;
  /** Offers the session changeset's `redo` next to the notice (after an undo). */
  offerRedo?: boolean;
}

/** The viewer's state. */
export class ViewState {
  protected readonly sessionList: SessionList;
  private readonly renders = new RenderQueue();
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
  /** How diffs are drawn. */
  readonly display = new DiffDisplay((...parts) => this.invalidate(...parts));
  /** Which files the list and the review page show. */
  filter: FileFilter = NO_FILTER;
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

  protected readonly fileRows = new FileRows();
  /** Every file of the open changeset, also past what its state carries. */
  readonly allFiles: AllFiles;

  constructor(readonly client: ViewerClient) {
    this.sessionList = new SessionList(client);
    this.allFiles = new AllFiles(client, (task) => this.afterFirstScreen(task));
  }

  /** Registers the function that draws one part of the page. */
  renderer(part: Part, render: () => void): void {
    this.renders.renderer(part, render);
  }

  /** Schedules parts for re-rendering on the next animation frame. */
  invalidate(...parts: Part[]): void {
    this.renders.invalidate(parts);
  }

  /** Draws nothing until `ready` settles or `maxMs` passed (what the next frame would show is about to arrive). */
  holdRendering(ready: Promise<unknown>, maxMs: number): void {
    this.renders.hold(ready, maxMs);
  }

  /** Tasks waiting for the open view's screen to be drawn with its diffs. */
  private waitingForScreen: (() => void)[] = [];

  /**
   * A view drew the open changeset's screen; `complete` when every diff it
   * shows was in (or there is none to show): what {@link afterFirstScreen}
   * waits for.
   */
  screenDrawn(complete: boolean): void {
    if (!complete || this.waitingForScreen.length === 0) return;
    const waiting = this.waitingForScreen;
    this.waitingForScreen = [];
    for (const start of waiting) start();
  }

  /**
   * Runs `task` once the open view's screen is drawn with its diffs (at
   * most {@link FIRST_SCREEN_MAX_MS} from now), when the page is next idle:
   * for what the first screen does not show — the rest of a cut
   * changeset's files, the session's other changesets. Asked for as soon
   * as the page was idle instead, they went out while it waited for the
   * first screen's diffs, and those diffs then waited behind them: in the
   * server, and on the socket (up to 800 KB a changeset).
   */
  afterFirstScreen(task: () => void): void {
    let started = false;
    const start = (): void => {
      if (started) return;
      started = true;
      // The frame that shows the diffs is painted first, then the task runs in the idle time after it.
      requestAnimationFrame(() => setTimeout(() => whenIdle(task), 0));
    };
    this.waitingForScreen.push(start);
    setTimeout(start, FIRST_SCREEN_MAX_MS);
  }

  /** Known sessions, by URI. */
  get sessions(): ReadonlyMap<URI, SessionSummary> {
    return this.sessionList.byUri;
  }

  /** Shows a notice. */
  say(notice: Notice): void {
    this.notice = notice;
    this.invalidate('status');
  }

  /**
   * Changes whenever the files of today may have changed under a recorded
   * diff: an action of the user (revert, restore, undo, from any client) or
   * a turn. Diffs are kept under it, so they are asked for again: a hunk a
   * revert took back then comes marked `reverted`.
   */
  get diffEpoch(): string {
    const actions = (this.session?._meta as { userActions?: { at: string }[] } | undefined)?.userActions ?? [];
    return `${actions.length}:${actions[actions.length - 1]?.at ?? ''}:${this.chat?.turns.length ?? 0}`;
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

  /** The open changeset's state, when mirrored, with every file once they are loaded (past the state's cap too). */
  get changeset(): ChangesetState | undefined {
    return this.open ? this.allFiles.state(this.open.uri) : undefined;
  }

  /** The URI of the selected session's session-wide changeset (where `undo` lives). */
  get sessionChangesetUri(): URI | undefined {
    const entry = this.catalogue.find((c) => c.changeKind === 'session' && isStatic(c));
    return entry?.uriTemplate;
  }

  /** Rows of the open changeset's file list that pass the filter. */
  get rows(): Row[] {
    return this.fileRows.of(this.changeset?.files ?? [], this.filter);
  }

  /** Narrows the file list and the review page. */
  setFilter(filter: FileFilter): void {
    this.filter = filter;
    this.invalidate('files', 'diff', 'toolbar');
  }

  /** Remembers the rows last drawn, to pick a neighbour when the selected file disappears. */
  noteRows(rows: Row[]): void {
    this.fileRows.note(rows);
  }

  /** The selected file, when it is in the open changeset. */
  get selectedFile(): ChangesetFile | undefined {
    const id = this.selectedFileId;
    return id === undefined ? undefined : this.changeset?.files.find((f) => f.id === id);
  }

  /** Sessions, most recently modified first. */
  sortedSessions(): SessionSummary[] {
    return this.sessionList.sorted();
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
}
