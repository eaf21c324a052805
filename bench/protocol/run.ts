/**
 * Protocol fan-out benchmark: N clients subscribed to one changeset channel.
 *
 *   (a) fan-out: the server dispatches `changeset/fileSet`; time until the
 *       envelope has arrived at every client; plus a burst for throughput.
 *   (b) review round trip: one client (the sender) dispatches
 *       `changeset/filesReviewChanged`; time until its echo arrives at the
 *       sender, and until every client has it.
 *
 * Every part runs in its own process, so the figures are the server's: the
 * server alone in one process (`--cpu-prof` profiles it), the sender in
 * another, the other N - 1 clients spread over a few more processes holding
 * many WebSockets each, and a coordinator (this process) that steps the
 * iterations over IPC and waits between them. Latencies use the system-wide
 * monotonic clock (`process.hrtime`), the same in every process.
 *
 * The anchor is the same server with the textbook fan-out: for each
 * subscriber, the sender first, serialize the envelope and `ws.send` it
 * (one write per socket per message, nothing shared, nothing batched).
 * Ours and the anchor alternate round by round (`--rounds`), and who goes
 * first alternates too; each round is a fresh server and fresh clients;
 * samples are pooled per side.
 *
 * `--baseline BUNDLE` adds a third side: the server of another build of this
 * benchmark (`dist-bench/protocol.mjs` bundled from an earlier commit), so a
 * change to the server is measured against its predecessor in the same run.
 *
 *   npm run bench -- protocol [--clients 10,100,1000] [--iterations 300] [--rounds 6]
 *                             [--client-processes N] [--cpu-prof DIR] [--baseline BUNDLE]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import type { ActionEnvelope, ChangesetFile, ChangesetState } from '../../protocol/index.js';
import { ChangesetServer } from '../../server/app.js';
import { notificationFrame } from '../../server/channels/frames.js';
import type { ChannelSubscriber } from '../../server/channels/types.js';
import { WsPeer } from '../../server/transport/index.js';
import { observeWrites } from '../../server/transport/write-trace.js';

const CHANNEL = 'ahp-changeset:/bench/session';
const FILES = 100;
/** Most WebSockets one client process holds. */
const SOCKETS_PER_PROCESS = 250;

const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

// ---------------------------------------------------------------- messages

/** Coordinator → any child. */
type ToChild =
  | { type: 'connect'; url: string; count: number; firstIndex: number }
  | { type: 'dispatch'; index: number }
  | { type: 'burst'; count: number }
  | { type: 'review'; index: number }
  | { type: 'cpu' }
  | { type: 'traces' }
  | { type: 'stop' };

/** Any child → coordinator. */
type FromChild =
  | { type: 'listening'; url: string }
  /** The server process's processor time so far (user + system), in microseconds. */
  | { type: 'cpu'; micros: number }
  | { type: 'connected' }
  /** Every socket of the process has the envelope with this serverSeq; `at` is when the last one got it. */
  | { type: 'arrived'; seq: number; at: number }
  | { type: 'dispatched'; seq: number; at: number }
  | { type: 'burst'; firstSeq: number; lastSeq: number; at: number }
  | { type: 'echo'; seq: number; sentAt: number; echoAt: number }
  /** The server's own timestamps of every review so far, by the review's clientSeq. */
  | { type: 'traces'; traces: [number, ServerTrace][] };

/**
 * Where the server was in one review, on the same clock as the clients: the
 * sender's frame read off its socket, the action dispatched to the channel
 * store (after the JSON-RPC layer), the echo written to the sender's socket,
 * the last other subscriber's copy written; and the garbage collection in
 * between the read and the echo's write (ms).
 */
interface ServerTrace {
  read: number;
  dispatched: number;
  echoWritten: number;
  lastWritten: number;
  gcMs: number;
}

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

function post(message: FromChild): void {
  process.send!(message);
}

// ---------------------------------------------------------------- server process

/** Replaces the store's fan-out with the textbook one: per subscriber, serialize and `ws.send` (the anchor). */
function useNaiveFanOut(server: ChangesetServer, traces: Traces): void {
  const store = server.store as unknown as {
    fanOut: (channel: { subscribers: Set<ChannelSubscriber> }, envelope: ActionEnvelope, first?: ChannelSubscriber) => void;
  };
  const socketOf = (subscriber: ChannelSubscriber): WebSocket => (subscriber as unknown as { peer: { socket: WebSocket } }).peer.socket;
  store.fanOut = (channel, envelope, first) => {
    const trace = envelope.origin ? traces.get(envelope.origin.clientSeq) : undefined;
    if (first && channel.subscribers.has(first)) socketOf(first).send(notificationFrame('action', envelope));
    if (trace) trace.echoWritten = nowMs();
    for (const subscriber of channel.subscribers) {
      if (subscriber !== first) socketOf(subscriber).send(notificationFrame('action', envelope));
    }
    if (trace) trace.lastWritten = nowMs();
  };
}

type Traces = Map<number, ServerTrace>;

/**
 * Timestamps each review in the server's process: when the sender's frame is
 * read (the peer's frame handler), when the store dispatches it, and, for our
 * fan-out, every write (the transport's write trace; the naive fan-out stamps
 * its own sends); garbage collection from the runtime's observer.
 */
function traceReviews(server: ChangesetServer, naive: boolean): Traces {
  const traces: Traces = new Map();
  let current: ServerTrace | undefined;
  const peer = WsPeer.prototype as unknown as { onFrame: (data: Buffer, isBinary: boolean) => void };
  const onFrame = peer.onFrame;
  peer.onFrame = function (this: unknown, data: Buffer, isBinary: boolean) {
    const at = nowMs();
    const text = data.toString('latin1');
    if (text.includes('"dispatchAction"')) {
      const clientSeq = Number(/"clientSeq":(\d+)/.exec(text)?.[1]);
      current = { read: at, dispatched: 0, echoWritten: 0, lastWritten: 0, gcMs: 0 };
      traces.set(clientSeq, current);
    }
    onFrame.call(this, data, isBinary);
  };
  const dispatch = server.store.dispatch.bind(server.store);
  server.store.dispatch = (uri, action, origin, first) => {
    const trace = origin ? traces.get(origin.clientSeq) : undefined;
    if (trace) trace.dispatched = nowMs();
    return dispatch(uri, action, origin, first);
  };
  if (!naive) {
    observeWrites((_peer, frames) => {
      if (!current || frames.length === 0) return;
      const at = nowMs();
      if (current.echoWritten === 0) current.echoWritten = at;
      current.lastWritten = at;
    });
  }
  // Collections are reported later: each is put against the review whose read-to-echo span it overlaps.
  const offset = nowMs() - performance.now();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const start = entry.startTime + offset;
      const end = start + entry.duration;
      for (const trace of [...traces.values()].slice(-3)) {
        if (start < trace.echoWritten && end > trace.read) trace.gcMs += Math.min(end, trace.echoWritten) - Math.max(start, trace.read);
      }
    }
  }).observe({ entryTypes: ['gc'] });
  return traces;
}

async function serverMain(naive: boolean): Promise<void> {
  const server = new ChangesetServer({ host: '127.0.0.1', port: 0, limits: { maxOutboundBufferBytes: 64 * 1024 * 1024 } });
  const traces = traceReviews(server, naive);
  if (naive) useNaiveFanOut(server, traces);
  const initial: ChangesetState = { status: 'ready', files: Array.from({ length: FILES }, (_, i) => changesetFile(i)) };
  server.store.createChannel(CHANNEL, 'changeset', initial, { reviewable: true });
  const { url } = await server.start();
  process.on('message', (message: ToChild) => {
    if (message.type === 'dispatch') {
      const at = nowMs();
      const { serverSeq } = server.store.dispatch(CHANNEL, { type: 'changeset/fileSet', file: changesetFile(message.index % FILES, message.index) });
      post({ type: 'dispatched', seq: serverSeq, at });
    } else if (message.type === 'burst') {
      const at = nowMs();
      let firstSeq = 0;
      let lastSeq = 0;
      for (let i = 0; i < message.count; i++) {
        lastSeq = server.store.dispatch(CHANNEL, { type: 'changeset/fileSet', file: changesetFile(i % FILES, i + 7) }).serverSeq;
        if (i === 0) firstSeq = lastSeq;
      }
      post({ type: 'burst', firstSeq, lastSeq, at });
    } else if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      post({ type: 'cpu', micros: user + system });
    } else if (message.type === 'traces') {
      post({ type: 'traces', traces: [...traces] });
    } else if (message.type === 'stop') {
      void server.stop().then(() => process.exit(0));
    }
  });
  post({ type: 'listening', url });
}

// ---------------------------------------------------------------- client processes

async function openClient(url: string, clientId: string): Promise<WebSocket> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const initialized = new Promise<void>((resolve) => socket.once('message', () => resolve()));
  socket.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId, initialSubscriptions: [CHANNEL] },
    }),
  );
  await initialized;
  return socket;
}

/** Connects `count` clients, a few at a time so the server's accept queue is not flooded. */
async function openClients(url: string, count: number, firstIndex: number): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i += 25) {
    const batch = Array.from({ length: Math.min(25, count - i) }, (_, j) => openClient(url, `bench-${firstIndex + i + j}`));
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

function envelopeOf(data: WebSocket.RawData): ActionEnvelope | undefined {
  const message = JSON.parse(data.toString()) as { method?: string; params?: ActionEnvelope };
  return message.method === 'action' ? message.params : undefined;
}

/** Many subscribers; reports when all of them have an envelope. */
function clientsMain(): void {
  let sockets: WebSocket[] = [];
  const arrivals = new Map<number, { count: number; last: number }>();
  process.on('message', (message: ToChild) => {
    if (message.type === 'connect') {
      void openClients(message.url, message.count, message.firstIndex).then((opened) => {
        sockets = opened;
        for (const socket of sockets) {
          socket.on('message', (data) => {
            const at = nowMs();
            const envelope = envelopeOf(data);
            if (!envelope) return;
            const entry = arrivals.get(envelope.serverSeq) ?? { count: 0, last: 0 };
            entry.count += 1;
            entry.last = Math.max(entry.last, at);
            if (entry.count === sockets.length) {
              arrivals.delete(envelope.serverSeq);
              post({ type: 'arrived', seq: envelope.serverSeq, at: entry.last });
            } else {
              arrivals.set(envelope.serverSeq, entry);
            }
          });
        }
        post({ type: 'connected' });
      });
    } else if (message.type === 'stop') {
      for (const socket of sockets) socket.terminate();
      process.exit(0);
    }
  });
}

/** The one client that dispatches review actions, measuring its own echo; it also reports arrivals like the others. */
function senderMain(): void {
  let socket: WebSocket | undefined;
  let pending: { clientSeq: number; sentAt: number } | undefined;
  process.on('message', (message: ToChild) => {
    if (message.type === 'connect') {
      void openClient(message.url, 'bench-sender').then((opened) => {
        socket = opened;
        socket.on('message', (data) => {
          const at = nowMs();
          const envelope = envelopeOf(data);
          if (!envelope) return;
          if (pending && envelope.origin?.clientId === 'bench-sender' && envelope.origin.clientSeq === pending.clientSeq) {
            post({ type: 'echo', seq: envelope.serverSeq, sentAt: pending.sentAt, echoAt: at });
            pending = undefined;
          }
          post({ type: 'arrived', seq: envelope.serverSeq, at });
        });
        post({ type: 'connected' });
      });
    } else if (message.type === 'review') {
      const i = message.index;
      pending = { clientSeq: i + 1, sentAt: nowMs() };
      socket!.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'dispatchAction',
          params: {
            channel: CHANNEL,
            clientSeq: i + 1,
            action: { type: 'changeset/filesReviewChanged', files: [changesetFile(i % FILES).id], reviewed: i % 2 === 0 },
          },
        }),
      );
    } else if (message.type === 'stop') {
      socket?.terminate();
      process.exit(0);
    }
  });
}

// ---------------------------------------------------------------- coordinator

/** One child process and the messages it sends. */
class Child {
  readonly process: ChildProcess;
  private readonly waiters: { type: FromChild['type']; resolve: (m: FromChild) => void }[] = [];

  constructor(role: string, execArgv: string[], onMessage: (m: FromChild) => void, script = fileURLToPath(import.meta.url)) {
    this.process = fork(script, ['--role', role], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.process.on('message', (m: FromChild) => {
      const i = this.waiters.findIndex((w) => w.type === m.type);
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
      else onMessage(m);
    });
  }

  send(message: ToChild): void {
    this.process.send(message);
  }

  next<T extends FromChild['type']>(type: T): Promise<Extract<FromChild, { type: T }>> {
    return new Promise((resolve) => this.waiters.push({ type, resolve: resolve as (m: FromChild) => void }));
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.send({ type: 'stop' });
    await exited;
  }
}

/** Raw samples of one round of a case. */
interface CaseResult {
  fanOut: number[];
  burstEnvelopesPerSec: number;
  echo: number[];
  roundTripAll: number[];
  roundTripsPerSec: number;
  load: number;
  /** The server process's processor time per burst envelope delivered to one client, in microseconds. */
  burstCpuMicrosPerDelivery: number;
  /** The server process's processor time per review action (echo and fan-out), in milliseconds. */
  reviewCpuMs: number;
  /** Per measured review, where its echo's time went (empty for `--baseline`, whose server does not trace). */
  echoParts: EchoParts[];
}

/** One review's echo split at the server's timestamps (ms). */
interface EchoParts {
  /** Sent by the sender → read by the server. */
  toServer: number;
  /** Read → dispatched to the store (JSON-RPC decoding, the method's checks). */
  toDispatch: number;
  /** Dispatched → the echo written to the sender's socket (reduce, serialize, frame, write). */
  toWrite: number;
  /** Echo written → read by the sender. */
  toSender: number;
  /** Read → echo written: the server's part. */
  server: number;
  /** Garbage collection in the server between the read and the echo's write. */
  gc: number;
  /** Echo written → the last other subscriber's copy written. */
  fanOutWrites: number;
  /** The whole echo, as the sender measured it. */
  echo: number;
}

interface Options {
  clients: number[];
  iterations: number;
  rounds: number;
  clientProcesses: number | undefined;
  cpuProf: string | undefined;
  baseline: string | undefined;
}

/** Whose server a round runs: ours, the anchor, or ours from another build (`--baseline`). */
type Side = 'ours' | 'anchor' | 'baseline';

async function runCase(clients: number, iterations: number, side: Side, options: Options): Promise<CaseResult> {
  const load = loadavg()[0]!;
  // Per serverSeq: how many processes have reported it, and the latest arrival.
  const arrivals = new Map<number, { count: number; last: number }>();
  let arrivalWaiter: { seq: number; resolve: (at: number) => void } | undefined;
  const others = clients - 1;
  const groups = others === 0 ? 0 : (options.clientProcesses ?? Math.min(4, Math.ceil(others / SOCKETS_PER_PROCESS)));
  const reporters = groups + 1;
  const onArrival = (m: FromChild): void => {
    if (m.type !== 'arrived') return;
    const entry = arrivals.get(m.seq) ?? { count: 0, last: 0 };
    entry.count += 1;
    entry.last = Math.max(entry.last, m.at);
    arrivals.set(m.seq, entry);
    if (entry.count === reporters && arrivalWaiter?.seq === m.seq) {
      const { resolve } = arrivalWaiter;
      arrivalWaiter = undefined;
      resolve(entry.last);
    }
  };
  const allArrived = (seq: number): Promise<number> => {
    const known = arrivals.get(seq);
    if (known && known.count === reporters) return Promise.resolve(known.last);
    return new Promise((resolve) => (arrivalWaiter = { seq, resolve }));
  };

  const serverArgv = [...process.execArgv];
  if (options.cpuProf)
    serverArgv.push('--cpu-prof', '--cpu-prof-dir', options.cpuProf, '--cpu-prof-name', `server-${side}-${clients}-${Date.now()}.cpuprofile`);
  const server =
    side === 'baseline'
      ? new Child('server', serverArgv, () => undefined, options.baseline)
      : new Child(side === 'anchor' ? 'server-naive' : 'server', serverArgv, () => undefined);
  const { url } = await server.next('listening');
  const sender = new Child('sender', process.execArgv, onArrival);
  sender.send({ type: 'connect', url, count: 1, firstIndex: 0 });
  await sender.next('connected');
  const clientGroups: Child[] = [];
  for (let g = 0; g < groups; g++) {
    const count = Math.floor(others / groups) + (g < others % groups ? 1 : 0);
    const child = new Child('clients', process.execArgv, onArrival);
    child.send({ type: 'connect', url, count, firstIndex: 1 + g * Math.ceil(others / groups) });
    clientGroups.push(child);
  }
  await Promise.all(clientGroups.map((c) => c.next('connected')));

  // (a) fan-out latency, one envelope at a time.
  const warmup = Math.max(20, Math.floor(iterations / 10));
  const fanOut: number[] = [];
  for (let i = 0; i < iterations + warmup; i++) {
    const dispatched = server.next('dispatched');
    server.send({ type: 'dispatch', index: i });
    const { seq, at } = await dispatched;
    const last = await allArrived(seq);
    arrivals.delete(seq);
    if (i >= warmup) fanOut.push(last - at);
  }

  // (a') burst throughput: the server dispatches back to back; wait for the last at every client.
  // 1,000 envelopes, fewer past 100 clients: 100,000 deliveries in all.
  const burst = Math.min(1000, Math.ceil(100_000 / clients));
  const serverCpu = async (): Promise<number> => {
    const reply = server.next('cpu');
    server.send({ type: 'cpu' });
    return (await reply).micros;
  };
  const burstCpu0 = await serverCpu();
  const burstDone = server.next('burst');
  server.send({ type: 'burst', count: burst });
  const b = await burstDone;
  const burstEnd = await allArrived(b.lastSeq);
  const burstCpuMicrosPerDelivery = ((await serverCpu()) - burstCpu0) / (burst * clients);
  for (let seq = b.firstSeq; seq <= b.lastSeq; seq++) arrivals.delete(seq);
  const burstEnvelopesPerSec = (burst * clients) / ((burstEnd - b.at) / 1000);

  // (b) review round trip: the sender dispatches, the server echoes it to the sender and fans it out.
  const echo: number[] = [];
  const echoSamples: { clientSeq: number; sentAt: number; echoAt: number }[] = [];
  const roundTripAll: number[] = [];
  const started = nowMs();
  let reviewCpu0 = 0;
  for (let i = 0; i < iterations + warmup; i++) {
    if (i === warmup) reviewCpu0 = await serverCpu();
    const echoed = sender.next('echo');
    sender.send({ type: 'review', index: i });
    const e = await echoed;
    const last = await allArrived(e.seq);
    arrivals.delete(e.seq);
    if (i >= warmup) {
      echo.push(e.echoAt - e.sentAt);
      echoSamples.push({ clientSeq: i + 1, sentAt: e.sentAt, echoAt: e.echoAt });
      roundTripAll.push(last - e.sentAt);
    }
  }
  const roundTripsPerSec = (iterations + warmup) / ((nowMs() - started) / 1000);
  const reviewCpuMs = ((await serverCpu()) - reviewCpu0) / 1000 / iterations;
  const echoParts: EchoParts[] = [];
  if (side !== 'baseline') {
    const reply = server.next('traces');
    server.send({ type: 'traces' });
    const traces = new Map((await reply).traces);
    for (const sample of echoSamples) {
      const t = traces.get(sample.clientSeq);
      if (!t || t.echoWritten === 0) continue;
      echoParts.push({
        toServer: t.read - sample.sentAt,
        toDispatch: t.dispatched - t.read,
        toWrite: t.echoWritten - t.dispatched,
        toSender: sample.echoAt - t.echoWritten,
        server: t.echoWritten - t.read,
        gc: t.gcMs,
        fanOutWrites: t.lastWritten - t.echoWritten,
        echo: sample.echoAt - sample.sentAt,
      });
    }
  }

  await Promise.all([sender.stop(), ...clientGroups.map((c) => c.stop())]);
  await server.stop();
  return { fanOut, burstEnvelopesPerSec, echo, roundTripAll, roundTripsPerSec, load, burstCpuMicrosPerDelivery, reviewCpuMs, echoParts };
}

interface Stats {
  p50: number;
  p99: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
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

const USAGE =
  'usage: npm run bench -- protocol [--clients 10,100,1000] [--iterations 300] [--rounds 6] [--client-processes N] [--cpu-prof DIR] [--baseline BUNDLE]';

function parseArgs(argv: string[]): Options {
  const options: Options = { clients: [10, 100, 1000], iterations: 300, rounds: 6, clientProcesses: undefined, cpuProf: undefined, baseline: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--clients')
      options.clients = (argv[++i] ?? '')
        .split(',')
        .map(Number)
        .filter((n) => n > 0);
    else if (arg === '--iterations') options.iterations = Number(argv[++i]);
    else if (arg === '--rounds') options.rounds = Number(argv[++i]);
    else if (arg === '--client-processes') options.clientProcesses = Number(argv[++i]);
    else if (arg === '--cpu-prof') options.cpuProf = argv[++i];
    else if (arg === '--baseline') options.baseline = argv[++i];
    else throw new Error(`unknown argument ${arg}; ${USAGE}`);
  }
  return options;
}

const f = (n: number): string => n.toFixed(2).padStart(7);

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const perRound = Math.max(1, Math.round(options.iterations / options.rounds));
  const sides: Side[] = options.baseline ? ['ours', 'anchor', 'baseline'] : ['ours', 'anchor'];
  console.log(
    `protocol fan-out benchmark: ${perRound * options.rounds} iterations per case in ${options.rounds} rounds, ${sides.join(', ')} alternated round by round; ` +
      'server, sender and the other clients each in their own processes; ms unless noted; anchor = per-subscriber serialize and ws.send' +
      (options.baseline ? `; baseline = the server of ${options.baseline}` : ''),
  );
  for (const n of options.clients) {
    // Round by round, and who goes first turns too, so drifting machine load hits every side alike.
    const results = new Map<Side, CaseResult[]>(sides.map((side) => [side, []]));
    for (let r = 0; r < options.rounds; r++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(r + k) % sides.length]!;
        results.get(side)!.push(await runCase(n, perRound, side, options));
      }
    }
    const all = [...results.values()].flat();
    const loads = all.map((r) => r.load);
    console.log(`\n${n} clients (load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} at the rounds' starts)`);
    const summary = new Map(sides.map((side) => [side, pooled(results.get(side)!)]));
    const ours = summary.get('ours')!;
    const header = sides.map((side) => `${side} p50`.padStart(13) + `${side} p99`.padStart(13)).join('');
    const ratios = sides
      .filter((side) => side !== 'ours')
      .map((side) => `ours/${side} p50`.padStart(20) + 'p99'.padStart(6))
      .join('');
    console.log(`${' '.repeat(34)}${header}${ratios}`);
    const row = (label: string, pick: (s: ReturnType<typeof pooled>) => Stats): void => {
      const cells = sides.map((side) => f(pick(summary.get(side)!).p50).padStart(13) + f(pick(summary.get(side)!).p99).padStart(13)).join('');
      const r = sides
        .filter((side) => side !== 'ours')
        .map((side) => {
          const other = pick(summary.get(side)!);
          return (pick(ours).p50 / other.p50).toFixed(2).padStart(20) + (pick(ours).p99 / other.p99).toFixed(2).padStart(6);
        })
        .join('');
      console.log(`  ${label.padEnd(32)}${cells}${r}`);
    };
    row('(a) fileSet fan-out to all', (s) => s.fanOut);
    row('(b) review echo at sender', (s) => s.echo);
    row('(b) review at every client', (s) => s.roundTripAll);
    const perRoundP99 = (side: Side): string =>
      results
        .get(side)!
        .map((r) => stats(r.echo).p99.toFixed(2))
        .join(' ');
    console.log(`  echo p99 per round: ${sides.map((side) => `${side} ${perRoundP99(side)}`).join('; ')}`);
    console.log(
      `  burst throughput, envelopes/s delivered: ${sides.map((side) => `${side} ${Math.round(summary.get(side)!.burstEnvelopesPerSec).toLocaleString('en-US')}`).join(', ')}; ` +
        `review round trips/s: ${sides.map((side) => `${side} ${Math.round(summary.get(side)!.roundTripsPerSec)}`).join(', ')}`,
    );
    // Processor time is what the server's work costs whatever else the machine runs: medians of the rounds, with their range.
    const cpu = (side: Side, pick: (r: CaseResult) => number, digits: number): string => {
      const values = results.get(side)!.map(pick);
      return `${side} ${stats(values).p50.toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
    };
    console.log(`  server processor time per review (echo and fan-out), ms: ${sides.map((side) => cpu(side, (r) => r.reviewCpuMs, 2)).join(', ')}`);
    console.log(
      `  server processor time per burst envelope per client, µs: ${sides.map((side) => cpu(side, (r) => r.burstCpuMicrosPerDelivery, 1)).join(', ')}`,
    );
    // Where the echo's time goes, from the server's timestamps: the median of each part, and the mean of each
    // part over the slowest 1% of echoes (those that set the p99).
    console.log('  echo at the sender, by part (ms): p50 | p99 of each part | mean of each part over the slowest 1% of echoes');
    const parts: [keyof EchoParts, string][] = [
      ['toServer', 'sent → read by the server'],
      ['toDispatch', 'read → dispatched to the store'],
      ['toWrite', 'dispatched → echo written'],
      ['server', "the server's part: read → echo written"],
      ['toSender', 'echo written → read by the sender'],
      ['gc', 'server GC between read and echo write'],
      ['fanOutWrites', "echo written → last other's copy written"],
      ['echo', 'the echo (sender measured)'],
    ];
    for (const side of sides) {
      const samples = results.get(side)!.flatMap((r) => r.echoParts);
      if (samples.length === 0) continue;
      const slowest = [...samples].sort((a, b) => b.echo - a.echo).slice(0, Math.max(1, Math.ceil(samples.length / 100)));
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      console.log(`    ${side} (${samples.length} reviews, slowest ${slowest.length}):`);
      for (const [key, label] of parts) {
        const { p50, p99 } = stats(samples.map((x) => x[key]));
        console.log(`      ${label.padEnd(42)}${f(p50)} | ${f(p99)} | ${f(mean(slowest.map((x) => x[key])))}`);
      }
    }
  }
}

const role = process.argv[process.argv.indexOf('--role') + 1];
if (!process.argv.includes('--role')) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else if (role === 'server' || role === 'server-naive') {
  void serverMain(role === 'server-naive');
} else if (role === 'clients') {
  clientsMain();
} else if (role === 'sender') {
  senderMain();
}
