/**
 * Invoking changeset operations. The UI is built from whatever
 * `ChangesetState.operations` lists: changeset-scoped ones become toolbar
 * buttons, resource-scoped ones per-file buttons and range-scoped ones
 * per-hunk buttons. A `confirmation` text is asked for in a dialog first;
 * while the call is in flight (or the server says `running`) the button
 * spins; an `error` status is shown inline; the result message becomes a
 * notice offering the session changeset's `undo`.
 */
import type { ChangesetOperation, ChangesetOperationScope, ChangesetOperationTarget, OperationInvocationMeta, URI } from '../../protocol/index.js';
import type { App } from './app.js';
import { byId, h, plainText } from './dom.js';
import { busyReason, canProceed, dryRun, inlineText, nameTurns, openSubject, previewNodes } from './operation-preview.js';

/** Invocations in flight, by channel, operation and target, so their buttons spin before the server says `running`. */
const inFlight = new Set<string>();

function flightKey(channel: URI, operationId: string, target: ChangesetOperationTarget | undefined): string {
  return JSON.stringify([channel, operationId, target ?? null]);
}

/** The operations of a state that accept a target of this scope. */
export function operationsFor(operations: readonly ChangesetOperation[] | undefined, scope: ChangesetOperationScope): ChangesetOperation[] {
  return (operations ?? []).filter((op) => op.scopes.includes(scope));
}

/** Asks the user to confirm, in the page's modal dialog; resolves true on confirm. `canConfirm` false leaves only Cancel. */
function confirmDialog(title: string, body: string | Node, confirmLabel: string, canConfirm = true): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm-dialog');
  byId('confirm-title').textContent = title;
  const content = byId('confirm-body');
  if (typeof body === 'string') content.textContent = body;
  else content.replaceChildren(body);
  const ok = byId<HTMLButtonElement>('confirm-ok');
  ok.textContent = confirmLabel;
  ok.disabled = !canConfirm;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    (canConfirm ? ok : byId<HTMLButtonElement>('confirm-cancel')).focus();
  });
}

/** Invokes one operation, confirming first when it asks to; reports the outcome as a notice. */
export async function invokeOperation(
  app: App,
  channel: URI,
  op: ChangesetOperation,
  target?: ChangesetOperationTarget,
  what?: string,
  meta?: OperationInvocationMeta,
): Promise<void> {
  if (op.confirmation !== undefined) {
    const subject = what ?? (op.id === 'undo' ? 'the last revert, discard or restore' : op.id === 'redo' ? 'the last undo' : openSubject(app));
    const preview = await dryRun(app, channel, op, target, meta);
    // The server's confirmation speaks of the whole changeset; a file or a hunk gets its own words.
    const text = target ? 'Undo brings it back.' : plainText(op.confirmation);
    const body = h('div', {}, previewNodes(preview), h('p', { class: 'confirm-text' }, inlineText(text)));
    if (!(await confirmDialog(`${op.label} ${subject}?`, body, op.label, canProceed(preview)))) return;
  }
  const key = flightKey(channel, op.id, target);
  inFlight.add(key);
  app.invalidate('toolbar', 'diff');
  try {
    const result = await app.client.request('invokeChangesetOperation', {
      channel,
      operationId: op.id,
      ...(target ? { target } : {}),
      ...(meta ? { _meta: meta } : {}),
    });
    const text = nameTurns(app, plainText(result.message)) || `${op.label}: done.`;
    app.say({ tone: 'info', text, offerUndo: op.id !== 'undo', offerRedo: op.id === 'undo' });
  } catch (error) {
    app.say({ tone: 'error', text: `${op.label} failed: ${nameTurns(app, (error as Error).message)}` });
  } finally {
    inFlight.delete(key);
    app.invalidate('toolbar', 'diff', 'status');
  }
}

/**
 * A button for one operation: label (and description as its tooltip),
 * disabled unless idle or errored, a spinner while running, the last error
 * inline after it.
 */
export function operationButton(
  app: App,
  channel: URI,
  op: ChangesetOperation,
  options: { target?: ChangesetOperationTarget; what?: string; compact?: boolean } = {},
): HTMLElement {
  const running = op.status === 'running' || inFlight.has(flightKey(channel, op.id, options.target));
  const label = options.what ? `${op.label} ${options.what}` : op.label;
  const busy = busyReason(app);
  const button = h(
    'button',
    {
      type: 'button',
      class: ['op', options.compact && 'op-compact', op.confirmation !== undefined && 'op-destructive'],
      title: busy ?? op.description ?? op.label,
      'data-disabled-reason': busy,
      'aria-label': label,
      'aria-busy': running ? 'true' : undefined,
      'data-operation': op.id,
      'data-focus-key': `op:${op.id}:${JSON.stringify(options.target ?? null)}`,
      disabled: running || op.status === 'disabled' || busy !== undefined,
      onclick: () => void invokeOperation(app, channel, op, options.target, options.what),
    },
    running ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null,
    op.label,
  );
  if (op.status !== 'error' || !op.error) return button;
  // Per-file and per-hunk buttons would repeat the same error many times; they carry it as a tooltip.
  if (options.compact) {
    button.title = `${op.label} failed: ${op.error.message}`;
    return button;
  }
  return h('span', { class: 'op-with-error' }, button, h('span', { class: 'op-error', role: 'alert' }, op.error.message));
}
