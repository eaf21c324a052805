/**
 * What one file of the review page draws: its sticky header (collapse
 * toggle, kind, path, counts, a differing "Viewed" elsewhere, its
 * operations, "Viewed") and its fixed-height body rows (lines or line
 * pairs with highlighted code under word marks, hunk headers with their
 * operations, unchanged gaps to expand, notes).
 */
import type { ChangesetFile, URI } from '../../../protocol/index.js';
import type { App } from '../app.js';
import { codeNodes } from '../code-cell.js';
import { hunkRange, type DiffLine } from '../diff-model.js';
import { h } from '../dom.js';
import { fileOperations, lineCounts, renamedFrom, resourceOf, revertedBadge } from '../file-header-parts.js';
import { displayPathOf, kindOf, type FileMeta, type FileRow } from '../files-model.js';
import { tokensOf } from '../highlight/highlighter.js';
import { operationButton, operationsFor } from '../operations.js';
import { pathLabel } from '../path-label.js';
import { viewedElsewhere } from '../viewed.js';
import { fileHabits } from '../history/file-history.js';
import type { FileDiffEntry } from './diff-store.js';
import type { BodyRow, RowPart } from './review-rows.js';
import type { CommentStore } from '../comments/comment-store.js';
import { commentBlock, composerBlock } from '../comments/comment-rows.js';
import { blameToggle } from '../blame/blame-gutter.js';

/** What drawing a file needs from the page. */
export interface SectionHost {
  readonly app: App;
  /** Records the reader's choice to collapse or expand a file; undefined forgets it (viewed files collapse again). */
  chooseCollapsed(fileId: string, collapsed: boolean | undefined): void;
  /** The session's review comments. */
  readonly comments: CommentStore;
  /** Height of one body row in CSS pixels. */
  readonly rowHeight: number;
  /** Expands an unchanged gap of a file. */
  expand(file: ChangesetFile, entry: FileDiffEntry, index: number): Promise<void>;
}

const SIGN = { add: '+', del: '−', context: ' ' } as const;

/** A file's header, which sticks to the top of the page while its rows scroll under it. */
export function fileHeader(host: SectionHost, channel: URI, row: FileRow, collapsed: boolean): HTMLElement {
  const app = host.app;
  const file = row.file;
  const meta = row.meta as FileMeta;
  const kind = kindOf(file);
  return h(
    'header',
    { class: 'rv-header' },
    h(
      'button',
      {
        type: 'button',
        class: 'rv-toggle',
        'aria-expanded': String(!collapsed),
        'aria-label': `${collapsed ? 'Expand' : 'Collapse'} ${row.path}`,
        'data-focus-key': `rv-toggle:${file.id}`,
        onclick: () => {
          host.chooseCollapsed(file.id, !collapsed);
          app.invalidate('diff');
        },
      },
      collapsed ? '▸' : '▾',
    ),
    h('span', { class: `kind kind-${kind}` }, kind),
    h(
      'button',
      {
        type: 'button',
        class: 'rv-path',
        title: meta.oldPath ? `${meta.oldPath} → ${row.path}` : row.path,
        'data-focus-key': `rv-path:${file.id}`,
        onclick: () => app.selectFile(file.id),
      },
      renamedFrom(meta, row.path),
      pathLabel(row.path),
    ),
    lineCounts(file, meta),
    openComments(host.comments.openCount(row.path)),
    viewedElsewhere(app, file),
    fileHabits(app, channel, file),
    blameToggle(app, file),
    fileOperations(app, channel, file, row.path, `Operations on ${row.path}`),
    app.open?.reviewable
      ? h(
          'label',
          { class: 'viewed-toggle', title: 'Viewed' },
          h('input', {
            type: 'checkbox',
            class: 'rv-viewed',
            checked: file.reviewed === true,
            'aria-label': `Viewed ${row.path}`,
            'data-focus-key': `rv-viewed:${file.id}`,
            onchange: (e: Event) => {
              host.chooseCollapsed(file.id, undefined);
              app.setViewed(file.id, (e.target as HTMLInputElement).checked);
            },
          }),
          'Viewed',
        )
      : null,
  );
}

/** One fixed-height row of a file's body. */
export function bodyRow(host: SectionHost, channel: URI, file: ChangesetFile, entry: FileDiffEntry, row: BodyRow): HTMLElement {
  switch (row.type) {
    case 'line': {
      const { line, part } = row;
      const more = part !== undefined && !part.first;
      return h(
        'div',
        { class: ['rl', line.kind, more && 'wrapped', linked(host.app, file, line, line) && 'linked'], role: 'row' },
        more ? [blankNum(line.kind), blankNum(line.kind)] : [num(line.oldNo, line.kind, 'L'), num(line.newNo, line.kind, 'R')],
        code(line, part),
      );
    }
    case 'pair':
      return h(
        'div',
        { class: ['rl', 'pair', linked(host.app, file, row.left, row.right) && 'linked'], role: 'row' },
        side(row.left, row.leftPart, 'L'),
        side(row.right, row.rightPart, 'R'),
      );
    case 'hunk': {
      const hk = row.hunk.hunk;
      const ranged = operationsFor(host.app.changeset?.operations, 'range');
      const resource = resourceOf(file);
      const path = displayPathOf(file);
      return h(
        'div',
        { class: 'rl hunk-row', role: 'row', 'data-hunk': String(row.index) },
        h(
          'span',
          { class: 'hunk-range' },
          `@@ -${hk.oldLines === 0 ? hk.oldStart - 1 : hk.oldStart},${hk.oldLines} +${hk.newLines === 0 ? hk.newStart - 1 : hk.newStart},${hk.newLines} @@`,
        ),
        hk.reverted
          ? revertedBadge()
          : ranged.length > 0 && file.edit.after
            ? h(
                'span',
                { class: 'ops', role: 'group', 'aria-label': `Hunk ${row.index + 1} operations` },
                ranged.map((op) =>
                  operationButton(host.app, channel, op, {
                    target: { kind: 'range', resource, side: 'after', range: hunkRange(hk) },
                    what: `hunk ${row.index + 1} of ${path}`,
                    compact: true,
                  }),
                ),
              )
            : null,
      );
    }
    case 'gap': {
      const label = row.gap.count === undefined ? 'Show the rest of the file' : `Expand ${row.gap.count} unchanged ${row.gap.count === 1 ? 'line' : 'lines'}`;
      return h(
        'div',
        { class: 'rl gap-row', role: 'row' },
        h(
          'button',
          { type: 'button', class: 'expand', 'data-focus-key': `rv-gap:${file.id}:${row.index}`, onclick: () => void host.expand(file, entry, row.index) },
          '⋯ ',
          label,
        ),
      );
    }
    case 'note':
      return h('div', { class: ['rl', 'note-row', row.tone === 'error' && 'error'], role: row.tone === 'error' ? 'alert' : 'row' }, row.text);
    case 'comment':
      return commentBlock(host.comments, row.placed, row.span, host.rowHeight);
    case 'composer':
      return composerBlock(host.comments, row.span, host.rowHeight);
  }
}

/** The count of a file's open review comments, in its header. */
function openComments(n: number): HTMLElement | null {
  if (n === 0) return null;
  const words = `${n} open ${n === 1 ? 'comment' : 'comments'}`;
  return h('span', { class: 'comment-count', title: words }, `${n} ${n === 1 ? 'comment' : 'comments'}`);
}

/** Whether a row shows the line the address links. */
function linked(app: App, file: ChangesetFile, left: DiffLine | undefined, right: DiffLine | undefined): boolean {
  const link = app.selectedLine;
  if (link === undefined || file.id !== app.selectedFileId) return false;
  const n = Number(link.slice(1));
  return link[0] === 'L' ? left?.oldNo === n : right?.newNo === n;
}

function num(n: number | undefined, kind: string, side: 'L' | 'R'): HTMLElement {
  if (n === undefined) return h('span', { class: `num ${kind}`, role: 'cell' });
  // The "+" that opens a comment on the line (shown on hover and focus; Shift+click stretches the comment to more lines).
  const side_ = side === 'L' ? 'old' : 'new';
  return h(
    'span',
    { class: `num ${kind}`, 'data-line': `${side}${n}`, role: 'cell' },
    h(
      'button',
      {
        type: 'button',
        class: 'add-comment',
        'data-comment-line': `${side}${n}`,
        'aria-label': `Comment on ${side_} line ${n}`,
        title: 'Comment on this line',
      },
      '+',
    ),
    String(n),
  );
}

/** The number cell of a wrapped line's later rows: the line's colour, no number to link. */
function blankNum(kind: string): HTMLElement {
  return h('span', { class: `num ${kind}`, role: 'cell' });
}

/** One side of a side-by-side row: the line (or part of it), blank in its colour past its last part, or empty. */
function side(line: DiffLine | undefined, part: RowPart | null | undefined, which: 'L' | 'R'): HTMLElement[] {
  if (!line) return [h('span', { class: 'num empty' }), h('span', { class: 'code empty' })];
  if (part === null) return [blankNum(line.kind), h('span', { class: `code ${line.kind}`, role: 'cell' })];
  const more = part !== undefined && !part.first;
  return [more ? blankNum(line.kind) : num(which === 'L' ? line.oldNo : line.newNo, line.kind, which), code(line, part)];
}

/** A line's code cell, or the part of it one row of a wrapped line shows (later parts hang under the first's text). */
function code(line: DiffLine, part?: RowPart): HTMLElement {
  const first = part === undefined || part.first;
  const cell = h('span', { class: `code ${line.kind}`, role: 'cell' }, h('span', { class: 'sign', 'aria-hidden': 'true' }, first ? SIGN[line.kind] : ' '));
  cell.append(...codeNodes(line.text, line.words, line.kind, tokensOf(line), part?.from, part?.to));
  if (line.noNewline && (part === undefined || part.to === line.text.length))
    cell.append(h('span', { class: 'no-newline', title: 'No newline at end of file' }, ' ⏎̸'));
  return cell;
}
