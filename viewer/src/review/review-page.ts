/**
 * The review page: every file of the open changeset on one scrolling page,
 * each under a header that sticks to the top while its diff scrolls by.
 * Virtualised twice over: only the files on screen are in the page, and of
 * a long file only the rows on screen. Every body row is one line tall, so
 * a file's height is known from its row count (estimated from its `+` / `−`
 * counts until its diff arrives), offsets are a prefix sum, and the page
 * keeps the file under the reader's eye in place when heights above change.
 * Viewed files collapse to their header.
 */
import type { ChangesetFile, URI } from '../../../protocol/index.js';
import type { App } from '../app.js';
import { afterPaint, h, replaceChildren } from '../dom.js';
import { displayPathOf, type FileRow } from '../files-model.js';
import { highlightHunks } from '../highlight/highlighter.js';
import { heldByPress } from '../press-hold.js';
import { ScrollBox } from '../scroll-box.js';
import { DiffStore, type FileDiffEntry } from './diff-store.js';
import { bodyRow, fileHeader, type SectionHost } from './file-section.js';
import { markBlame } from '../blame/blame-gutter.js';
import { bodyRows, estimateRows, rowOfLine, type BodyRow } from './review-rows.js';
import { commentsOf, type CommentStore } from '../comments/comment-store.js';
import { withComments } from '../comments/comment-rows.js';

/** Height of one body row in CSS pixels (matches `--line` in the stylesheet). */
const LINE_HEIGHT = 20;
/** Height of a file header in CSS pixels (matches `--file-header`). */
const HEADER_HEIGHT = 38;
/** Rows drawn beyond the viewport on each side. */
const OVERSCAN_ROWS = 12;
/** Width of a line-number column (matches `.rl` in the stylesheet). */
const NUM_WIDTH = 52;
/** A code cell's horizontal padding and its +/− sign (`0 8px` and `1.2em` of 12 px). */
const CODE_CHROME = 16 + 14.4;
/** Characters in the probe that measures the code font. */
const PROBE_CHARS = 100;
/** The longest a newly opened changeset's first frame waits for the diffs it shows. */
const FIRST_SCREEN_WAIT_MS = 100;

interface Layout {
  files: FileRow[];
  offsets: Float64Array;
  rows: (BodyRow[] | undefined)[];
  /** Characters of code per row. */
  columns: number;
}

/** The all-files review page inside the diff pane. */
export class ReviewPage implements SectionHost {
  readonly store: DiffStore;
  readonly comments: CommentStore;
  readonly rowHeight = LINE_HEIGHT;
  readonly scroller = h('div', { class: 'review', id: 'review', tabindex: '-1', 'aria-label': 'All changed files' });
  private readonly canvas = h('div', { class: 'review-canvas' });
  /** A run of the code font's characters, measured once to know how many fit in a code column. */
  private readonly probe = h('span', { class: 'char-probe', 'aria-hidden': 'true' }, '0'.repeat(PROBE_CHARS));
  private charWidth = 0;
  private layout: Layout = { files: [], offsets: new Float64Array(1), rows: [], columns: Infinity };
  /** Files whose collapse state the reader chose, overriding "viewed collapses". */
  private readonly collapsedChoice = new Map<string, boolean>();
  private shownPick = -1;
  /** The scroller's position and size, known without reading them from the page. */
  private readonly box: ScrollBox;
  private pendingLine: string | undefined;
  private scheduled = false;
  private readonly rowsCache = new WeakMap<FileDiffEntry, { key: string; rows: BodyRow[] }>();

  constructor(readonly app: App) {
    this.store = new DiffStore(app);
    this.comments = commentsOf(app);
    this.store.onLoaded = (file, entry) => {
      app.invalidate('diff');
      // Colours come after the lines are on screen: starting the highlighter (a worker and its grammar) waits for the paint.
      const hunks = entry.hunks;
      if (hunks) afterPaint(() => void highlightHunks(displayPathOf(file), hunks).then((done) => done && app.invalidate('diff')));
    };
    this.scroller.append(this.canvas, this.probe);
    // A line number's "+" opens the box to comment on the line (Shift: stretches an open box to it).
    this.scroller.addEventListener('click', (event) => {
      const plus = (event.target as HTMLElement).closest<HTMLElement>('.add-comment');
      const section = plus?.closest<HTMLElement>('.rv-file');
      const link = plus?.dataset['commentLine'];
      if (!plus || !section || link === undefined) return;
      event.stopImmediatePropagation();
      this.comments.startOnLine(
        section.dataset['fileId']!,
        section.dataset['path']!,
        link[0] === 'L' ? 'before' : 'after',
        Number(link.slice(1)),
        event.shiftKey,
      );
    });
    // Line numbers are links: clicking one puts the line in the address.
    this.scroller.addEventListener('click', (event) => {
      const cell = (event.target as HTMLElement).closest<HTMLElement>('.num[data-line]');
      const id = cell?.closest<HTMLElement>('.rv-file')?.dataset['fileId'];
      if (cell && id !== undefined) app.selectFile(id, 'pick', cell.dataset['line']);
    });
    this.box = new ScrollBox(
      this.scroller,
      () => this.schedule(),
      () => {
        // Layout is up to date while resize observers run: measuring here forces none.
        if (this.charWidth === 0) this.measureFont();
        this.schedule();
      },
    );
    // A changeset's first screen of diffs is asked for the moment its files are known, before anything is drawn.
    app.client.on('channel', (uri) => {
      if (uri === app.open?.uri) queueMicrotask(() => this.prefetch());
    });
    app.events.on('navigate', () => queueMicrotask(() => this.prefetch()));
  }

  private measureFont(): void {
    this.charWidth = this.probe.getBoundingClientRect().width / PROBE_CHARS;
  }

  /** How many characters of code fit on one row in the current layout (lines wider wrap onto more rows). */
  private columns(): number {
    if (this.charWidth === 0) this.measureFont();
    const width = this.box.width || this.scroller.clientWidth;
    const code = this.app.display.effectiveMode === 'split' ? (width - 2 * NUM_WIDTH) / 2 - 1 : width - 2 * NUM_WIDTH;
    return this.charWidth > 0 ? Math.floor((code - CODE_CHROME) / this.charWidth) : Infinity;
  }

  private get viewHeight(): number {
    return this.box.viewHeight;
  }

  /**
   * Queues the diffs of the files the next draw will show, so their requests
   * travel while the page lays out the file list and the first frame, instead
   * of after it. Only for a changeset not drawn yet (or a file just picked):
   * otherwise the reader's position is what the last draw showed.
   */
  private prefetch(): void {
    const open = this.app.open;
    const state = this.app.changeset;
    if (this.app.display.layout !== 'all' || !open || !state || state.files.length === 0) return;
    const picked = this.pickPending();
    if (open.uri === this.shownUri && !picked) return;
    const layout = this.computeLayout();
    const selected = this.app.selectedFileId;
    const top = picked && selected !== undefined ? (this.fileTop(layout, selected, this.app.selectedLine) ?? 0) : 0;
    const onScreen = this.wantRange(open.uri, layout, top, top + this.viewHeight).filter((entry) => !entry.diff && !entry.error);
    // A changeset's first frame waits for its diffs, a round trip away, rather than being drawn twice (a pick within a
    // changeset on screen is drawn at once: the reader's click shows without waiting).
    if (onScreen.length > 0 && open.uri !== this.shownUri) this.app.holdRendering(Promise.all(onScreen.map((entry) => entry.loaded)), FIRST_SCREEN_WAIT_MS);
  }

  /** Whether the reader picked a file (or a link did) that the page has not scrolled to yet. */
  private pickPending(): boolean {
    return this.app.selectedFileId !== undefined && this.app.selectionSource === 'pick' && this.app.picks !== this.shownPick;
  }

  /** Re-lays out the files and draws what is on screen; scrolls to a newly picked file or line. */
  render(pane: HTMLElement): void {
    if (this.scroller.parentElement !== pane) {
      replaceChildren(pane, this.scroller);
      this.box.reattached();
    }
    const anchor = this.anchor();
    this.layout = this.computeLayout();
    // The canvas takes the layout's height before any scrolling: a position past the end of a shorter canvas is cut short.
    this.sizeCanvas();
    this.box.clamp(this.maxTop());
    const selected = this.app.selectedFileId;
    const line = this.app.selectedLine;
    if (this.pickPending()) {
      this.shownPick = this.app.picks;
      this.pendingLine = line;
      this.scrollToFile(selected!, line);
    } else if (this.pendingLine !== undefined && selected !== undefined && this.lineRow(this.layout, selected, this.pendingLine) >= 0) {
      this.scrollToFile(selected, this.pendingLine);
    } else if (this.app.open?.uri !== this.shownUri) this.scrollTo(0);
    else if (anchor) this.restore(anchor);
    this.shownUri = this.app.open?.uri;
    this.draw();
  }

  /** The changeset last drawn: another one starts at the top. */
  private shownUri: URI | undefined;

  /** The file at the top of the screen and how far into it the reader is. */
  private anchor(): { id: string; within: number } | undefined {
    const at = this.indexAt(this.box.top);
    const file = this.layout.files[at];
    return file ? { id: file.file.id, within: this.box.top - this.layout.offsets[at]! } : undefined;
  }

  private restore(anchor: { id: string; within: number }): void {
    const at = this.layout.files.findIndex((f) => f.file.id === anchor.id);
    if (at < 0) return;
    const height = this.layout.offsets[at + 1]! - this.layout.offsets[at]!;
    const top = this.layout.offsets[at]! + Math.min(anchor.within, Math.max(0, height - 1));
    if (Math.abs(top - this.box.top) >= 1) this.scrollTo(top);
  }

  private lineRow(layout: Layout, fileId: string, link: string): number {
    const at = layout.files.findIndex((f) => f.file.id === fileId);
    const rows = layout.rows[at];
    return rows ? rowOfLine(rows, link) : -1;
  }

  /** Where the page scrolls to show a file (and a linked line of it, once its rows are known), or undefined when it is not listed. */
  private fileTop(layout: Layout, fileId: string, line: string | undefined): number | undefined {
    const at = layout.files.findIndex((f) => f.file.id === fileId);
    if (at < 0) return undefined;
    const row = line === undefined ? -1 : this.lineRow(layout, fileId, line);
    return layout.offsets[at]! + (row >= 0 ? HEADER_HEIGHT + row * LINE_HEIGHT - this.viewHeight / 3 : 0);
  }

  private scrollToFile(fileId: string, line: string | undefined): void {
    const top = this.fileTop(this.layout, fileId, line);
    if (top === undefined) return;
    if (line !== undefined && this.lineRow(this.layout, fileId, line) >= 0) this.pendingLine = undefined;
    this.scrollTo(top);
  }

  /** Scrolls without the selection following (the page moved, not the reader). */
  private scrollTo(top: number): void {
    this.ownScrollTop = this.box.scrollTo(top, this.maxTop());
  }

  /** The canvas's height for the current layout: the files and room after the last, so any file (the last one too) can be scrolled to the top. */
  private canvasHeight(): number {
    return this.layout.offsets[this.layout.files.length]! + Math.max(0, this.viewHeight - 2 * HEADER_HEIGHT);
  }

  /**
   * Gives the canvas the current layout's height. The height follows the
   * layout drawn, not the last one computed: a layout computed ahead (for
   * the first screen's diffs) is not on the page until it is drawn.
   */
  private sizeCanvas(height = `${this.canvasHeight()}px`): void {
    if (this.canvas.style.height !== height) this.canvas.style.height = height;
  }

  /** The furthest the page scrolls: the canvas (files and the room after them) less the screen. */
  private maxTop(): number {
    return Math.max(0, this.canvasHeight() - this.viewHeight);
  }

  private ownScrollTop = -1;

  /** Scrolls to the next (`+1`) or previous (`-1`) hunk after the top of the screen; false when there is none. */
  jumpHunk(delta: 1 | -1): boolean {
    const top = this.box.top + 1;
    const { files, offsets, rows } = this.layout;
    const starts: number[] = [];
    const first = Math.max(0, this.indexAt(top) - (delta < 0 ? 3 : 0));
    for (let i = first; i < files.length && i < first + 200; i++) {
      const body = rows[i];
      if (!body || this.isCollapsed(files[i]!.file)) continue;
      body.forEach((r, k) => {
        // The hunk's row lands just under the sticky header.
        if (r.type === 'hunk') starts.push(offsets[i]! + k * LINE_HEIGHT);
      });
    }
    const target = delta > 0 ? starts.find((s) => s > top + 1) : [...starts].reverse().find((s) => s < top - 1);
    if (target === undefined) return false;
    this.scrollTo(target);
    return true;
  }

  /** Brings a line of a file into view without a history entry (a search match): a collapsed file opens, the file is selected. */
  revealLine(fileId: string, link: string): void {
    const row = this.layout.files.find((f) => f.file.id === fileId);
    if (!row) return;
    if (this.isCollapsed(row.file)) this.chooseCollapsed(fileId, false);
    this.app.selectFile(fileId, 'scroll');
    this.layout = this.computeLayout();
    this.sizeCanvas();
    // Until the file's diff is drawn its rows are not known: the page goes to the file, and to the line once they are.
    this.pendingLine = link;
    this.scrollToFile(fileId, link);
    this.draw();
  }

  private isCollapsed(file: ChangesetFile): boolean {
    return this.collapsedChoice.get(file.id) ?? file.reviewed === true;
  }

  /** The last layout computed and what it was computed from; the same inputs give the same layout. */
  private memo: { inputs: unknown[]; layout: Layout } | undefined;
  /** Grows when the reader collapses or expands a file. */
  private collapseVersion = 0;

  private computeLayout(): Layout {
    const open = this.app.open;
    const columns = this.columns();
    const inputs = [
      open?.uri,
      this.app.rows,
      this.store.version,
      this.app.display.effectiveMode,
      this.app.display.context,
      this.collapseVersion,
      this.comments.version,
      this.viewHeight,
      columns,
    ];
    if (this.memo && inputs.every((v, i) => v === this.memo!.inputs[i])) return this.memo.layout;
    const files = this.app.rows.filter((r): r is FileRow => r.type === 'file');
    const offsets = new Float64Array(files.length + 1);
    const rows: (BodyRow[] | undefined)[] = new Array(files.length);
    const lookup = open ? this.store.lookup(open.uri) : () => undefined;
    files.forEach((row, i) => {
      const entry = lookup(row.file);
      // Until its diff arrives a file keeps its estimated height (its first row says it is loading).
      const body = entry && (entry.diff || entry.error) ? this.rowsOf(row.file, entry, columns) : undefined;
      rows[i] = body;
      const count = this.isCollapsed(row.file) ? 0 : body ? body.length : estimateRows(row.file);
      offsets[i + 1] = offsets[i]! + HEADER_HEIGHT + count * LINE_HEIGHT;
    });
    this.memo = { inputs, layout: { files, offsets, rows, columns } };
    return this.memo.layout;
  }

  private rowsOf(file: ChangesetFile, entry: FileDiffEntry, columns: number): BodyRow[] {
    const key = `${this.comments.version}|${this.app.display.effectiveMode}|${columns}|${[...entry.expanded].join(',')}|${entry.text?.length ?? -1}|${entry.diff ? 1 : 0}|${entry.error ?? ''}`;
    const cached = this.rowsCache.get(entry);
    if (cached?.key === key) return cached.rows;
    const path = displayPathOf(file);
    const draft = this.comments.draft;
    const rows = withComments(
      bodyRows(file, entry, this.app.display.effectiveMode, this.app.display.context, columns),
      this.comments.placedOn(path),
      draft?.kind === 'lines' && draft.fileId === file.id ? draft : undefined,
      columns,
    );
    this.rowsCache.set(entry, { key, rows });
    return rows;
  }

  /** The index of the drawn file whose section contains offset `y`. */
  private indexAt(y: number): number {
    return indexAt(this.layout.offsets, this.layout.files.length, y);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      if (heldByPress(() => this.schedule())) return;
      this.draw();
      this.followScroll();
    });
  }

  /** The file at the top of the screen becomes the selection (without a history entry). */
  private followScroll(): void {
    if (Math.abs(this.box.top - this.ownScrollTop) < 1) return;
    const file = this.layout.files[this.indexAt(this.box.top + 1)];
    if (file && file.file.id !== this.app.selectedFileId) {
      this.app.selectFile(file.file.id, 'scroll');
    }
  }

  private draw(): void {
    const app = this.app;
    const open = app.open;
    const state = app.changeset;
    this.comments.follow(app.sessionUri);
    const { files, offsets } = this.layout;
    if (!open || !state || files.length === 0) {
      const text = !open
        ? 'Pick a changeset or a turn.'
        : !state || state.status === 'computing'
          ? 'Computing…'
          : state.files.length > 0
            ? 'No file matches the filter.'
            : 'No changed files.';
      replaceChildren(this.canvas, h('p', { class: 'empty' }, text));
      this.sizeCanvas('');
      app.screenDrawn(!open || (state !== undefined && state.status !== 'computing'));
      return;
    }
    this.sizeCanvas();
    const top = this.box.top;
    const bottom = top + this.viewHeight;
    const sections: HTMLElement[] = [];
    // Whether every file on screen is drawn with its diff (or collapsed, or failed).
    let complete = true;
    for (let i = this.indexAt(top); i < files.length && offsets[i]! < bottom + OVERSCAN_ROWS * LINE_HEIGHT; i++) {
      const row = files[i]!;
      const entry = this.store.want(open.uri, row.file);
      if (offsets[i]! < bottom && !entry.diff && entry.error === undefined && !this.isCollapsed(row.file)) complete = false;
      sections.push(this.section(open.uri, row, entry, offsets[i]!, offsets[i + 1]!, top, bottom));
    }
    this.wantRange(open.uri, this.layout, top, bottom);
    replaceChildren(this.canvas, sections);
    app.screenDrawn(complete);
  }

  /**
   * Fetches the diffs of the files between `top` and `bottom` and the next
   * few after them; forgets queued ones elsewhere. Returns the entries of the
   * files on screen.
   */
  private wantRange(channel: URI, layout: Layout, top: number, bottom: number): FileDiffEntry[] {
    const { files, offsets } = layout;
    const onScreen: FileDiffEntry[] = [];
    let i = indexAt(offsets, files.length, top);
    for (; i < files.length && offsets[i]! < bottom; i++) onScreen.push(this.store.want(channel, files[i]!.file));
    const wanted = new Set(onScreen);
    for (; i < files.length && offsets[i]! < bottom + OVERSCAN_ROWS * LINE_HEIGHT; i++) wanted.add(this.store.want(channel, files[i]!.file));
    // The next few files too, so scrolling down finds them ready.
    for (let n = 0; i < files.length && n < 3; i++, n++) wanted.add(this.store.want(channel, files[i]!.file));
    this.store.dropQueued((entry) => wanted.has(entry));
    return onScreen;
  }

  private section(channel: URI, row: FileRow, entry: FileDiffEntry, start: number, end: number, top: number, bottom: number): HTMLElement {
    const file = row.file;
    const collapsed = this.isCollapsed(file);
    const el = h(
      'section',
      {
        class: ['rv-file', collapsed && 'collapsed', file.id === this.app.selectedFileId && 'selected'],
        'data-path': row.path,
        'data-file-id': file.id,
        'aria-label': row.path,
      },
      fileHeader(this, channel, row, collapsed),
    );
    el.style.top = `${start}px`;
    el.style.height = `${end - start}px`;
    const rows = collapsed ? undefined : this.rowsOf(file, entry, this.layout.columns);
    if (rows) {
      let first = Math.max(0, Math.floor((top - start - HEADER_HEIGHT) / LINE_HEIGHT) - OVERSCAN_ROWS);
      // A comment is drawn whole from its first row.
      while (first > 0 && isLaterPart(rows[first])) first--;
      const last = Math.min(rows.length, Math.ceil((bottom - start - HEADER_HEIGHT) / LINE_HEIGHT) + OVERSCAN_ROWS);
      const split = this.app.display.effectiveMode === 'split';
      const body = h('div', { class: ['rv-body', split ? 'split' : 'unified'], role: 'table', 'aria-label': `Diff of ${row.path}` });
      body.style.top = `${HEADER_HEIGHT + first * LINE_HEIGHT}px`;
      const drawn: HTMLElement[] = [];
      for (let k = first; k < last; k++) if (!isLaterPart(rows[k])) drawn.push(bodyRow(this, channel, file, entry, rows[k]!));
      body.append(...drawn);
      markBlame(this.app, body, channel, file);
      el.append(body);
    }
    return el;
  }

  /** Records the reader's choice to collapse or expand a file (undefined: viewed files collapse again). */
  chooseCollapsed(fileId: string, collapsed: boolean | undefined): void {
    if (collapsed === undefined) this.collapsedChoice.delete(fileId);
    else this.collapsedChoice.set(fileId, collapsed);
    this.collapseVersion++;
  }

  /** Expands an unchanged gap of a file from its text. */
  async expand(file: ChangesetFile, entry: FileDiffEntry, index: number): Promise<void> {
    if (!(await this.store.readText(file, entry))) return;
    entry.expanded.add(index);
    this.store.version++;
    this.app.invalidate('diff');
  }
}

/** A row a comment's (or the comment box's) first row draws. */
function isLaterPart(row: BodyRow | undefined): boolean {
  return (row?.type === 'comment' || row?.type === 'composer') && row.part > 0;
}

/** The index of the file (of `count`) whose section, by its prefix-sum `offsets`, contains offset `y`. */
function indexAt(offsets: Float64Array, count: number, y: number): number {
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= y) lo = mid;
    else hi = mid - 1;
  }
  return Math.max(0, lo);
}
