/**
 * The search bar above the diffs: the text, which lines to search (added,
 * removed, context), "Match case", the count ("3 of 12 matches in 3
 * files"), previous / next, and how much is searched while diffs load.
 * Keys: `f` focuses it, Enter / Shift+Enter in it and `.` / `,` elsewhere
 * go to the next / previous match, Escape clears it. The browser's own
 * find (Ctrl+F) is left alone.
 */
import type { App } from '../app.js';
import { byId, h } from '../dom.js';
import { typing } from '../keyboard.js';
import type { ReviewPage } from '../review/review-page.js';
import { DiffSearch } from './diff-search.js';
import { clearMarks, markFile, paintMarks } from './marks.js';
import type { LineKind } from './matches.js';

/** Milliseconds of quiet typing before the text is searched. */
const TYPING_MS = 120;

const KINDS: [LineKind, string][] = [
  ['add', 'added'],
  ['del', 'removed'],
  ['context', 'context'],
];

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Builds the search bar, puts it above the diffs, and follows the page's draws to mark what they show. */
export function installSearch(app: App, review: ReviewPage): DiffSearch {
  const search = new DiffSearch(app, review.store);
  const pane = byId('diff');
  const input = h('input', {
    type: 'search',
    id: 'diff-search',
    placeholder: 'Search in the diffs…',
    'aria-label': 'Search in the diffs',
    title: 'Search the added, removed and context lines of every file shown (f; Enter / Shift+Enter: next / previous)',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const count = h('span', { id: 'search-count', class: 'note', role: 'status', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', id: 'search-all', class: 'op-compact', hidden: true, onclick: () => search.searchAll() });
  const prev = h(
    'button',
    {
      type: 'button',
      id: 'search-prev',
      class: 'op-compact',
      title: 'Previous match (Shift+Enter, or ,)',
      'aria-label': 'Previous match',
      onclick: () => go(-1),
    },
    '↑',
  );
  const next = h(
    'button',
    { type: 'button', id: 'search-next', class: 'op-compact', title: 'Next match (Enter, or .)', 'aria-label': 'Next match', onclick: () => go(1) },
    '↓',
  );
  const kinds = KINDS.map(([kind, label]) =>
    h(
      'label',
      { class: 'search-kind', title: `Search the ${label} lines` },
      h('input', {
        type: 'checkbox',
        checked: true,
        'data-kind': kind,
        onchange: () => {
          const chosen = new Set(kinds.filter((k) => k.querySelector('input')!.checked).map((k) => k.querySelector('input')!.dataset['kind'] as LineKind));
          search.setQuery({ kinds: chosen });
        },
      }),
      label,
    ),
  );
  const matchCase = h('input', { type: 'checkbox', id: 'search-case', onchange: () => search.setQuery({ matchCase: matchCase.checked }) });
  const bar = h(
    'div',
    { class: 'search-bar', role: 'search', 'aria-label': 'Search in the diffs' },
    input,
    h('span', { class: 'search-kinds', role: 'group', 'aria-label': 'Lines searched' }, kinds),
    h('label', { class: 'search-kind', title: 'Upper and lower case differ' }, matchCase, 'Match case'),
    prev,
    next,
    count,
    more,
  );
  document.querySelector('.panes')!.before(bar);

  let typingTimer = 0;
  const flush = (): void => {
    if (typingTimer === 0) return;
    window.clearTimeout(typingTimer);
    typingTimer = 0;
    search.setQuery({ text: input.value });
  };
  input.addEventListener('input', () => {
    window.clearTimeout(typingTimer);
    typingTimer = window.setTimeout(() => {
      typingTimer = 0;
      search.setQuery({ text: input.value });
    }, TYPING_MS);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      go(event.shiftKey ? -1 : 1);
    } else if (event.key === 'Escape') {
      input.value = '';
      flush();
      search.setQuery({ text: '' });
      input.blur();
    }
  });

  /** The current match waits to be scrolled to in the one-file layout (its diff may not be drawn yet). */
  let revealPending = false;
  function go(delta: 1 | -1): void {
    flush();
    search.step(delta);
  }
  search.onReveal = (fileId, match) => {
    if (app.display.layout === 'all') review.revealLine(fileId, match.key);
    else {
      revealPending = true;
      if (app.selectedFileId !== fileId) app.selectFile(fileId, 'scroll');
    }
    paint();
  };
  search.onChange = () => {
    showCount();
    paint();
  };

  function showCount(): void {
    const s = search.summary();
    const active = search.active;
    prev.disabled = next.disabled = s.matches === 0;
    bar.classList.toggle('searching', active);
    if (!active) {
      count.textContent = '';
      more.hidden = true;
      return;
    }
    const found =
      s.matches === 0
        ? s.loading
          ? 'No matches yet'
          : 'No matches'
        : `${s.current !== undefined ? `${s.current} of ` : ''}${plural(s.matches, 'match', 'matches')} in ${plural(s.files, 'file', 'files')}`;
    const progress = s.searched < s.total ? ` · ${s.searched} of ${plural(s.total, 'file', 'files')} searched${s.loading ? ', loading their diffs…' : ''}` : '';
    count.textContent = found + progress;
    const rest = search.unsearched;
    more.hidden = rest === 0;
    more.textContent = `Search the other ${plural(rest, 'file', 'files')}`;
    more.title = `Loads the diffs of ${plural(rest, 'file', 'files')} not shown yet, to search them`;
  }

  function paint(): void {
    if (!search.active) {
      clearMarks();
      return;
    }
    const into = { all: [] as Range[], current: [] as Range[] };
    const current = search.currentMatch;
    let currentRow: Element | undefined;
    if (app.display.layout === 'all') {
      for (const section of pane.querySelectorAll<HTMLElement>('.rv-file')) {
        const id = section.dataset['fileId'];
        const found = id === undefined ? undefined : search.matchesOf(id);
        if (!found) continue;
        const row = markFile(section.querySelectorAll('.rv-body > .rl'), found, current && current.fileId === id ? current.match : undefined, into);
        currentRow ??= row;
      }
    } else {
      const id = app.selectedFileId;
      const found = id === undefined ? undefined : search.matchesOf(id);
      if (found)
        currentRow = markFile(pane.querySelectorAll('table.diff > tbody > tr'), found, current && current.fileId === id ? current.match : undefined, into);
    }
    paintMarks(into);
    if (revealPending && currentRow) {
      revealPending = false;
      currentRow.scrollIntoView({ block: 'center' });
    }
  }

  // Every draw of the diffs (a render, a scroll of the review page) is marked before it is painted.
  new MutationObserver(() => {
    search.refresh();
    paint();
  }).observe(pane, { childList: true, subtree: true });

  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || document.querySelector('dialog[open]')) return;
    if (event.key === 'f') {
      input.focus();
      input.select();
    } else if ((event.key === '.' || event.key === ',') && search.active) go(event.key === '.' ? 1 : -1);
    else return;
    event.preventDefault();
  });
  return search;
}
