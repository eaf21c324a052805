/**
 * The changeset chips (one per subscribable catalogue entry, with file and
 * line counts) and the toolbar of the open changeset: its title and status,
 * review progress, changeset-scoped operations, and the diff display
 * switches.
 */
import type { App } from '../app.js';
import { isStatic } from '../state/changeset-views.js';
import { byId, h, replaceChildren } from '../dom.js';
import { countsOf, type Counts } from '../files-model.js';
import { operationButton, operationsFor } from '../operations.js';
import { markAllViewed } from '../viewed.js';
import { commentsOf } from '../comments/comment-store.js';

function counts(c: Counts): HTMLElement {
  return h(
    'span',
    { class: 'counts' },
    `${c.files} ${c.files === 1 ? 'file' : 'files'} `,
    h('span', { class: 'plus' }, `+${c.additions}`),
    ' ',
    h('span', { class: 'minus' }, `−${c.deletions}`),
  );
}

/** Draws the chips of the selected session's catalogue. */
export function renderChips(app: App): void {
  const bar = byId('chips');
  const chips: HTMLElement[] = [];
  for (const entry of app.catalogue) {
    if (!isStatic(entry)) continue;
    const state = app.client.mirror.state(entry.uriTemplate, 'changeset');
    const summary = app.sessions.get(app.sessionUri ?? '')?.changes;
    let c: Counts | undefined = state && state.status === 'ready' ? countsOf(state) : undefined;
    if (!c && entry.changeKind === 'session' && summary) {
      c = { files: summary.files ?? 0, additions: summary.additions ?? 0, deletions: summary.deletions ?? 0, truncated: false };
    }
    chips.push(
      h(
        'button',
        {
          type: 'button',
          class: 'chip',
          'aria-pressed': app.open?.uri === entry.uriTemplate ? 'true' : 'false',
          title: entry.description ?? entry.label,
          'data-focus-key': `chip:${entry.uriTemplate}`,
          'data-change-kind': entry.changeKind,
          onclick: () => void app.openEntry(entry),
        },
        h('span', { class: 'chip-label' }, entry.label),
        c ? counts(c) : state?.status === 'error' ? h('span', { class: 'counts' }, 'error') : h('span', { class: 'counts' }, '…'),
      ),
    );
  }
  replaceChildren(bar, chips.length > 0 ? chips : h('span', { class: 'empty' }, app.sessionUri ? 'This session offers no changesets.' : ''));
}

/** Draws the open changeset's toolbar. */
export function renderToolbar(app: App): void {
  const bar = byId('toolbar');
  const open = app.open;
  const state = app.changeset;
  if (!open) {
    replaceChildren(bar, h('h2', { id: 'changeset-title' }, 'No changeset open'));
    return;
  }
  const parts: (HTMLElement | string | null)[] = [h('h2', { id: 'changeset-title' }, open.label)];
  if (!state || state.status === 'computing')
    parts.push(h('span', { class: 'badge', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'computing…'));
  else if (state.status === 'error') parts.push(h('span', { class: 'badge error', role: 'alert' }, state.error?.message ?? 'error'));
  if (state && state.status !== 'computing') {
    const c = countsOf(state);
    parts.push(counts(c));
    const loading = app.allFiles.loading(open.uri);
    if (loading > 0) parts.push(h('span', { class: 'note', role: 'status' }, `listing ${loading} more…`));
  }
  if (state && open.reviewable) {
    const viewed = state.files.filter((f) => f.reviewed === true).length;
    parts.push(
      h(
        'span',
        { class: 'progress' },
        h('progress', { max: String(Math.max(1, state.files.length)), value: String(viewed), 'aria-label': 'Files viewed' }),
        h('span', { id: 'review-progress' }, `${viewed} / ${state.files.length} viewed`),
      ),
      markAllViewed(app),
    );
  }
  const store = commentsOf(app);
  store.follow(app.sessionUri);
  const comments = store.openCount();
  if (comments > 0) {
    const words = `${comments} open review ${comments === 1 ? 'comment' : 'comments'} in this session`;
    parts.push(h('span', { class: 'comment-total', id: 'open-comments', title: words }, `${comments} open ${comments === 1 ? 'comment' : 'comments'}`));
  }
  const ops = operationsFor(state?.operations, 'changeset');
  if (ops.length > 0)
    parts.push(
      h(
        'span',
        { class: 'ops', role: 'group', 'aria-label': 'Changeset operations' },
        ops.map((op) => operationButton(app, open.uri, op)),
      ),
    );
  parts.push(
    h(
      'span',
      { class: 'view-switch layout-switch', role: 'group', 'aria-label': 'Files shown' },
      h(
        'button',
        {
          type: 'button',
          'aria-pressed': String(app.display.layout === 'all'),
          'data-layout': 'all',
          title: 'Every file on one page',
          'data-focus-key': 'layout:all',
          onclick: () => app.display.setLayout('all'),
        },
        'All files',
      ),
      h(
        'button',
        {
          type: 'button',
          'aria-pressed': String(app.display.layout === 'file'),
          'data-layout': 'file',
          title: 'The selected file alone',
          'data-focus-key': 'layout:file',
          onclick: () => app.display.setLayout('file'),
        },
        'One file',
      ),
    ),
    h(
      'span',
      { class: 'view-switch', role: 'group', 'aria-label': 'Diff layout' },
      h(
        'button',
        {
          type: 'button',
          'aria-pressed': String(app.display.mode === 'unified'),
          title: 'Unified (u)',
          'data-focus-key': 'mode:unified',
          onclick: () => app.display.setMode('unified'),
        },
        'Unified',
      ),
      h(
        'button',
        {
          type: 'button',
          'aria-pressed': String(app.display.mode === 'split'),
          title: 'Side by side (s)',
          'data-focus-key': 'mode:split',
          onclick: () => app.display.setMode('split'),
        },
        'Side by side',
      ),
    ),
    app.display.mode === 'split' && app.display.narrow
      ? h('span', { class: 'note', id: 'narrow-note' }, 'shown unified: the pane is too narrow for side by side')
      : null,
  );
  const select = h(
    'select',
    { id: 'context-lines', 'data-focus-key': 'context', onchange: (e: Event) => app.display.setContext(Number((e.target as HTMLSelectElement).value)) },
    [3, 10, 25, 100].map((n) => h('option', { value: String(n), selected: n === app.display.context }, `${n} lines`)),
  );
  parts.push(h('label', { class: 'context' }, 'Context ', select));
  replaceChildren(bar, parts);
}
