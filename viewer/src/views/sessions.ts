/** The session list in the sidebar, kept live by the root notifications. */
import { SessionStatus } from '../../../protocol/session/state.js';
import type { App } from '../app.js';
import { byId, formatTime, h, replaceChildren } from '../dom.js';

/** Draws the session list. */
export function renderSessions(app: App): void {
  const list = byId('sessions');
  const sessions = app.sortedSessions();
  if (sessions.length === 0) {
    replaceChildren(list, h('li', { class: 'empty' }, 'No sessions yet. Start one with the harness or `serve --auto-turns`.'));
    return;
  }
  replaceChildren(
    list,
    sessions.map((s) => {
      const busy = (s.status & SessionStatus.InProgress) === SessionStatus.InProgress;
      const changes = s.changes;
      return h(
        'li',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'session',
            'aria-current': s.resource === app.sessionUri ? 'true' : undefined,
            'data-focus-key': `session:${s.resource}`,
            'data-session': s.resource,
            onclick: () => void app.selectSession(s.resource),
          },
          h('span', { class: 'session-title' }, s.title || s.resource),
          h(
            'span',
            { class: 'meta' },
            busy ? h('span', { class: 'badge live' }, 'turn running') : null,
            ' ',
            formatTime(s.modifiedAt),
            changes ? h('span', { class: 'counts' }, ` ${changes.files ?? 0} files `, h('span', { class: 'plus' }, `+${changes.additions ?? 0}`), ' ', h('span', { class: 'minus' }, `−${changes.deletions ?? 0}`)) : null,
          ),
        ),
      );
    }),
  );
}
