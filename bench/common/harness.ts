import WebSocket from 'ws';

/** A harness for benchmarks: JSON-RPC requests over one WebSocket, after the handshake. */
export class Harness {
  private id = 0;
  private readonly pending = new Map<number, (m: { result?: unknown; error?: { message: string } }) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
      if (typeof m.id === 'number') this.pending.get(m.id)?.(m);
    });
  }

  /** Connects and sends `initialize` as `clientId`. */
  static async connect(url: string, clientId: string): Promise<Harness> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const h = new Harness(ws);
    await h.request('initialize', { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId, initialSubscriptions: [] });
    return h;
  }

  async request(method: string, params: unknown): Promise<unknown> {
    const id = ++this.id;
    const reply = await new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    this.pending.delete(id);
    if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
    return reply.result;
  }

  close(): void {
    this.ws.close();
  }
}
