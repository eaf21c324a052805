/**
 * The pieces a file's header shows wherever a file is drawn (the review
 * page's sticky headers and the one-file view): the rename, the line
 * counts, and the file operations.
 */
import type { ChangesetFile, URI } from '../../protocol/index.js';
import type { App } from './app.js';
import { h } from './dom.js';
import type { FileMeta } from './files-model.js';
import { operationButton, operationsFor } from './operations.js';

/** The URI an operation on the file targets: its current side, else the deleted one. */
export function resourceOf(file: ChangesetFile): URI {
  return (file.edit.after ?? file.edit.before)?.uri ?? file.id;
}

/** "old → " before the path of a renamed file; null otherwise. */
export function renamedFrom(meta: FileMeta, path: string): [HTMLElement, string] | null {
  return meta.oldPath && meta.oldPath !== path ? [h('span', { class: 'old-path' }, meta.oldPath), ' → '] : null;
}

/** "+added −removed", for files that have lines to count. */
export function lineCounts(file: ChangesetFile, meta: FileMeta): HTMLElement | null {
  if (meta.binary || meta.oversized) return null;
  return h(
    'span',
    { class: 'counts' },
    h('span', { class: 'plus' }, `+${file.edit.diff?.added ?? 0}`),
    ' ',
    h('span', { class: 'minus' }, `−${file.edit.diff?.removed ?? 0}`),
  );
}

/** The changeset's file operations as compact buttons on this file, labelled for assistive technology. */
export function fileOperations(app: App, channel: URI, file: ChangesetFile, path: string, label: string): HTMLElement | null {
  const ops = operationsFor(app.changeset?.operations, 'resource');
  if (ops.length === 0) return null;
  const target = { kind: 'resource' as const, resource: resourceOf(file), side: file.edit.after ? ('after' as const) : ('before' as const) };
  return h(
    'span',
    { class: 'ops', role: 'group', 'aria-label': label },
    ops.map((op) => operationButton(app, channel, op, { target, what: path, compact: true })),
  );
}

/** In place of a hunk's operations when today's file no longer holds it (the server's `reverted`): nothing left to revert. */
export function revertedBadge(): HTMLElement {
  return h('span', { class: 'badge reverted', title: 'Today’s file no longer has this change: it was reverted, or edited back' }, 'reverted');
}
