/**
 * Under the toolbar of an open turn (or one of its steps): the turn's steps
 * — each tool call, from the session state's `_meta.turns[turnId].steps` —
 * expandable, each openable on its own (the `step` changeset) and with
 * "Restore to here" (`restore-checkpoint` on the turn changeset with
 * `_meta.step`: every file back to just before that tool call, after the
 * dry run); and the files the agent presented during the turn
 * (`_meta.turns[turnId].presentedFiles`), readable in place.
 */
import { expandChangesetUri } from '../../../protocol/changeset/uris.js';
import type { PresentedFileEntry as PresentedFile, TurnStep as StepEntry } from '../../../protocol/extensions/timeline.js';
import type { ChangesetState, URI } from '../../../protocol/index.js';
import type { App } from '../app.js';
import { byId, formatTime, h, replaceChildren } from '../dom.js';
import { turnName } from '../operation-preview.js';
import { invokeOperation } from '../operations.js';
import { decodeContent } from '../review/diff-store.js';
import { timelineOf } from '../state/timeline.js';

/** Turns whose step list the reader opened. */
const expanded = new Set<string>();

function turnUriOf(app: App, turnId: string): URI | undefined {
  const entry = app.catalogue.find((c) => c.changeKind === 'turn');
  return entry ? expandChangesetUri(entry.uriTemplate, { turnId }) : undefined;
}

function stepLabel(step: StepEntry): string {
  const paths = step.paths.length === 0 ? 'no files' : step.paths.length <= 2 ? step.paths.join(', ') : `${step.paths[0]} and ${step.paths.length - 1} more`;
  return `${step.tool ?? 'Tool call'} · ${paths}`;
}

async function showPresented(app: App, file: PresentedFile): Promise<void> {
  let dialog = document.getElementById('presented-dialog') as HTMLDialogElement | null;
  if (!dialog) {
    const close = h('button', { type: 'button', id: 'presented-close' }, 'Close');
    dialog = h(
      'dialog',
      { id: 'presented-dialog', 'aria-labelledby': 'presented-title' },
      h('h2', { id: 'presented-title' }),
      h('p', { id: 'presented-description', class: 'note' }),
      h('pre', { id: 'presented-content' }),
      h('div', { class: 'dialog-buttons' }, close),
    );
    close.addEventListener('click', () => dialog!.close());
    document.body.append(dialog);
  }
  byId('presented-title').textContent = file.path;
  byId('presented-description').textContent = file.description ?? '';
  const content = byId('presented-content');
  content.textContent = 'Loading…';
  dialog.showModal();
  try {
    const result = await app.client.request('resourceRead', { channel: 'ahp-root://', uri: file.uri });
    content.textContent = decodeContent(result, 'utf-8');
  } catch (error) {
    content.textContent = `Could not read it: ${(error as Error).message}`;
  }
}

/** Draws the steps and presented files of the open turn (nothing for other changesets). */
export function renderTurnExtras(app: App): void {
  const box = byId('turn-extras');
  const turnId = app.openTurnId;
  const turnUri = turnId !== undefined ? turnUriOf(app, turnId) : undefined;
  if (turnId === undefined || !turnUri) {
    replaceChildren(box);
    return;
  }
  // A step opened from a link: its turn's changeset offers "Restore to here".
  if (!app.client.isSubscribed(turnUri)) void app.client.subscribe(turnUri).catch(() => undefined);
  const state = app.client.mirror.state(turnUri, 'changeset') as ChangesetState | undefined;
  const stats = timelineOf(app.session).turns?.[turnId];
  const steps = stats?.steps ?? [];
  const presented = stats?.presentedFiles ?? [];
  const restore = state?.operations?.find((op) => op.id === 'restore-checkpoint');
  const name = turnName(app, turnId);
  const parts: HTMLElement[] = [];
  if (steps.length > 0) {
    const details = h(
      'details',
      { class: 'steps', open: expanded.has(turnId) || app.openStep !== undefined },
      h('summary', {}, `${steps.length} ${steps.length === 1 ? 'tool call' : 'tool calls'} in ${name}`),
      h(
        'ol',
        { class: 'plain step-list' },
        h(
          'li',
          { class: 'step' },
          h(
            'button',
            {
              type: 'button',
              class: 'step-open',
              'aria-current': app.openStep === undefined ? 'true' : undefined,
              'data-focus-key': 'step:all',
              onclick: () => void app.openTurn(turnId),
            },
            'The whole turn',
          ),
        ),
        steps.map((step) =>
          h(
            'li',
            { class: 'step', 'data-step': String(step.step) },
            h(
              'button',
              {
                type: 'button',
                class: 'step-open',
                'aria-current': app.openStep === step.step ? 'true' : undefined,
                'data-focus-key': `step:${step.step}`,
                onclick: () => void app.openStepOf(turnId, step.step),
              },
              h('span', { class: 'turn-number' }, `${step.step}.`),
              ' ',
              stepLabel(step),
            ),
            h('span', { class: 'meta' }, formatTime(step.at)),
            restore
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'op op-compact op-destructive',
                    'data-operation': 'restore-checkpoint',
                    'data-focus-key': `restore-step:${step.step}`,
                    title: `Bring every file back to how it was just before this ${step.tool ?? 'tool call'}`,
                    disabled: restore.status === 'running' || restore.status === 'disabled',
                    onclick: () =>
                      void invokeOperation(app, turnUri, restore, undefined, `to before step ${step.step} (${step.tool ?? 'tool call'}) of ${name}`, {
                        step: step.step,
                      }),
                  },
                  'Restore to here',
                )
              : null,
          ),
        ),
      ),
    );
    details.addEventListener('toggle', () => {
      if (details.open) expanded.add(turnId);
      else expanded.delete(turnId);
    });
    parts.push(details);
  }
  if (presented.length > 0) {
    parts.push(
      h(
        'div',
        { class: 'presented', role: 'group', 'aria-label': `Files presented in ${name}` },
        h('span', { class: 'note' }, 'Presented:'),
        presented.map((file) =>
          h(
            'button',
            {
              type: 'button',
              class: 'presented-file',
              'data-presented': file.path,
              title: file.description ?? file.path,
              onclick: () => void showPresented(app, file),
            },
            file.path,
            file.description ? h('span', { class: 'note' }, ` — ${file.description}`) : null,
          ),
        ),
      ),
    );
  }
  replaceChildren(box, parts);
}

/** Adds the area under the toolbar and keeps it in step with the turn changeset it reads (session changes redraw the toolbar too). */
export function installTurnExtras(app: App): void {
  byId('toolbar').after(h('div', { id: 'turn-extras', class: 'turn-extras' }));
  app.client.on('channel', (uri) => {
    if (app.openTurnId !== undefined && uri === turnUriOf(app, app.openTurnId)) app.invalidate('toolbar');
  });
}
