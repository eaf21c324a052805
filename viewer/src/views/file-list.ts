/**
 * The file list, virtualised: rows have one fixed height, a spacer gives the
 * scroll area its full height, and only the rows in (and just around) the
 * viewport exist in the DOM, so a 5,000-file changeset scrolls as smoothly
 * as a 5-file one.
 */
import type { App } from '../app.js';
import { byId, h, replaceChildren } from '../dom.js';
import type { FileRow, Row } from '../files-model.js';
import { heldByPress } from '../press-hold.js';
import { ScrollBox } from '../scroll-box.js';

/** Height of every row in CSS pixels (matches `.row` in the stylesheet). */
const ROW_HEIGHT = 28;
/** Rows drawn above and below the viewport so fast scrolling does not show blanks. */
const OVERSCAN = 8;

const KIND_LABEL: Record<string, string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', mode: 'T' };

/** The virtual list of the open changeset's files. */
export class FileListView {
  private readonly scroller = byId('files');
  private readonly spacer = h('div', { class: 'spacer' });
  private readonly window = h('div', { class: 'rows' });
  private rows: Row[] = [];
  private scheduled = false;
  private lastSelected: string | undefined;
  /** The list's position and size, known without reading them from the page. */
  private readonly box: ScrollBox;

  constructor(private readonly app: App) {
    this.scroller.append(this.spacer);
    this.spacer.append(this.window);
    this.box = new ScrollBox(
      this.scroller,
      () => this.schedule(),
      () => this.schedule(),
    );
  }

  /** Re-reads the rows and draws the visible slice; scrolls a newly selected file into view. */
  render(): void {
    this.rows = this.app.rows;
    this.app.noteRows(this.rows);
    this.spacer.style.height = `${this.rows.length * ROW_HEIGHT}px`;
    this.box.clamp(this.maxTop());
    const selected = this.app.selectedFileId;
    if (selected !== this.lastSelected) {
      this.lastSelected = selected;
      if (selected !== undefined) this.reveal(selected);
    }
    this.draw();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      if (heldByPress(() => this.schedule())) return;
      this.draw();
    });
  }

  /** Scrolls the minimum needed to show a file's row. */
  private reveal(fileId: string): void {
    const index = this.rows.findIndex((r) => r.type === 'file' && r.file.id === fileId);
    if (index < 0) return;
    const top = index * ROW_HEIGHT;
    const view = this.box.viewHeight;
    if (top < this.box.top) this.box.scrollTo(top - ROW_HEIGHT, this.maxTop());
    else if (top + ROW_HEIGHT > this.box.top + view) this.box.scrollTo(top + 2 * ROW_HEIGHT - view, this.maxTop());
  }

  private maxTop(): number {
    return Math.max(0, this.rows.length * ROW_HEIGHT - this.box.viewHeight);
  }

  private draw(): void {
    const state = this.app.changeset;
    if (!this.app.open || !state) {
      replaceChildren(this.window, h('div', { class: 'empty' }, this.app.open ? 'Loading…' : 'Pick a changeset or a turn.'));
      return;
    }
    if (this.rows.length === 0) {
      replaceChildren(this.window, h('div', { class: 'empty' }, state.status === 'computing' ? 'Computing…' : 'No changed files.'));
      return;
    }
    const first = Math.max(0, Math.floor(this.box.top / ROW_HEIGHT) - OVERSCAN);
    const count = Math.ceil(this.box.viewHeight / ROW_HEIGHT) + 2 * OVERSCAN;
    const last = Math.min(this.rows.length, first + count);
    this.window.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    const fileCount = state.files.length;
    const drawn: HTMLElement[] = [];
    let position = 0;
    for (let i = 0; i < first; i++) if (this.rows[i]!.type === 'file') position++;
    for (let i = first; i < last; i++) {
      const row = this.rows[i]!;
      if (row.type === 'dir') drawn.push(h('div', { class: 'row dir', role: 'presentation', title: row.dir || '(top level)' }, row.dir ? `${row.dir}/` : './'));
      else drawn.push(this.fileRow(row, ++position, fileCount));
    }
    replaceChildren(this.window, drawn);
  }

  private fileRow(row: FileRow, position: number, size: number): HTMLElement {
    const app = this.app;
    const selected = row.file.id === app.selectedFileId;
    const { meta } = row;
    const placeholder = meta.binary ? 'binary' : meta.oversized ? 'too large' : undefined;
    const reviewable = app.open?.reviewable === true;
    return h(
      'div',
      {
        class: ['row', 'file', selected && 'selected', row.file.reviewed && 'viewed'],
        role: 'listitem',
        'aria-setsize': String(size),
        'aria-posinset': String(position),
        'data-path': row.path,
      },
      reviewable
        ? h('input', {
            type: 'checkbox',
            class: 'viewed-box',
            checked: row.file.reviewed === true,
            'aria-label': `Viewed ${row.path}`,
            title: 'Viewed (v)',
            'data-focus-key': `viewed:${row.file.id}`,
            onchange: (e: Event) => app.setViewed(row.file.id, (e.target as HTMLInputElement).checked),
          })
        : null,
      h(
        'button',
        {
          type: 'button',
          class: 'file-open',
          'aria-current': selected ? 'true' : undefined,
          title: meta.oldPath ? `${meta.oldPath} → ${row.path}` : row.path,
          'data-focus-key': `file:${row.file.id}`,
          onclick: () => app.selectFile(row.file.id),
        },
        h('span', { class: `kind kind-${row.kind}`, title: row.kind, 'aria-label': row.kind }, KIND_LABEL[row.kind] ?? '?'),
        h('span', { class: 'name' }, row.name),
        placeholder
          ? h('span', { class: 'placeholder' }, placeholder)
          : h('span', { class: 'counts' }, h('span', { class: 'plus' }, `+${row.added ?? 0}`), ' ', h('span', { class: 'minus' }, `−${row.removed ?? 0}`)),
      ),
    );
  }
}
