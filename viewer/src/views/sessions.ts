/** The session list in the sidebar, kept live by the root notifications: sessions recording now, then past ones. */
import { SessionStatus, type SessionSummary } from '../../../protocol/session/state.js';
import type { App } from '../app.js';
import { byId, formatTime, h, replaceChildren } from '../dom.js';

/** What the server puts in a session summary's `_meta` for lists. */
interface ListMeta {
  agent?: string;
  firstPrompt?: string;
  endedAt?: string;
  turnCount?: number;
}

/** Draws the session list. */
export function renderSessions(app: App): void {
  const list = byId('sessions');
  const sessions = app.sortedSessions();
  if (sessions.length === 0) {
    replaceChildren(list, h('li', { class: 'empty' }, 'No sessions yet. Start one with the harness or `serve --auto-turns`.'));
    return;
  }
  const isPast = (s: SessionSummary) => (s.status & SessionStatus.IsArchived) === SessionStatus.IsArchived;
  const active = sessions.filter((s) => !isPast(s));
  const past = sessions.filter(isPast);
  const items: HTMLElement[] = [];
  if (active.length > 0) items.push(h('li', { class: 'group' }, 'Recording'), ...active.map((s) => item(app, s)));
  if (past.length > 0) items.push(h('li', { class: 'group' }, 'Past sessions'), ...past.map((s) => item(app, s)));
  replaceChildren(list, items);
}

function item(app: App, s: SessionSummary): HTMLElement {
  const busy = (s.status & SessionStatus.InProgress) === SessionStatus.InProgress;
  const meta = (s._meta ?? {}) as ListMeta;
  const changes = s.changes;
  const turns = meta.turnCount ?? 0;
  return h(
    'li',
    {},
    h(
      'button',
      {
        type: 'button',
        class: ['session', meta.endedAt !== undefined && 'past'],
        'aria-current': s.resource === app.sessionUri ? 'true' : undefined,
        'data-focus-key': `session:${s.resource}`,
        'data-session': s.resource,
        title: meta.firstPrompt ?? s.title,
        onclick: () => void app.selectSession(s.resource),
      },
      h('span', { class: 'session-title' }, s.title || s.resource),
      h(
        'span',
        { class: 'meta' },
        busy ? h('span', { class: 'badge live' }, 'turn running') : null,
        busy ? ' ' : null,
        // When it started, and for a past session when it ended ("10:02:11 · ended 10:47:32"): each time is the one it names.
        h('time', { class: 'started', datetime: s.createdAt, title: `Started ${formatTime(s.createdAt)}` }, formatTime(s.createdAt)),
        meta.endedAt !== undefined
          ? [
              ' · ',
              h('span', { class: 'badge ended' }, 'ended'),
              ' ',
              h('time', { class: 'ended', datetime: meta.endedAt, title: `Ended ${formatTime(meta.endedAt)}` }, formatTime(meta.endedAt)),
            ]
          : null,
        ` · ${turns} ${turns === 1 ? 'turn' : 'turns'}`,
        changes
          ? h(
              'span',
              { class: 'counts' },
              ` · ${changes.files ?? 0} ${changes.files === 1 ? 'file' : 'files'} `,
              h('span', { class: 'plus' }, `+${changes.additions ?? 0}`),
              ' ',
              h('span', { class: 'minus' }, `−${changes.deletions ?? 0}`),
            )
          : null,
      ),
    ),
  );
}
