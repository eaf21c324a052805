/** The connection indicator and the notice area (operation results, refused review ticks, failures). */
import type { App } from '../app.js';
import { byId, h, replaceChildren } from '../dom.js';
import { operationButton } from '../operations.js';

const STATUS_TEXT = { connecting: 'Connecting…', open: 'Connected', reconnecting: 'Reconnecting…' } as const;

/** Draws the connection status and the latest notice. */
export function renderStatus(app: App): void {
  const conn = byId('connection');
  conn.textContent = STATUS_TEXT[app.client.status];
  conn.dataset['state'] = app.client.status;
  const area = byId('notice');
  const notice = app.notice;
  if (!notice) {
    replaceChildren(area);
    return;
  }
  const undoUri = app.sessionChangesetUri;
  const undo = undoUri ? app.client.mirror.state(undoUri, 'changeset')?.operations?.find((op) => op.id === 'undo') : undefined;
  const redo = undoUri ? app.client.mirror.state(undoUri, 'changeset')?.operations?.find((op) => op.id === 'redo') : undefined;
  replaceChildren(
    area,
    h(
      'div',
      { class: ['notice', notice.tone] },
      h('span', { class: 'notice-text' }, notice.text),
      // The same button as the toolbar's: disabled, with the reason, while a turn is being recorded.
      notice.offerUndo && undo && undoUri && undo.status !== 'disabled' ? operationButton(app, undoUri, undo) : null,
      notice.offerRedo && redo && undoUri && redo.status !== 'disabled' ? operationButton(app, undoUri, redo) : null,
      h(
        'button',
        {
          type: 'button',
          class: 'dismiss',
          'aria-label': 'Dismiss',
          onclick: () => {
            app.notice = undefined;
            app.invalidate('status');
          },
        },
        '×',
      ),
    ),
  );
}
