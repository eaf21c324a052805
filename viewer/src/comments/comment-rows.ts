/**
 * Review comments in a file's diff: placed under the last line they point
 * at (as GitHub does), each a block some rows tall so the page's fixed-row
 * layout still knows every offset; the box to write one sits under the
 * lines it is for. A comment whose lines are not on screen (in a folded
 * gap, or gone) comes first in the file.
 */
import type { ReviewComment } from '../../../protocol/extensions/comments.js';
import type { DiffLine } from '../diff-model.js';
import { formatTime, h } from '../dom.js';
import type { BodyRow, RowPart } from '../review/review-rows.js';
import type { CommentStore, Placed } from './comment-store.js';

/** Rows of the box to write a comment (label, text box, buttons). */
const COMPOSER_ROWS = 6;
/** Most lines of outdated code shown with a comment. */
const MAX_CODE_LINES = 6;

/** How many rows a comment's block takes for a code column of `columns` characters. */
function spanOf(placed: Placed, columns: number): number {
  const c = placed.comment;
  const width = Number.isFinite(columns) && columns > 20 ? columns : 80;
  let body = 0;
  for (const line of c.body.split('\n')) body += Math.max(1, Math.ceil(line.length / width));
  const code = placed.outdated ? Math.min(c.code?.length ?? 0, MAX_CODE_LINES) : 0;
  const resolution = c.resolution ? 1 : 0;
  // Header, body, outdated code, resolution, buttons, and a little room.
  return 1 + body + code + resolution + 1 + 1;
}

/** Whether a drawn row ends a line of `side` numbered `n` (the last part of a wrapped line). */
function endsLine(row: BodyRow, side: 'before' | 'after', n: number): boolean {
  const is = (line: DiffLine | undefined, part: RowPart | null | undefined): boolean =>
    line !== undefined && part !== null && (part === undefined || part.to === line.text.length) && (side === 'before' ? line.oldNo === n : line.newNo === n);
  if (row.type === 'line') return (side === 'before' ? row.line.kind !== 'add' : row.line.kind !== 'del') && is(row.line, row.part);
  if (row.type === 'pair') return side === 'before' ? is(row.left, row.leftPart) : is(row.right, row.rightPart);
  return false;
}

/** The file's rows with its comments (and the box being written, when it is on this file) under their lines. */
export function withComments(rows: BodyRow[], placed: Placed[], draft: { side: 'before' | 'after'; endLine: number } | undefined, columns: number): BodyRow[] {
  if (placed.length === 0 && !draft) return rows;
  const after = new Map<number, BodyRow[]>();
  const first: BodyRow[] = [];
  const block = (p: Placed): BodyRow[] => {
    const span = spanOf(p, columns);
    return Array.from({ length: span }, (_, part) => ({ type: 'comment', placed: p, part, span }) as BodyRow);
  };
  const at = (side: 'before' | 'after', line: number): number => {
    for (let i = rows.length - 1; i >= 0; i--) if (endsLine(rows[i]!, side, line)) return i;
    return -1;
  };
  for (const p of placed) {
    const i = p.atTop ? -1 : at(p.side, p.endLine);
    const list = i < 0 ? first : (after.get(i) ?? after.set(i, []).get(i)!);
    list.push(...block(p));
  }
  const composer = Array.from({ length: COMPOSER_ROWS }, (_, part) => ({ type: 'composer', part, span: COMPOSER_ROWS }) as BodyRow);
  if (draft) {
    const i = at(draft.side, draft.endLine);
    const list = i < 0 ? first : (after.get(i) ?? after.set(i, []).get(i)!);
    list.push(...composer);
  }
  const out: BodyRow[] = [...first];
  rows.forEach((row, i) => {
    out.push(row);
    const more = after.get(i);
    if (more) out.push(...more);
  });
  return out;
}

/** "line 4" or "lines 4–6". */
export function linesLabel(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}

/** Who resolved a comment, in words. */
export function resolvedWords(c: ReviewComment): string {
  const r = c.resolution;
  if (!r) return 'Resolved';
  const who = r.by === 'agent' ? 'Resolved by the agent' : 'Resolved by the reviewer';
  return r.note ? `${who}: ${r.note}` : who;
}

/** A comment's header: author, time, turn, lines, and its state. */
export function commentHead(c: ReviewComment, where: string | undefined, outdated: boolean): HTMLElement {
  const time = new Date(c.createdAt).toISOString();
  return h(
    'div',
    { class: 'comment-head' },
    h('strong', { class: 'comment-author' }, c.author),
    h('time', { datetime: time, title: `Written ${formatTime(time)}` }, formatTime(time)),
    c.turn !== undefined ? h('span', { class: 'comment-turn' }, `turn ${c.turn}`) : null,
    where ? h('span', { class: 'comment-where' }, where) : null,
    outdated ? h('span', { class: 'comment-badge outdated', title: 'Later changes removed or rewrote the lines this comment is on' }, 'outdated') : null,
    c.state === 'resolved' ? h('span', { class: 'comment-badge resolved' }, 'resolved') : null,
  );
}

/** The buttons under a comment. */
export function commentActions(store: CommentStore, c: ReviewComment): HTMLElement {
  return h(
    'div',
    { class: 'comment-actions' },
    c.state === 'open'
      ? h('button', { type: 'button', class: 'comment-resolve', onclick: () => void store.act(c, 'resolve') }, 'Resolve')
      : h('button', { type: 'button', class: 'comment-reopen', onclick: () => void store.act(c, 'reopen') }, 'Reopen'),
    h('button', { type: 'button', class: 'comment-delete', onclick: () => void store.act(c, 'delete') }, 'Delete'),
  );
}

/** A comment's block under its lines. */
export function commentBlock(store: CommentStore, placed: Placed, span: number, rowHeight: number): HTMLElement {
  const c = placed.comment;
  const el = h(
    'div',
    {
      class: ['comment', c.state, placed.outdated && 'outdated'],
      role: 'article',
      'aria-label': `Comment by ${c.author} on ${linesLabel(placed.startLine, placed.endLine)}`,
      'data-comment': c.id,
    },
    commentHead(c, linesLabel(placed.startLine, placed.endLine), placed.outdated),
    placed.outdated && c.code && c.code.length > 0
      ? h(
          'pre',
          { class: 'comment-code', title: 'The code this comment was written on' },
          c.code.slice(0, MAX_CODE_LINES).join('\n') + (c.code.length > MAX_CODE_LINES ? '\n…' : ''),
        )
      : null,
    h('div', { class: 'comment-body' }, c.body),
    c.resolution ? h('div', { class: 'comment-resolution' }, resolvedWords(c)) : null,
    commentActions(store, c),
  );
  el.style.height = `${span * rowHeight}px`;
  focusWhenDrawn(store);
  return el;
}

/** The box to write a comment, under the lines (or the turn) it is for; `span` rows tall, or as tall as it needs without. */
export function composerBlock(store: CommentStore, span?: number, rowHeight = 0): HTMLElement {
  const d = store.draft;
  const what = d?.kind === 'lines' ? `Comment on ${linesLabel(d.startLine, d.endLine)} of ${d.path}` : d ? `Comment on turn ${d.turn}` : 'Comment';
  store.textarea.setAttribute('aria-label', what);
  const el = h(
    'form',
    {
      class: 'comment-composer',
      'aria-label': what,
    },
    h(
      'div',
      { class: 'comment-head' },
      what,
      d?.kind === 'lines' ? h('span', { class: 'comment-hint' }, ' · Shift+click another + to take in more lines') : null,
    ),
    store.textarea,
    h(
      'div',
      { class: 'comment-actions' },
      h('button', { type: 'submit', class: 'comment-save primary', 'data-focus-key': 'comment-save' }, 'Comment'),
      h('button', { type: 'button', class: 'comment-cancel', onclick: () => store.cancel() }, 'Cancel'),
      h('span', { class: 'comment-hint' }, 'Ctrl+Enter saves · Esc cancels'),
    ),
  );
  el.addEventListener('submit', (event) => {
    event.preventDefault();
    void store.save();
  });
  if (span !== undefined) el.style.height = `${span * rowHeight}px`;
  focusWhenDrawn(store);
  return el;
}

/** Gives the comment box the focus once the page has put it in place (a redraw keeps its text but not its focus). */
function focusWhenDrawn(store: CommentStore): void {
  if (!store.focusPending) return;
  queueMicrotask(() => {
    if (!store.textarea.isConnected) return;
    store.focusPending = false;
    store.textarea.focus({ preventScroll: true });
  });
}
