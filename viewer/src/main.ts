/**
 * Entry point of the web viewer. The page is served by changeset-server at
 * `/?token=…`; it connects back to the same host over WebSocket with that
 * token. The token is moved out of the address bar into session storage so
 * it does not end up in bookmarks, shared links or screenshots, while a
 * reload of the tab still finds it.
 */
import { App } from './app.js';
import { ViewerClient } from './client.js';
import { installDeepLinks } from './deep-link.js';
import { byId } from './dom.js';
import { installKeyboard } from './keyboard.js';
import { installPressHold } from './press-hold.js';
import { renderChips, renderToolbar } from './views/header.js';
import { DiffView } from './views/diff-view.js';
import { FileListView } from './views/file-list.js';
import { renderSessions } from './views/sessions.js';
import { renderStatus } from './views/status.js';
import { installTurnExtras, renderTurnExtras } from './views/turn-extras.js';
import { renderTurns } from './views/turns.js';
import { installPanes } from './comfort/panes.js';
import { installShortcuts } from './comfort/shortcuts.js';
import { themeControl } from './comfort/theme.js';
import { installNoticeClearing } from './operation-preview.js';
import { filterBar } from './review/filter.js';
import { ReviewPage } from './review/review-page.js';
import { installSearch } from './search/search-bar.js';

const TOKEN_KEY = 'changeset-server.token';

/** The access token: from the address (a link `open` printed), else from this tab's session storage. */
function takeToken(): string | undefined {
  return new URL(location.href).searchParams.get('token') ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/**
 * Moves a token from the address bar into the tab's session storage (once
 * the socket is on its way: both cost milliseconds), so it does not end up
 * in bookmarks, history or shared links while a reload still finds it.
 */
function hideToken(): void {
  const url = new URL(location.href);
  const token = url.searchParams.get('token');
  if (token === null) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  url.searchParams.delete('token');
  history.replaceState(null, '', url.pathname + url.search + url.hash);
}

function socketUrl(token: string | undefined): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`;
}

/** True when the server takes a WebSocket at this URL (it refuses one without a valid token). */
function accepts(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.addEventListener('open', () => {
      socket.close();
      resolve(true);
    });
    socket.addEventListener('error', () => resolve(false));
  });
}

/** Instead of "Connecting…" forever: a page opened without its token says how to get the link. */
function showNeedsLink(): void {
  document.body.replaceChildren();
  const box = document.createElement('main');
  box.className = 'needs-link';
  box.innerHTML = [
    '<h1>This link needs its access token</h1>',
    '<p>The viewer only connects with the token the server gave it, and this address has none (a new tab, or a copied address).</p>',
    '<p>In the project folder, run <code>changeset-server open</code>: it prints the full link and opens it in your browser. ',
    '<code>changeset-server status</code> prints it too.</p>',
  ].join('');
  document.body.append(box);
}

async function main(): Promise<void> {
  const token = takeToken();
  if (token === undefined && !(await accepts(socketUrl(undefined)))) {
    showNeedsLink();
    return;
  }
  const client = new ViewerClient(socketUrl(token));
  const app = new App(client);
  installDeepLinks(app);
  // Connect first: the handshake and the linked changeset travel while the page sets itself up.
  const started = app.start();
  hideToken();
  const files = new FileListView(app);
  const diff = new DiffView(app);
  const review = new ReviewPage(app);
  const diffPane = byId('diff');
  byId('files-column').prepend(filterBar(app));
  app.renderer('status', () => renderStatus(app));
  app.renderer('sessions', () => renderSessions(app));
  app.renderer('turns', () => renderTurns(app));
  app.renderer('chips', () => renderChips(app));
  installTurnExtras(app);
  app.renderer('toolbar', () => {
    renderToolbar(app);
    renderTurnExtras(app);
  });
  app.renderer('files', () => {
    files.render();
    const shown = app.rows.filter((r) => r.type === 'file').length;
    const total = app.changeset?.files.length ?? 0;
    byId('filter-count').textContent = shown === total ? '' : `${shown} of ${total} files`;
  });
  app.renderer('diff', () => {
    diffPane.classList.toggle('all-files', app.display.layout === 'all');
    if (app.display.layout === 'all') review.render(diffPane);
    else diff.render();
  });
  installKeyboard(app);
  installPressHold();
  installShortcuts(app, review);
  installSearch(app, review);
  installNoticeClearing(app);
  document.querySelector('.top')!.append(installPanes(app), themeControl());
  // Plain buttons rather than a method="dialog" form: the page's CSP has form-action 'none'.
  byId('confirm-cancel').addEventListener('click', () => byId<HTMLDialogElement>('confirm-dialog').close('cancel'));
  byId('confirm-ok').addEventListener('click', () => byId<HTMLDialogElement>('confirm-dialog').close('confirm'));
  app.invalidate('status', 'sessions', 'turns', 'chips', 'toolbar', 'files', 'diff');
  started.catch((error: unknown) => app.say({ tone: 'error', text: `Could not load sessions: ${(error as Error).message}` }));
}

void main();
