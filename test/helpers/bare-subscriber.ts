import WebSocket from 'ws';

/**
 * A bare WebSocket client (no compression, no JSON-RPC library) that has
 * initialized with `channel` among its initial subscriptions: resolves once
 * the answer to its `initialize` arrived. `beforeInitialize` runs just before
 * the `initialize` is sent (for a test that tells the server's peers apart by
 * the order they answer in).
 */
export async function bareSubscriber(url: string, clientId: string, channel: string, beforeInitialize?: () => void): Promise<WebSocket> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  const initialized = new Promise<void>((resolve) => socket.once('message', () => resolve()));
  beforeInitialize?.();
  socket.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId, initialSubscriptions: [channel] },
    }),
  );
  await initialized;
  return socket;
}

/** The action a reviewer dispatches in the fan-out tests: file a.ts marked reviewed (odd `clientSeq`) or not. */
export function reviewAction(channel: string, clientSeq: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'dispatchAction',
    params: { channel, clientSeq, action: { type: 'changeset/filesReviewChanged', files: ['file:///w/a.ts'], reviewed: clientSeq % 2 === 1 } },
  });
}
