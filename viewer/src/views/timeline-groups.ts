/**
 * What the user did between two turns, folded: a run of {@link GROUP_FROM}
 * or more consecutive actions of the user (reverts, restores, undos) is one
 * row of the timeline — "You: 12 actions, 10:02:11–10:14:40" — that opens
 * to list them, so the turns around it stay in view. Shorter runs are
 * listed as they are. A run stays open across redraws while it grows.
 */
import type { App } from '../app.js';
import { formatTime, h } from '../dom.js';

/** The shortest run of the user's actions folded into one row. */
export const GROUP_FROM = 4;

/** One action of the user as the timeline lists it. */
interface Action {
  at: string;
  text: string;
}

/** Runs the reader opened, by the time of their first action (which stays while later ones join the run). */
const opened = new Set<string>();

/** The rows of one run of consecutive actions (newest first); `item` draws one action. */
export function actionRows(app: App, run: readonly Action[], item: (action: Action) => HTMLElement): HTMLElement[] {
  if (run.length < GROUP_FROM) return run.map(item);
  const newest = run[0]!;
  const oldest = run[run.length - 1]!;
  const key = oldest.at;
  const open = opened.has(key);
  const from = formatTime(oldest.at);
  const to = formatTime(newest.at);
  const span = from === to ? from : `${from}–${to}`;
  return [
    h(
      'li',
      { class: ['user-action-group', open && 'open'], 'data-user-actions': String(run.length) },
      h(
        'button',
        {
          type: 'button',
          class: 'user-action-toggle',
          'aria-expanded': String(open),
          'data-focus-key': `actions:${key}`,
          title: open ? 'Hide these actions' : 'List these actions',
          onclick: () => {
            if (open) opened.delete(key);
            else opened.add(key);
            app.invalidate('turns');
          },
        },
        h('span', { class: 'turn-message' }, h('span', { class: 'fold', 'aria-hidden': 'true' }, open ? '▾ ' : '▸ '), `You: ${run.length} actions`),
        h('span', { class: 'meta' }, h('span', { class: 'badge you' }, 'you'), ' ', h('time', { datetime: oldest.at }, span)),
      ),
      open ? h('ul', { class: 'plain user-action-list' }, run.map(item)) : null,
    ),
  ];
}
