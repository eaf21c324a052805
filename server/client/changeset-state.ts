import type { ActionEnvelope, ChangesetState } from '../../protocol/index.js';
import { changesetReducer } from '../../reducers/changeset.js';
import type { RpcClient } from './rpc-client.js';
import { CommandError } from './errors.js';

/**
 * Subscribes to a changeset channel and resolves with its state once it is
 * no longer `computing` (changesets are produced lazily on first
 * subscribe), applying the channel's envelopes with the shared reducers.
 */
export async function readyChangeset(client: RpcClient, channel: string, timeoutMs: number): Promise<ChangesetState> {
  const envelopes: ActionEnvelope[] = [];
  let wake: (() => void) | undefined;
  const listening = client.onNotification('action', (envelope) => {
    if (envelope.channel !== channel || envelope.rejectionReason !== undefined) return;
    envelopes.push(envelope);
    wake?.();
  });
  try {
    const { snapshot } = await client.request('subscribe', { channel });
    if (!snapshot) throw new CommandError(`no changeset ${channel}`);
    let state = snapshot.state as ChangesetState;
    let seq = snapshot.fromSeq;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const envelope of envelopes.splice(0)) {
        if (envelope.serverSeq <= seq) continue;
        state = changesetReducer(state, envelope.action);
        seq = envelope.serverSeq;
      }
      if (state.status !== 'computing') return state;
      const left = deadline - Date.now();
      if (left <= 0) throw new CommandError(`changeset ${channel} is still computing after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    listening.dispose();
  }
}
