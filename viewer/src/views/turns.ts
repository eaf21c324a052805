/**
 * The turn list: newest first, each with its message, time and counts.
 * Picking a turn opens its changeset; ticking two turns for comparison opens
 * the `compare-turns` changeset between them.
 */
import type { App } from '../app.js';
import { firstLine, timelineOf, turnCountsOf } from '../state/timeline.js';
import type { TurnStats } from '../../../protocol/extensions/timeline.js';
import { byId, type Child, formatDuration, formatTime, h, replaceChildren } from '../dom.js';
import type { Counts } from '../files-model.js';
import { actionRows } from './timeline-groups.js';
import { commentsOf } from '../comments/comment-store.js';
import { turnCommentButton, turnComments } from '../comments/turn-comments.js';

function countsLabel(counts: Counts | undefined): HTMLElement | null {
  if (!counts) return null;
  return h(
    'span',
    { class: 'counts' },
    `${counts.files} ${counts.files === 1 ? 'file' : 'files'} `,
    h('span', { class: 'plus' }, `+${counts.additions}`),
    ' ',
    h('span', { class: 'minus' }, `−${counts.deletions}`),
  );
}

/**
 * When a turn happened and how long it took. A harness turn runs from its
 * start to its end. An automatic turn is its edit span, from the first file
 * change seen to the last: "10:02:11 · edits over 2 min 5 s", or only its
 * time when its changes came at one moment (one save).
 */
function turnTimes(turn: { startedAt?: string; duration?: number }, stats: TurnStats | undefined): Child[] {
  const span = stats?.automatic ? stats.editSpan : undefined;
  if (span) {
    const ms = Date.parse(span.to) - Date.parse(span.from);
    return [
      h('time', { class: 'turn-time', datetime: span.from }, formatTime(span.from)),
      ms > 0 ? h('span', { class: 'turn-duration', 'data-ms': String(ms) }, ` · edits over ${formatDuration(ms)}`) : null,
    ];
  }
  return [
    h('time', { class: 'turn-time', datetime: turn.startedAt }, formatTime(turn.startedAt)),
    turn.duration !== undefined ? h('span', { class: 'turn-duration', 'data-ms': String(turn.duration) }, ` · ${formatDuration(turn.duration)}`) : null,
  ];
}

/** "committed in a1b2c3d": the commits the turn's lines landed in, each named by its message on hover. */
function committedIn(stats: TurnStats | undefined): HTMLElement | null {
  const commits = stats?.commits ?? [];
  if (commits.length === 0) return null;
  const names = commits.map((c, i) => [i > 0 ? ', ' : null, h('span', { class: 'turn-commit', title: c.summary, 'data-commit': c.oid }, c.oid.slice(0, 7))]);
  return h('span', { class: 'turn-commits' }, ' · committed in ', ...names.flat());
}

/**
 * "Also changed by “Claude Code — fix the build” (turn 2): src/app.ts": another
 * session recording the folder ran a turn meanwhile that changed files this
 * turn's changes show, one line per such turn.
 */
function alsoChangedBy(stats: TurnStats | undefined): HTMLElement[] {
  return (stats?.alsoChangedBy ?? []).map((a) => {
    const more = a.files - a.paths.length;
    const files = `${a.paths.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
    return h('span', { class: 'meta turn-also' }, `Also changed by “${a.sessionTitle}” (turn ${a.turn}): ${files}`);
  });
}

/** Draws the turn list of the selected session's default chat. */
export function renderTurns(app: App): void {
  const list = byId('turns');
  const chat = app.chat;
  const hasTurnKind = app.catalogue.some((c) => c.changeKind === 'turn');
  const hasCompare = app.catalogue.some((c) => c.changeKind === 'compare-turns');
  if (!chat || !hasTurnKind) {
    replaceChildren(list, h('li', { class: 'empty' }, app.sessionUri ? 'No turns.' : 'Pick a session.'));
    return;
  }
  const items: HTMLElement[] = [];
  if (chat.activeTurn) {
    items.push(
      h(
        'li',
        { class: 'turn active-turn' },
        h('span', { class: 'turn-message' }, firstLine(chat.activeTurn.message.text) || 'Turn in progress'),
        h('span', { class: 'meta' }, h('span', { class: 'badge live' }, 'in progress'), ' ', formatTime(chat.activeTurn.startedAt)),
      ),
    );
  }
  const timeline = timelineOf(app.session);
  // The user's own actions (reverts, restores, undos) sit between the turns, by time; they are not turns.
  const actions = [...(timeline.userActions ?? [])].reverse();
  const actionItem = (a: { at: string; text: string }) =>
    h(
      'li',
      { class: 'user-action', 'data-user-action': a.text },
      h('span', { class: 'turn-message' }, a.text),
      h('span', { class: 'meta' }, h('span', { class: 'badge you' }, 'you'), ' ', formatTime(a.at)),
    );
  const comments = commentsOf(app);
  const turns = [...chat.turns].reverse();
  turns.forEach((turn, i) => {
    const run: typeof actions = [];
    while (actions.length > 0 && (turn.startedAt === undefined || actions[0]!.at > turn.startedAt)) run.push(actions.shift()!);
    items.push(...actionRows(app, run, actionItem));
    const number = chat.turns.length - i;
    const stats = timeline.turns?.[turn.id];
    const label = (stats?.automatic ? stats.title : firstLine(turn.message.text)) || `Turn ${number}`;
    const comparing = app.compare.includes(turn.id);
    items.push(
      h(
        'li',
        { class: ['turn', turn.id === app.openTurnId && 'open', comparing && 'comparing'] },
        h(
          'button',
          {
            type: 'button',
            class: 'turn-open',
            'aria-current': turn.id === app.openTurnId ? 'true' : undefined,
            'data-focus-key': `turn:${turn.id}`,
            'data-turn': turn.id,
            onclick: () => void app.openTurn(turn.id),
          },
          h('span', { class: 'turn-message' }, h('span', { class: 'turn-number' }, `${number}.`), ' ', label),
          h(
            'span',
            { class: 'meta' },
            turn.state !== 'complete' ? h('span', { class: `badge ${turn.state}` }, turn.state) : null,
            turnTimes(turn, stats),
            ' ',
            countsLabel(turnCountsOf(app.turnCounts, app.session, turn.id)),
            committedIn(stats),
          ),
          alsoChangedBy(stats),
        ),
        hasCompare
          ? h(
              'label',
              { class: 'compare-toggle', title: 'Tick two turns to compare their end states' },
              h('input', {
                type: 'checkbox',
                checked: comparing,
                'data-focus-key': `compare:${turn.id}`,
                'aria-label': `Compare turn ${number}`,
                onchange: () => void app.toggleCompare(turn.id),
              }),
              'compare',
            )
          : null,
        turnCommentButton(comments, turn.id, number),
        turnComments(comments, turn.id, number),
      ),
    );
  });
  items.push(...actionRows(app, actions, actionItem));
  if (items.length === 0) items.push(h('li', { class: 'empty' }, 'No turns recorded yet.'));
  replaceChildren(list, items);
}
