/**
 * More shortcuts: `n` / `p` next / previous hunk, `[` / `]` previous / next
 * turn, `?` the list of shortcuts. And focus follows the selection: after
 * `j` / `k` the keyboard focus (and its ring) moves to the newly selected
 * file's entry when it was on the file list.
 */
import type { App } from '../app.js';
import { byId, h } from '../dom.js';
import { typing } from '../keyboard.js';
import type { ReviewPage } from '../review/review-page.js';

const KEYS: [string, string][] = [
  ['j / k', 'next / previous file'],
  ['n / p', 'next / previous hunk'],
  ['[ / ]', 'previous / next turn'],
  ['v', 'toggle "Viewed" on the selected file'],
  ['u / s', 'unified / side-by-side diff'],
  ['/', 'filter the files'],
  ['f', 'search in the diffs (Enter / Shift+Enter: next / previous match)'],
  ['. / ,', 'next / previous search match'],
  ['?', 'this list'],
];

function helpDialog(): HTMLDialogElement {
  const close = h('button', { type: 'button', id: 'help-close' }, 'Close');
  const dialog = h(
    'dialog',
    { id: 'help-dialog', 'aria-labelledby': 'help-title' },
    h('h2', { id: 'help-title' }, 'Keyboard shortcuts'),
    h(
      'table',
      { class: 'help-keys' },
      h(
        'tbody',
        {},
        KEYS.map(([keys, what]) =>
          h(
            'tr',
            {},
            h(
              'td',
              {},
              keys.split(' / ').map((k, i) => [i > 0 ? ' / ' : '', h('kbd', {}, k)]),
            ),
            h('td', {}, what),
          ),
        ),
      ),
    ),
    h('p', { class: 'note' }, 'Shortcuts are ignored while typing in a field or with Ctrl, Alt or Meta held.'),
    h('div', { class: 'dialog-buttons' }, close),
  );
  close.addEventListener('click', () => dialog.close());
  document.body.append(dialog);
  return dialog;
}

/** Scrolls the one-file diff to the next or previous hunk header; false when there is none. */
function jumpHunkInFile(delta: 1 | -1): boolean {
  const pane = byId('diff');
  const header = pane.querySelector<HTMLElement>('.diff-header')?.offsetHeight ?? 0;
  const paneTop = pane.getBoundingClientRect().top;
  const at = pane.scrollTop;
  const tops = [...pane.querySelectorAll<HTMLElement>('tr.hunk-header')].map((row) => row.getBoundingClientRect().top - paneTop + at - header);
  const target = delta > 0 ? tops.find((t) => t > at + 1) : [...tops].reverse().find((t) => t < at - 1);
  if (target === undefined) return false;
  pane.scrollTop = target;
  return true;
}

/** Opens the turn before (`-1`) or after (`+1`) the open one; with none open, the newest or the oldest. */
function stepTurn(app: App, delta: 1 | -1): void {
  const turns = app.chat?.turns ?? [];
  if (turns.length === 0) return;
  const at = turns.findIndex((t) => t.id === app.openTurnId);
  const next = at < 0 ? (delta > 0 ? 0 : turns.length - 1) : at + delta;
  const turn = turns[next];
  if (turn) void app.openTurn(turn.id);
}

/** Moves keyboard focus to the selected file's entry once the list has re-rendered. */
function followSelection(app: App): void {
  const list = byId('files');
  const active = document.activeElement;
  if (active && active !== document.body && !list.contains(active)) return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      const key = `file:${app.selectedFileId}`;
      const target = [...list.querySelectorAll<HTMLElement>('[data-focus-key]')].find((el) => el.dataset['focusKey'] === key);
      target?.focus({ preventScroll: true });
    }),
  );
}

/** Installs the shortcuts; `review` is the all-files page (for hunk jumps there). */
export function installShortcuts(app: App, review: ReviewPage): void {
  const help = helpDialog();
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || document.querySelector('dialog[open]')) return;
    switch (event.key) {
      case 'j':
      case 'k':
        // The main handler moved the selection; the focus follows it.
        followSelection(app);
        return;
      case 'n':
      case 'p': {
        const delta = event.key === 'n' ? 1 : -1;
        if (app.display.layout === 'all') review.jumpHunk(delta);
        else jumpHunkInFile(delta);
        break;
      }
      case '[':
        stepTurn(app, -1);
        break;
      case ']':
        stepTurn(app, 1);
        break;
      case '/':
        document.getElementById('file-filter')?.focus();
        break;
      case '?':
        help.showModal();
        byId('help-close').focus();
        break;
      default:
        return;
    }
    event.preventDefault();
  });
}
