/**
 * Review comments on a whole turn, under the turn's row in the timeline:
 * a "Comment" button opens the same box as a line comment; the turn's
 * comments follow, each with its author, time and buttons.
 */
import type { ReviewComment } from '../../../protocol/extensions/comments.js';
import { h } from '../dom.js';
import { commentActions, commentHead, composerBlock, resolvedWords } from './comment-rows.js';
import type { CommentStore } from './comment-store.js';

/** The button that opens the box for a comment on turn `turn`. */
export function turnCommentButton(store: CommentStore, turnId: string, turn: number): HTMLElement {
  return h(
    'button',
    {
      type: 'button',
      class: 'turn-comment',
      'aria-label': `Comment on turn ${turn}`,
      title: `Comment on turn ${turn}`,
      'data-focus-key': `turn-comment:${turnId}`,
      onclick: () => store.startOnTurn(turnId, turn),
    },
    'Comment',
  );
}

/** One comment on a whole turn. */
function turnComment(store: CommentStore, c: ReviewComment, turn: number): HTMLElement {
  return h(
    'div',
    { class: ['comment', 'turn-comment-item', c.state], role: 'article', 'aria-label': `Comment by ${c.author} on turn ${turn}`, 'data-comment': c.id },
    commentHead({ ...c, turn: undefined }, undefined, false),
    h('div', { class: 'comment-body' }, c.body),
    c.resolution ? h('div', { class: 'comment-resolution' }, resolvedWords(c)) : null,
    commentActions(store, c),
  );
}

/** The comments on turn `turn` and the box being written for it, or nothing. */
export function turnComments(store: CommentStore, turnId: string, turn: number): HTMLElement | null {
  const comments = store.onTurn(turnId);
  const writing = store.draft?.kind === 'turn' && store.draft.turnId === turnId;
  if (comments.length === 0 && !writing) return null;
  return h(
    'div',
    { class: 'turn-comments', role: 'group', 'aria-label': `Comments on turn ${turn}` },
    comments.map((c) => turnComment(store, c, turn)),
    writing ? composerBlock(store) : null,
  );
}
