/**
 * A file's history and what changed since it was viewed, both in one
 * dialog of diffs. "History" on a file's header lists every turn and step
 * that changed the file (`fileHistory`), each version's diff against the
 * one before, one after another. A file ticked "Viewed" whose content
 * changed since carries the server's `changedSinceViewed`: the header says
 * so and offers the diff from the version viewed to now
 * (`changesetFileDiff` with `sinceViewed`).
 */
import type { ChangesetFile, DiffHunk, FileHistoryEntry, URI, WorkspaceFileDiff } from '../../../protocol/index.js';
import type { App } from '../app.js';
import { byId, h } from '../dom.js';
import { displayPathOf } from '../files-model.js';

/** The header's part: the "changed since you viewed" badge and its diff, and the History button. */
export function fileHabits(app: App, channel: URI, file: ChangesetFile): HTMLElement {
  const path = displayPathOf(file);
  const changed = file._meta?.['changedSinceViewed'] === true && file.reviewed !== true;
  return h(
    'span',
    { class: 'file-habits' },
    changed
      ? h(
          'button',
          {
            type: 'button',
            class: ['op-compact', 'changed-since-viewed'],
            title: 'You ticked this file "Viewed", and it changed since: show what changed since you viewed it',
            'data-focus-key': `since-viewed:${file.id}`,
            onclick: () => void showSinceViewed(app, channel, file, path),
          },
          'Changed since you viewed',
        )
      : null,
    h(
      'button',
      {
        type: 'button',
        class: ['op-compact', 'file-history-button'],
        title: `Every turn and step that changed ${path}, each version against the one before`,
        'aria-label': `History of ${path}`,
        'data-focus-key': `history:${file.id}`,
        onclick: () => void showHistory(app, file, path),
      },
      'History',
    ),
  );
}

/** The dialog the diffs are shown in, made once. */
function historyDialog(title: string): { dialog: HTMLDialogElement; body: HTMLElement } {
  let dialog = document.getElementById('history-dialog') as HTMLDialogElement | null;
  if (!dialog) {
    const close = h('button', { type: 'button', id: 'history-close' }, 'Close');
    dialog = h(
      'dialog',
      { id: 'history-dialog', 'aria-labelledby': 'history-title' },
      h('h2', { id: 'history-title' }),
      h('div', { id: 'history-body', class: 'history-body' }),
      h('div', { class: 'dialog-buttons' }, close),
    );
    close.addEventListener('click', () => dialog!.close());
    document.body.append(dialog);
  }
  byId('history-title').textContent = title;
  const body = byId('history-body');
  body.replaceChildren(h('p', { class: 'note' }, 'Loading…'));
  if (!dialog.open) dialog.showModal();
  return { dialog, body };
}

async function showSinceViewed(app: App, channel: URI, file: ChangesetFile, path: string): Promise<void> {
  const { body } = historyDialog(`Changes to ${path} since you viewed it`);
  try {
    const diff = await app.client.request('changesetFileDiff', { channel, fileId: file.id, sinceViewed: true });
    body.replaceChildren(
      h('p', { class: 'note' }, 'From the version you ticked "Viewed" to the file now. Tick it again once you have looked.'),
      diffBlock(diff),
    );
  } catch (error) {
    body.replaceChildren(h('p', { class: 'note' }, `Could not show it: ${(error as Error).message}`));
  }
}

async function showHistory(app: App, file: ChangesetFile, path: string): Promise<void> {
  const session = app.sessionUri;
  const { body } = historyDialog(`History of ${path}`);
  if (!session) {
    body.replaceChildren(h('p', { class: 'note' }, 'No session is open.'));
    return;
  }
  try {
    const history = await app.client.request('fileHistory', { session, path: file.id });
    if (history.entries.length === 0) {
      body.replaceChildren(h('p', { class: 'note' }, `No turn changed ${history.path}.`));
      return;
    }
    const items = history.entries.map((entry) => {
      const diff = h('div', { class: 'history-diff' }, h('p', { class: 'note' }, 'Loading…'));
      return { entry, diff, item: h('li', { class: 'history-entry' }, h('h3', { class: 'history-heading' }, headingOf(entry)), diff) };
    });
    body.replaceChildren(
      h(
        'p',
        { class: 'note' },
        `${items.length} ${items.length === 1 ? 'change' : 'changes'}, oldest first${history.truncated ? ' (the newest; older ones left out)' : ''}; each shows the version against the one before.`,
      ),
      h('ol', { class: 'history-list' }, ...items.map((i) => i.item)),
    );
    // One after another, oldest first, so the list fills in the order it is read.
    for (const { entry, diff } of items) {
      try {
        diff.replaceChildren(diffBlock(await app.client.request('changesetFileDiff', { channel: entry.changeset, fileId: entry.fileId })));
      } catch (error) {
        diff.replaceChildren(h('p', { class: 'note' }, `Could not show it: ${(error as Error).message}`));
      }
    }
  } catch (error) {
    body.replaceChildren(h('p', { class: 'note' }, `Could not read the history: ${(error as Error).message}`));
  }
}

/** "Turn 2, step 3 (Edit) · 10:04 · modified +1 −0 · edited by you before". */
function headingOf(e: FileHistoryEntry): string {
  const where = `Turn ${e.turn}${e.step !== undefined ? `, step ${e.step}${e.tool ? ` (${e.tool})` : ''}` : ''}`;
  const when = new Date(e.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const lines = e.binary ? 'binary' : `+${e.added} −${e.removed}`;
  return [where, when, `${e.kind} ${lines}`, e.editedBefore ? 'edited by you before this' : ''].filter(Boolean).join(' · ');
}

/** A diff as plain lines, marked added and removed. */
function diffBlock(diff: WorkspaceFileDiff): HTMLElement {
  if (diff.kind !== 'text') return h('p', { class: 'note' }, diff.kind === 'binary' ? 'A binary file: no lines to show.' : 'Too large to show.');
  if (diff.hunks.length === 0) return h('p', { class: 'note' }, 'No change in its lines.');
  return h('div', { class: 'history-hunks', role: 'table' }, ...diff.hunks.map(hunkBlock));
}

function hunkBlock(hunk: DiffHunk): HTMLElement {
  let oldNo = hunk.oldStart;
  let newNo = hunk.newStart;
  const rows = hunk.lines.flatMap((line) => {
    const sign = line[0];
    if (sign === '\\') return [];
    const kind = sign === '+' ? 'add' : sign === '-' ? 'del' : 'context';
    const left = kind === 'add' ? '' : String(oldNo++);
    const right = kind === 'del' ? '' : String(newNo++);
    return [
      h(
        'div',
        { class: ['history-line', kind], role: 'row' },
        h('span', { class: 'num' }, left),
        h('span', { class: 'num' }, right),
        h('span', { class: 'code' }, `${sign === '+' ? '+' : sign === '-' ? '−' : ' '} ${line.slice(1)}`),
      ),
    ];
  });
  return h('div', { class: 'history-hunk' }, h('div', { class: 'history-hunk-head' }, `@@ −${hunk.oldStart} +${hunk.newStart} @@`), ...rows);
}
