import type { ChangesetState } from '../../protocol/index.js';
import type { TestClient } from './client.js';

/** Subscribes to a changeset and resolves with its state once it is `ready` (or `error`). */
export async function subscribeReady(client: TestClient, uri: string, timeoutMs = 20_000): Promise<ChangesetState> {
  await client.subscribe(uri);
  if (client.state<ChangesetState>(uri)?.status === 'computing') {
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/statusChanged', timeoutMs);
  }
  return client.state<ChangesetState>(uri)!;
}

/** Records one turn over the harness methods around `edit`. */
export async function recordTurn(client: TestClient, session: string, turnId: string, edit: () => void, message?: string): Promise<void> {
  await client.request('harness/turnStarted', { channel: session, turnId, ...(message !== undefined ? { message } : {}) }, { timeoutMs: 60_000 });
  edit();
  // Resolves once changesets reflect the turn; a big turn on a busy machine takes a while.
  await client.request('harness/turnEnded', { channel: session, turnId }, { timeoutMs: 120_000 });
}
