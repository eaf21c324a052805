import WebSocket from 'ws';

/** Attempts a WebSocket upgrade; resolves with 101 (and the chosen subprotocol) when accepted, else the HTTP status of the refusal. */
export function tryUpgrade(
  url: string,
  options: { headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<{ status: number; protocol?: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
    socket.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      socket.terminate();
    });
    socket.on('open', () => {
      resolve({ status: 101, protocol: socket.protocol });
      socket.close();
    });
    socket.on('error', reject);
  });
}

/** The HTTP status an upgrade gets: 101 when accepted. */
export async function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return (await tryUpgrade(url, { headers })).status;
}
