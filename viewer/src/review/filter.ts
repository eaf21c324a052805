/**
 * The file filter: a path substring, a change kind and a review state. It
 * narrows the file list, the review page and `j` / `k` alike, and draws as a
 * bar above the file list.
 */
import type { ChangesetFile } from '../../../protocol/index.js';
import type { App } from '../app.js';
import { h } from '../dom.js';
import { displayPathOf, kindOf } from '../files-model.js';

/** What the file list shows. */
export interface FileFilter {
  /** Case-insensitive substring of the display path (empty: any). */
  text: string;
  /** A change kind (`added`, `modified`, `deleted`, `renamed`, `mode`), or empty for any. */
  kind: string;
  /** Review state. */
  reviewed: 'any' | 'viewed' | 'unviewed';
}

/** The filter that lets every file through. */
export const NO_FILTER: FileFilter = { text: '', kind: '', reviewed: 'any' };

/** Whether a file passes a filter. */
export function passes(file: ChangesetFile, filter: FileFilter): boolean {
  if (filter.text && !displayPathOf(file).toLowerCase().includes(filter.text.toLowerCase())) return false;
  if (filter.kind && kindOf(file) !== filter.kind) return false;
  if (filter.reviewed === 'viewed' && file.reviewed !== true) return false;
  if (filter.reviewed === 'unviewed' && file.reviewed === true) return false;
  return true;
}

const KINDS: [string, string][] = [
  ['', 'Any change'],
  ['added', 'Added'],
  ['modified', 'Modified'],
  ['deleted', 'Deleted'],
  ['renamed', 'Renamed'],
  ['mode', 'Type or mode'],
];
const REVIEW: [FileFilter['reviewed'], string][] = [
  ['any', 'Viewed or not'],
  ['unviewed', 'Not viewed'],
  ['viewed', 'Viewed'],
];

/** Builds the filter bar (once; its fields keep their own state while the lists re-render). */
export function filterBar(app: App): HTMLElement {
  const update = (change: Partial<FileFilter>): void => app.setFilter({ ...app.filter, ...change });
  const text = h('input', {
    type: 'search',
    id: 'file-filter',
    placeholder: 'Filter files…',
    'aria-label': 'Filter files by path',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  text.addEventListener('input', () => update({ text: text.value }));
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      text.value = '';
      update({ text: '' });
      text.blur();
    }
  });
  const kind = h(
    'select',
    { id: 'filter-kind', 'aria-label': 'Filter by change', onchange: () => update({ kind: kind.value }) },
    KINDS.map(([value, label]) => h('option', { value }, label)),
  );
  const reviewed = h(
    'select',
    { id: 'filter-reviewed', 'aria-label': 'Filter by review state', onchange: () => update({ reviewed: reviewed.value as FileFilter['reviewed'] }) },
    REVIEW.map(([value, label]) => h('option', { value }, label)),
  );
  return h(
    'div',
    { class: 'filter-bar', role: 'search' },
    text,
    h('div', { class: 'filter-selects' }, kind, reviewed),
    h('span', { id: 'filter-count', class: 'note', role: 'status' }),
  );
}
