/**
 * Invoking changeset operations. The UI is built from whatever
 * `ChangesetState.operations` lists: changeset-scoped ones become toolbar
 * buttons, resource-scoped ones per-file buttons and range-scoped ones
 * per-hunk buttons. A `confirmation` text is asked for in a dialog first;
 * while the call is in flight (or the server says `running`) the button
 * spins; an `error` status is shown inline; the result message becomes a
 * notice offering the session changeset's `undo`.
 */
import type {
  ChangesetOperation,
  ChangesetOperationScope,
  ChangesetOperationTarget,
  InvokeChangesetOperationResult,
  URI,
} from '../../protocol/index.js';
import type { App } from './app.js';
import { byId, h, plainText } from './dom.js';

/** Invocations in flight, by channel, operation and target, so their buttons spin before the server says `running`. */
const inFlight = new Set<string>();

function flightKey(channel: URI, operationId: string, target: ChangesetOperationTarget | undefined): string {
  return JSON.stringify([channel, operationId, target ?? null]);
}

/** The operations of a state that accept a target of this scope. */
export function operationsFor(operations: readonly ChangesetOperation[] | undefined, scope: ChangesetOperationScope): ChangesetOperation[] {
  return (operations ?? []).filter((op) => op.scopes.includes(scope));
}

/** Asks the user to confirm, in the page's modal dialog; resolves true on confirm. */
export function confirmDialog(title: string, body: string, confirmLabel: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm-dialog');
  byId('confirm-title').textContent = title;
  byId('confirm-body').textContent = body;
  const ok = byId<HTMLButtonElement>('confirm-ok');
  ok.textContent = confirmLabel;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    ok.focus();
  });
}

/** Invokes one operation, confirming first when it asks to; reports the outcome as a notice. */
export async function invokeOperation(
  app: App,
  channel: URI,
  op: ChangesetOperation,
  target?: ChangesetOperationTarget,
  what?: string,
): Promise<void> {
  if (op.confirmation !== undefined) {
    const subject = what ? `${op.label}: ${what}` : op.label;
    if (!(await confirmDialog(subject, plainText(op.confirmation), op.label))) return;
  }
  const key = flightKey(channel, op.id, target);
  inFlight.add(key);
  app.invalidate('toolbar', 'diff');
  try {
    const result = await app.client.request<InvokeChangesetOperationResult>('invokeChangesetOperation', {
      channel,
      operationId: op.id,
      ...(target ? { target } : {}),
    });
    const text = plainText(result.message) || `${op.label}: done.`;
    app.say({ tone: 'info', text, offerUndo: op.id !== 'undo' });
  } catch (error) {
    app.say({ tone: 'error', text: `${op.label} failed: ${(error as Error).message}` });
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
  const button = h(
    'button',
    {
      type: 'button',
      class: ['op', options.compact && 'op-compact', op.confirmation !== undefined && 'op-destructive'],
      title: op.description ?? op.label,
      'aria-label': label,
      'aria-busy': running ? 'true' : undefined,
      'data-operation': op.id,
      'data-focus-key': `op:${op.id}:${JSON.stringify(options.target ?? null)}`,
      disabled: running || op.status === 'disabled',
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
