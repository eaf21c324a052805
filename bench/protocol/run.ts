/**
 * Protocol fan-out benchmark: N clients subscribed to one changeset channel.
 *
 *   (a) fan-out: the server dispatches `changeset/fileSet`; time until the
 *       envelope has arrived at every client; plus a burst for throughput.
 *   (b) review round trip: one client dispatches
 *       `changeset/filesReviewChanged`; time until its echo arrives, and
 *       until every other client has it.
 *
 * The server runs on the main thread, the clients on a worker thread (the
 * machine has two cores). Latencies use the process-wide monotonic clock.
 * The anchor is the naive fan-out that serializes the envelope once per
 * subscriber instead of once per dispatch, in the same process run.
 *
 * Ours and the anchor alternate round by round (`--rounds`), each round a
 * fresh server and fresh clients; samples are pooled per side.
 *
 *   npm run bench -- protocol [--clients 10,100] [--iterations 300] [--rounds 5]
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import WebSocket from 'ws';
import type { ActionEnvelope, ChangesetFile, ChangesetState } from '../../protocol/index.js';
import { ChangesetServer } from '../../server/app.js';
import type { ChannelSubscriber } from '../../server/channels/types.js';
import { notificationFrame } from '../../server/channels/frames.js';

const CHANNEL = 'ahp-changeset:/bench/session';
const FILES = 100;

const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Messages between the server thread and the client thread. */
type ToWorker = { type: 'connect'; url: string; clients: number } | { type: 'roundtrip'; iterations: number; warmup: number } | { type: 'close' };
type FromWorker =
  | { type: 'ready' }
  | { type: 'arrived'; seq: number; at: number }
  | { type: 'roundtrip'; echo: number[]; all: number[]; elapsedMs: number }
  | { type: 'closed' };

function changesetFile(i: number, round = 0): ChangesetFile {
  const path = `src/module-${i % 40}/file-${i}.ts`;
  const uri = `file:///workspace/${path}`;
  return {
    id: uri,
    edit: {
      before: { uri, content: `changeset-content:/bench/before/${i}/${round}` },
      after: { uri, content: `changeset-content:/bench/after/${i}/${round}` },
      diff: { added: 3 + (round % 7), removed: 1 + (round % 3) },
    },
    _meta: { path, changeKind: 'modified', sizeBefore: 1834 + round, sizeAfter: 1912 + round, mode: '100644' },
  };
}

// ---------------------------------------------------------------- clients (worker)

function workerMain(): void {
  const port = parentPort!;
  let sockets: WebSocket[] = [];
  const arrivals = new Map<number, { count: number; last: number }>();
  let expected = 0;
  let onRoundTripFrame: ((index: number, envelope: ActionEnvelope, at: number) => void) | undefined;

  const post = (message: FromWorker): void => port.postMessage(message);

  const onFrame = (index: number, data: WebSocket.RawData): void => {
    const at = nowMs();
    const message = JSON.parse(data.toString()) as { method?: string; params?: ActionEnvelope };
    if (message.method !== 'action' || !message.params) return;
    const envelope = message.params;
    if (onRoundTripFrame) {
      onRoundTripFrame(index, envelope, at);
      return;
    }
    const entry = arrivals.get(envelope.serverSeq) ?? { count: 0, last: 0 };
    entry.count += 1;
    entry.last = Math.max(entry.last, at);
    if (entry.count === expected) {
      arrivals.delete(envelope.serverSeq);
      post({ type: 'arrived', seq: envelope.serverSeq, at: entry.last });
    } else {
      arrivals.set(envelope.serverSeq, entry);
    }
  };

  const connect = async (url: string, count: number): Promise<void> => {
    expected = count;
    sockets = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const socket = new WebSocket(url, { perMessageDeflate: false });
        await new Promise<void>((resolve, reject) => {
          socket.once('open', () => resolve());
          socket.once('error', reject);
        });
        const initialized = new Promise<void>((resolve) => {
          socket.once('message', () => resolve());
        });
        socket.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId: `bench-${index}`, initialSubscriptions: [CHANNEL] },
          }),
        );
        await initialized;
        socket.on('message', (data) => onFrame(index, data));
        return socket;
      }),
    );
    post({ type: 'ready' });
  };

  const roundTrip = async (iterations: number, warmup: number): Promise<void> => {
    const sender = sockets[0]!;
    const echo: number[] = [];
    const all: number[] = [];
    const started = nowMs();
    for (let i = 0; i < iterations + warmup; i++) {
      const clientSeq = i + 1;
      let echoAt = 0;
      let othersSeen = 0;
      let lastAt = 0;
      const done = new Promise<void>((resolve) => {
        onRoundTripFrame = (index, envelope, at) => {
          if (envelope.origin?.clientSeq !== clientSeq || envelope.origin.clientId !== 'bench-0') return;
          if (index === 0) echoAt = at;
          else othersSeen += 1;
          lastAt = Math.max(lastAt, at);
          if (echoAt > 0 && othersSeen === sockets.length - 1) resolve();
        };
      });
      const t0 = nowMs();
      sender.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'dispatchAction',
          params: {
            channel: CHANNEL,
            clientSeq,
            action: { type: 'changeset/filesReviewChanged', files: [changesetFile(i % FILES).id], reviewed: i % 2 === 0 },
          },
        }),
      );
      await done;
      if (i >= warmup) {
        echo.push(echoAt - t0);
        all.push(lastAt - t0);
      }
    }
    onRoundTripFrame = undefined;
    post({ type: 'roundtrip', echo, all, elapsedMs: nowMs() - started });
  };

  port.on('message', (message: ToWorker) => {
    if (message.type === 'connect') void connect(message.url, message.clients);
    else if (message.type === 'roundtrip') void roundTrip(message.iterations, message.warmup);
    else {
      for (const socket of sockets) socket.terminate();
      post({ type: 'closed' });
    }
  });
}

// ---------------------------------------------------------------- server (main)

interface Stats {
  p50: number;
  p99: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/** Replaces the store's fan-out with one that serializes the envelope per subscriber (the anchor). */
function useNaiveFanOut(server: ChangesetServer): void {
  const store = server.store as unknown as {
    fanOut: (channel: { subscribers: Set<ChannelSubscriber> }, envelope: ActionEnvelope, first?: ChannelSubscriber) => void;
  };
  store.fanOut = (channel, envelope, first) => {
    if (first && channel.subscribers.has(first)) first.sendFrame(notificationFrame('action', envelope));
    for (const subscriber of channel.subscribers) {
      if (subscriber !== first) subscriber.sendFrame(notificationFrame('action', envelope));
    }
  };
}

/** Raw samples of one round of a case. */
interface CaseResult {
  fanOut: number[];
  burstEnvelopesPerSec: number;
  echo: number[];
  roundTripAll: number[];
  roundTripsPerSec: number;
}

async function runCase(clients: number, iterations: number, naive: boolean): Promise<CaseResult> {
  const server = new ChangesetServer({ host: '127.0.0.1', port: 0, limits: { maxOutboundBufferBytes: 64 * 1024 * 1024 } });
  if (naive) useNaiveFanOut(server);
  const initial: ChangesetState = { status: 'ready', files: Array.from({ length: FILES }, (_, i) => changesetFile(i)) };
  server.store.createChannel(CHANNEL, 'changeset', initial, { reviewable: true });
  const { url } = await server.start();

  const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'clients' } });
  const waiting = new Map<string, (message: FromWorker) => void>();
  const arrived = new Map<number, number>();
  let arrivalWaiter: { seq: number; resolve: (at: number) => void } | undefined;
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'arrived') {
      arrived.set(message.seq, message.at);
      if (arrivalWaiter && arrivalWaiter.seq === message.seq) {
        const { resolve } = arrivalWaiter;
        arrivalWaiter = undefined;
        resolve(message.at);
      }
      return;
    }
    waiting.get(message.type)?.(message);
  });
  const request = <T extends FromWorker>(message: ToWorker, reply: T['type']): Promise<T> =>
    new Promise((resolve) => {
      waiting.set(reply, (m) => resolve(m as T));
      worker.postMessage(message);
    });
  const arrivalOf = (seq: number): Promise<number> => {
    const known = arrived.get(seq);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve) => (arrivalWaiter = { seq, resolve }));
  };

  await request({ type: 'connect', url, clients }, 'ready');

  // (a) fan-out latency, one envelope at a time.
  const warmup = Math.max(20, Math.floor(iterations / 10));
  const fanOut: number[] = [];
  for (let i = 0; i < iterations + warmup; i++) {
    const t0 = nowMs();
    const envelope = server.store.dispatch(CHANNEL, { type: 'changeset/fileSet', file: changesetFile(i % FILES, i) });
    const at = await arrivalOf(envelope.serverSeq);
    if (i >= warmup) fanOut.push(at - t0);
  }

  // (a') burst throughput: dispatch back to back, wait for the last at every client.
  const burst = 1000;
  const b0 = nowMs();
  let lastSeq = 0;
  for (let i = 0; i < burst; i++) {
    lastSeq = server.store.dispatch(CHANNEL, { type: 'changeset/fileSet', file: changesetFile(i % FILES, i + 7) }).serverSeq;
  }
  const burstEnd = await arrivalOf(lastSeq);
  const burstEnvelopesPerSec = (burst * clients) / ((burstEnd - b0) / 1000);

  // (b) review round trip.
  const rt = await request<Extract<FromWorker, { type: 'roundtrip' }>>({ type: 'roundtrip', iterations, warmup }, 'roundtrip');
  await request({ type: 'close' }, 'closed');
  await worker.terminate();
  await server.stop();
  return {
    fanOut,
    burstEnvelopesPerSec,
    echo: rt.echo,
    roundTripAll: rt.all,
    roundTripsPerSec: (iterations + warmup) / (rt.elapsedMs / 1000),
  };
}

/** Rounds of one side pooled: latency samples together, throughputs by their median. */
function pooled(rounds: CaseResult[]): { fanOut: Stats; echo: Stats; roundTripAll: Stats; burstEnvelopesPerSec: number; roundTripsPerSec: number } {
  const median = (xs: number[]): number => stats(xs).p50;
  return {
    fanOut: stats(rounds.flatMap((r) => r.fanOut)),
    echo: stats(rounds.flatMap((r) => r.echo)),
    roundTripAll: stats(rounds.flatMap((r) => r.roundTripAll)),
    burstEnvelopesPerSec: median(rounds.map((r) => r.burstEnvelopesPerSec)),
    roundTripsPerSec: median(rounds.map((r) => r.roundTripsPerSec)),
  };
}

function parseArgs(argv: string[]): { clients: number[]; iterations: number; rounds: number } {
  let clients = [10, 100];
  let iterations = 300;
  let rounds = 5;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--clients')
      clients = (argv[++i] ?? '')
        .split(',')
        .map(Number)
        .filter((n) => n > 0);
    else if (arg === '--iterations') iterations = Number(argv[++i]);
    else if (arg === '--rounds') rounds = Number(argv[++i]);
    else throw new Error(`unknown argument ${arg}; usage: npm run bench -- protocol [--clients 10,100] [--iterations 300] [--rounds 5]`);
  }
  return { clients, iterations, rounds };
}

const f = (n: number): string => n.toFixed(2).padStart(7);

async function main(): Promise<void> {
  const { clients, iterations, rounds } = parseArgs(process.argv.slice(2));
  const perRound = Math.max(1, Math.round(iterations / rounds));
  console.log(
    `protocol fan-out benchmark: ${perRound * rounds} iterations per case in ${rounds} rounds, ours and anchor alternated round by round; ` +
      'ms unless noted; anchor = per-subscriber serialization',
  );
  for (const n of clients) {
    // Round by round, and who goes first alternates too, so drifting machine load hits both sides alike.
    const oursRounds: CaseResult[] = [];
    const anchorRounds: CaseResult[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        oursRounds.push(await runCase(n, perRound, false));
        anchorRounds.push(await runCase(n, perRound, true));
      } else {
        anchorRounds.push(await runCase(n, perRound, true));
        oursRounds.push(await runCase(n, perRound, false));
      }
    }
    const ours = pooled(oursRounds);
    const anchor = pooled(anchorRounds);
    console.log(`\n${n} clients`);
    console.log('                                    ours p50  ours p99   anchor p50  anchor p99   ratio p50');
    const row = (label: string, a: Stats, b: Stats): void =>
      console.log(`  ${label.padEnd(32)}  ${f(a.p50)}   ${f(a.p99)}     ${f(b.p50)}     ${f(b.p99)}     ${(a.p50 / b.p50).toFixed(2)}`);
    row('(a) fileSet fan-out to all', ours.fanOut, anchor.fanOut);
    row('(b) review echo at sender', ours.echo, anchor.echo);
    row('(b) review at every client', ours.roundTripAll, anchor.roundTripAll);
    console.log(
      `  burst throughput: ${Math.round(ours.burstEnvelopesPerSec).toLocaleString('en-US')} envelopes/s delivered ` +
        `(anchor ${Math.round(anchor.burstEnvelopesPerSec).toLocaleString('en-US')}, ratio ${(ours.burstEnvelopesPerSec / anchor.burstEnvelopesPerSec).toFixed(2)}); ` +
        `review round trips: ${Math.round(ours.roundTripsPerSec)}/s (anchor ${Math.round(anchor.roundTripsPerSec)}/s)`,
    );
  }
}

if (isMainThread) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else if ((workerData as { role?: string } | undefined)?.role === 'clients') {
  workerMain();
}
