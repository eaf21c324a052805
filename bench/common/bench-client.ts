import WebSocket from 'ws';

/**
 * A minimal AHP client for benchmarks: raw JSON-RPC over one socket, no
 * validation or state mirroring to cost time, and a wait for a changeset to
 * become ready.
 */
export class BenchClient {
  private id = 0;
  private readonly pending = new Map<number, (m: Record<string, unknown>) => void>();
  private readyWaiters: { uri: string; resolve: () => void }[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Record<string, unknown>;
      if (typeof m['id'] === 'number') this.pending.get(m['id'])?.(m);
      const params = m['params'] as { channel?: string; action?: { type: string; status?: string } } | undefined;
      if (m['method'] === 'action' && params?.action?.type === 'changeset/statusChanged' && params.action.status === 'ready') {
        for (const w of this.readyWaiters.filter((x) => x.uri === params.channel)) w.resolve();
        this.readyWaiters = this.readyWaiters.filter((x) => x.uri !== params.channel);
      }
    });
  }

  static async connect(url: string, name = 'bench'): Promise<BenchClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const client = new BenchClient(ws);
    await client.request('initialize', { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId: `${name}-${Math.random()}`, initialSubscriptions: [] });
    return client;
  }

  /** Sends a request and resolves with the whole response; an error response rejects. */
  async request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = ++this.id;
    const reply = await new Promise<Record<string, unknown>>((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    this.pending.delete(id);
    if (reply['error']) throw new Error(`${method}: ${JSON.stringify(reply['error'])}`);
    return reply;
  }

  notify(method: string, params: unknown): void {
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  /** Resolves when the changeset `uri` next reports `ready`. */
  waitReady(uri: string): Promise<void> {
    return new Promise((resolve) => this.readyWaiters.push({ uri, resolve }));
  }
}
