/**
 * Viewer benchmark: time to first diff paint in Chromium — from navigation
 * to the first frame that shows changed lines of a diff — for deep links to
 * (a) a turn adding 5,000 files (the review page), (b) one file of 10,000
 * added lines, and (c) a monorepo-wide turn: a codemod changing one line in
 * each of 50,000 files. The whole product runs in-process with the token,
 * origin check and CSP of `serve`; each round opens the links in one browser
 * tab, as a link opened in a running browser, with the HTTP cache cleared.
 *
 * The anchor is the previous behaviour, in the same run: a second server
 * whose changeset states carry 5,000 files whatever their size (no byte
 * cap, no `changesetFiles`), serving the viewer as it was built before
 * (`--anchor-rev`, exported from git and built into a folder of its own).
 * Ours and the anchor alternate case by case, round by round, with the
 * order reversed every round; medians and the ratio of medians are printed
 * with the load average. Beside the paint: the time from `turnEnded` to the
 * turn changeset being ready at a subscribed client, the largest frame a
 * client received (the page, and a scripted client), and listing every file
 * of the 50,000 with `changesetFiles`, compact against full pages.
 *
 * The tab is driven over the DevTools protocol without its Network domain,
 * which would copy every WebSocket frame into the protocol (see `openTab`);
 * `--observed 1` adds the 5,000-file case with that domain on.
 *
 *   npm run bench -- viewer [--rounds 7] [--files 5000] [--lines 10000] [--wide 50000] [--anchor-rev 89db9c6] [--observed 0]
 *     [--turn-rounds 3] [--timeout 120] [--timeline 0] [--trace DIR]
 *
 * `--wide 0` leaves the codemod out and `--lines 0` the long file (a short run of the 5,000-file case);
 * `--turn-rounds` is how many turns of each kind the turn-end phase records; `--timeout` the seconds a load
 * may take to paint before the run fails, saying what the page shows; `--timeline 1` prints what each load's
 * socket carried until its paint; `--trace DIR` writes a Chromium trace of one more load of each case.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import type { ChangesetFilesResult } from '../../protocol/extensions/changeset-files.js';
import { createEndpointSecurity, endpointOfUrl } from '../../server/security/index.js';
import { ChangesetService } from '../../server/service.js';
import { alternated, gitEnv } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 7);
const FILES = Number(args.get('files') ?? 5000);
const LINES = Number(args.get('lines') ?? 10_000);
const WIDE = Number(args.get('wide') ?? 50_000);
/** The commit whose viewer (and whose changeset states) the anchor serves: the last before every file was listed. */
const ANCHOR_REV = args.get('anchor-rev') ?? '89db9c6';
const OBSERVED = args.get('observed') === '1';
/** Prints what each load's socket carried until its first paint. */
const TIMELINE = args.get('timeline') === '1';
/** A folder for a Chromium trace of one more load of each case, after the rounds. */
const TRACE = args.get('trace');
/** Turns recorded per kind for the turn-end phase (the first is the one the pages open). */
const TURN_ROUNDS = Number(args.get('turn-rounds') ?? 3);
/** How long one load may take to paint (or to list every file) before the run fails, saying what the page shows. */
const LOAD_TIMEOUT_MS = Number(args.get('timeout') ?? 120) * 1000;
/** How long a turn's changeset may take to be ready after the turn ends (50,000 files at a load of 30 took four minutes). */
const READY_TIMEOUT_MS = 15 * 60_000;
/** How long any request to the browser may go unanswered. */
const CDP_TIMEOUT_MS = 60_000;
/** Pause after each load, so one round's trailing work does not fall into the next. */
const SETTLE_MS = 700;
/** The same after a 50,000-file changeset (its list is loaded after the first paint, and the session's other changesets are as big). */
const SETTLE_WIDE_MS = 2500;
/** Targets on the reference machine (see docs/performance.md). */
const TARGETS = { files: 150, lines: 500, wide: 300 };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A minimal JSON-RPC client over the endpoint (with the bearer token). */
async function connect(
  url: string,
  token: string,
  onFrame: (bytes: number) => void = () => undefined,
): Promise<{ request(method: string, params: unknown): Promise<unknown>; waitReady(channel: string): Promise<void>; close(): void }> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const readyWaiters = new Map<string, () => void>();
  ws.on('message', (data: Buffer) => {
    onFrame(data.length);
    const text = String(data);
    // Envelopes are read only for a changeset turning ready; a large one (a whole file list) is not parsed here.
    if (text.startsWith('{"jsonrpc":"2.0","method":"action"') || text.startsWith('{"method":"action"')) {
      if (readyWaiters.size > 0 && text.includes('"changeset/statusChanged"') && text.includes('"status":"ready"')) {
        for (const [channel, resolve] of readyWaiters) if (text.includes(JSON.stringify(channel))) readyWaiters.delete(channel), resolve();
      }
      return;
    }
    const message = JSON.parse(text) as { id?: number; result?: unknown; error?: { message: string } };
    const w = message.id !== undefined ? waiting.get(message.id) : undefined;
    if (!w) return;
    waiting.delete(message.id!);
    if (message.error) w.reject(new Error(message.error.message));
    else w.resolve(message.result);
  });
  const request = (method: string, params: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  await request('initialize', { channel: 'ahp-root://', protocolVersions: ['0.6.0'], clientId: `bench-viewer-${Math.random()}`, initialSubscriptions: [] });
  // A changeset that never turns ready fails the run, saying which, instead of holding it.
  const waitReady = (channel: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        readyWaiters.delete(channel);
        reject(new Error(`${channel} was not ready within ${READY_TIMEOUT_MS / 60_000} minutes of its turn's end`));
      }, READY_TIMEOUT_MS);
      readyWaiters.set(channel, () => (clearTimeout(timer), resolve()));
    });
  return { request, waitReady, close: () => ws.close() };
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** Marks, in every page the tab loads, the first frame that shows a changed diff line (ms since navigation). */
const OBSERVER = `(() => {
  window.largestFrame = 0;
  // What the page's socket carried, in order (ms since navigation, direction, size, what it was): --timeline 1 prints it.
  window.socketLog = [];
  const what = (text) => {
    const m = /"method":"([^"]+)"/.exec(text.slice(0, 200)) ?? /"id":(\\d+)/.exec(text.slice(0, 200));
    return m ? m[1] : text.slice(0, 40);
  };
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      window.socketLog.push([performance.now(), 'open', 0, '']);
      this.addEventListener('message', (e) => {
        if (typeof e.data !== 'string') return;
        const t = performance.now();
        if (e.data.length > window.largestFrame) window.largestFrame = e.data.length;
        window.socketLog.push([t, 'in', e.data.length, what(e.data)]);
      });
    }
    send(data) {
      if (typeof data === 'string') window.socketLog.push([performance.now(), 'out', data.length, what(data)]);
      return super.send(data);
    }
  };
  // When the review progress counts every file the toolbar counts: the whole list is in the page.
  let listed;
  window.allListed = new Promise((resolve) => (listed = resolve));
  const lister = new MutationObserver(() => {
    const total = /^(\\d+) files/.exec(document.querySelector('.toolbar .counts')?.textContent ?? '');
    const progress = / (\\d+) viewed$/.exec(document.getElementById('review-progress')?.textContent ?? '');
    if (!total || !progress || total[1] !== progress[1]) return;
    lister.disconnect();
    window.allListedAt = performance.now();
    listed(window.allListedAt);
  });
  lister.observe(document, { childList: true, subtree: true, characterData: true });
  let done;
  window.firstDiffPaint = new Promise((resolve) => (done = resolve));
  const observer = new MutationObserver(() => {
    if (!document.querySelector('.rl.add, .rl.del, tr.line.add, tr.line.del')) return;
    observer.disconnect();
    // The frame after the lines are in the page is the one that shows them.
    requestAnimationFrame(() => {
      window.firstDiffPaintAt = performance.now();
      done(window.firstDiffPaintAt);
    });
  });
  observer.observe(document, { childList: true, subtree: true });
})();`;

/** A Chrome DevTools Protocol connection to one browser, with flat sessions for its tabs. */
interface Cdp {
  /** A request, failed when not answered within `timeoutMs` (the request timeout by default). */
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>, sessionId?: string, timeoutMs?: number): Promise<T>;
  /** The next event named `method`, within `timeoutMs` (the request timeout by default; 0: no limit). */
  next(method: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): void;
}

/** A request to Chromium that went unanswered. */
class CdpTimeout extends Error {}

async function cdpConnect(url: string, onEvent: (method: string, params: Record<string, unknown>) => void): Promise<Cdp> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const events = new Map<string, (params: Record<string, unknown>) => void>();
  // A browser that exits or drops the connection fails every request still waiting, instead of leaving it unanswered.
  ws.on('close', () => {
    for (const w of waiting.values()) w.reject(new Error('the connection to Chromium closed (did the browser exit?)'));
    waiting.clear();
  });
  ws.on('message', (data: Buffer) => {
    // Events carrying a copy of a large WebSocket frame are dropped unread: parsing them would load this process, the server's.
    if (data.length > 65_536 && data.subarray(0, 64).toString().startsWith('{"method":')) return;
    const message = JSON.parse(String(data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
      method?: string;
      params?: Record<string, unknown>;
    };
    if (message.method) {
      const waiter = events.get(message.method);
      if (waiter) events.delete(message.method), waiter(message.params ?? {});
      return onEvent(message.method, message.params ?? {});
    }
    const w = waiting.get(message.id!);
    if (!w) return;
    waiting.delete(message.id!);
    if (message.error) w.reject(new Error(message.error.message));
    else w.resolve(message.result);
  });
  return {
    send: <T>(method: string, params: Record<string, unknown> = {}, sessionId?: string, timeoutMs = CDP_TIMEOUT_MS) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        // No request to the browser waits without end: one that is not answered in time fails the run and says which.
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new CdpTimeout(`Chromium did not answer ${method} within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        waiting.set(id, {
          resolve: (v) => (clearTimeout(timer), resolve(v as T)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
        ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      }),
    next: (method: string, timeoutMs = CDP_TIMEOUT_MS) =>
      new Promise((resolve, reject) => {
        const timer = timeoutMs > 0 ? setTimeout(() => reject(new Error(`Chromium sent no ${method} within ${timeoutMs / 1000} s`)), timeoutMs) : undefined;
        events.set(method, (params) => (clearTimeout(timer), resolve(params)));
      }),
    close: () => ws.close(),
  };
}

/**
 * Chromium with one tab, driven over the DevTools protocol without its
 * Network domain: with it on (as Playwright always has it), Chromium copies
 * every WebSocket frame into the protocol — the 2.7 MB changeset state too —
 * and holds the page's next messages behind that copy, which no user's
 * browser does. The HTTP cache is cleared before every load instead.
 */
/** Starts Chromium with remote debugging and connects to it. */
async function launchBrowser(profile: string): Promise<{ cdp: Cdp; close(): Promise<void> }> {
  const chrome = spawn(
    '/usr/bin/chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdio: 'ignore' },
  );
  const portFile = join(profile, 'DevToolsActivePort');
  const deadline = Date.now() + 60_000;
  while (!existsSync(portFile) || readFileSync(portFile, 'utf8').split('\n').length < 2) {
    if (Date.now() > deadline) throw new Error('Chromium did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const [port, path] = readFileSync(portFile, 'utf8').split('\n');
  const cdp = await cdpConnect(`ws://127.0.0.1:${port}${path}`, (method, params) => {
    if (method === 'Runtime.exceptionThrown')
      console.error(`page error: ${JSON.stringify((params['exceptionDetails'] as { exception?: { description?: string } }).exception?.description ?? params)}`);
  });
  return {
    cdp,
    async close(): Promise<void> {
      cdp.close();
      const exited = new Promise((resolve) => chrome.once('exit', resolve));
      chrome.kill();
      await exited;
    },
  };
}

/**
 * A tab of the browser, driven over the DevTools protocol. A plain tab never
 * turns the Network domain on: with it on (as Playwright always has it),
 * Chromium copies every WebSocket frame into the protocol — the 2.7 MB
 * changeset state too — and holds the page's next messages behind that
 * copy, which no user's browser does; its HTTP cache is cleared before every
 * load instead. An `observed` tab has the Network domain on, with the HTTP
 * cache disabled through it, as the benchmark measured before.
 */
async function openTab(
  cdp: Cdp,
  observed: boolean,
): Promise<{ open(url: string, what: string, settleMs?: number, listed?: boolean, trace?: string): Promise<Load> }> {
  const { targetId } = await cdp.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
  await cdp.send('Page.enable', {}, sessionId);
  await cdp.send('Runtime.enable', {}, sessionId);
  // A tab whose renderer dies answers nothing more: the run fails at once, saying so.
  await cdp.send('Inspector.enable', {}, sessionId);
  let crashed = false;
  void cdp
    .next('Inspector.targetCrashed', 0)
    .then(() => (crashed = true))
    .catch(() => undefined);
  await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: OBSERVER }, sessionId);
  if (observed) {
    await cdp.send('Network.enable', {}, sessionId);
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true }, sessionId);
  }
  // Nothing is awaited inside the page: a promise that never settles there would hold the run with no deadline.
  const evaluate = async (expression: string, timeoutMs?: number): Promise<unknown> =>
    (await cdp.send<{ result: { value?: unknown } }>('Runtime.evaluate', { expression, returnByValue: true }, sessionId, timeoutMs)).result.value;
  /** Polls the page for a time it records (`window.firstDiffPaintAt`, …); past `ms`, fails saying what the page shows. */
  const waitFor = async (name: string, what: string, ms: number): Promise<number> => {
    const deadline = Date.now() + ms;
    for (;;) {
      // An evaluation sent while the tab changes document (from the blank page to the viewer, a renderer of its own)
      // can go unanswered (a run stalled on one with no processor use): it is sent again, until the load's deadline.
      const value = await evaluate(`location.protocol === 'http:' && typeof window.${name} === 'number' ? window.${name} : null`, 5000).catch(
        (error: Error) => {
          if (error instanceof CdpTimeout) return null;
          throw error;
        },
      );
      if (typeof value === 'number') return value;
      if (crashed) throw new Error(`no ${what}: the tab crashed (Chromium's renderer exited)`);
      if (Date.now() > deadline) {
        const shows = await evaluate(
          `JSON.stringify({ url: location.pathname + location.search.replace(/token=[^&]*/, 'token=…'), status: document.getElementById('status')?.textContent, toolbar: document.getElementById('toolbar')?.textContent, notice: document.querySelector('.notice')?.textContent, rows: document.querySelectorAll('.rl').length })`,
          10_000,
        ).catch((error: Error) => `(could not read the page: ${error.message})`);
        throw new Error(`no ${what} within ${ms / 1000} s; the page shows ${String(shows)}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    /** Opens a link in the tab (from a blank page): its time to first diff paint, to every file listed, and its largest frame. */
    async open(url: string, what: string, settleMs = SETTLE_MS, listed = false, trace?: string): Promise<Load> {
      await cdp.send('Page.navigate', { url: 'about:blank' }, sessionId);
      if (!observed) await cdp.send('Network.clearBrowserCache', {}, sessionId);
      if (trace)
        await cdp.send(
          'Tracing.start',
          {
            transferMode: 'ReturnAsStream',
            traceConfig: {
              includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink.user_timing', 'loading', 'toplevel'],
            },
          },
          sessionId,
        );
      await cdp.send('Page.navigate', { url }, sessionId);
      const paint = await waitFor('firstDiffPaintAt', `diff painted (${what})`, LOAD_TIMEOUT_MS);
      const all = listed ? await waitFor('allListedAt', `full list (${what})`, LOAD_TIMEOUT_MS) : undefined;
      // The page's work after its first paint (its list, the session's other changesets, and their copies into the
      // protocol when observed) finishes before the next round starts.
      await new Promise((r) => setTimeout(r, settleMs));
      const frame = (await evaluate('window.largestFrame')) as number;
      if (trace) {
        const complete = cdp.next('Tracing.tracingComplete');
        await cdp.send('Tracing.end', {}, sessionId);
        const { stream } = (await complete) as { stream: string };
        const chunks: string[] = [];
        for (;;) {
          const read = await cdp.send<{ data: string; eof: boolean; base64Encoded?: boolean }>('IO.read', { handle: stream, size: 1 << 20 }, sessionId);
          chunks.push(read.base64Encoded ? Buffer.from(read.data, 'base64').toString() : read.data);
          if (read.eof) break;
        }
        await cdp.send('IO.close', { handle: stream }, sessionId);
        writeFileSync(trace, chunks.join(''));
        console.log(`  trace of ${what} (painted at ${paint.toFixed(0)} ms): ${trace}`);
      }
      if (TIMELINE) {
        const log = JSON.parse((await evaluate('JSON.stringify(window.socketLog)')) as string) as [number, string, number, string][];
        const nav = (await evaluate(
          `(() => { const n = performance.getEntriesByType('navigation')[0]; return n ? [n.responseEnd, n.domInteractive].map((x) => x.toFixed(0)).join(' / ') : ''; })()`,
        )) as string;
        console.log(`  socket of ${what}: page response end / DOM interactive ${nav} ms; painted at ${paint.toFixed(0)} ms`);
        for (const [t, dir, size, about] of log)
          if (t <= paint + 200) console.log(`    ${t.toFixed(1).padStart(8)} ${dir.padEnd(4)} ${String(size).padStart(8)} ${about}`);
      }
      await cdp.send('Page.navigate', { url: 'about:blank' }, sessionId);
      return { paint, ...(all !== undefined ? { listed: all } : {}), frame };
    },
  };
}

/** What one load of a link measured. */
interface Load {
  /** Navigation to the first frame with changed lines, ms. */
  paint: number;
  /** Navigation to every file of the changeset in the page, ms. */
  listed?: number;
  /** The largest WebSocket message the page received, in characters (bytes: the JSON is ASCII here). */
  frame: number;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** One side of the comparison: a server, its viewer, a scripted client, and the largest frame that client received. */
interface Side {
  name: 'ours' | 'anchor';
  service: ChangesetService;
  client: Client;
  base: string;
  largest: { bytes: number };
}

/** Builds the viewer of commit `rev` into `out`: its sources exported from git, built with its own build script. */
function buildViewerAt(rev: string, work: string, out: string): void {
  const tree = join(work, `src-${rev}`);
  mkdirSync(tree, { recursive: true });
  // The shared compiler settings too, where the revision has them (esbuild reads the viewer's tsconfig, which extends them).
  const paths = ['viewer', 'protocol', 'reducers', 'diff', 'tsconfig.base.json'].filter((path) => {
    try {
      execFileSync('git', ['cat-file', '-e', `${rev}:${path}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  const archive = execFileSync('git', ['archive', rev, ...paths], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  symlinkSync(join(process.cwd(), 'node_modules'), join(tree, 'node_modules'));
  execFileSync(process.execPath, [join(tree, 'viewer', 'build.mjs'), '--no-typecheck', '--outdir', out], { stdio: 'inherit' });
}

async function startSide(name: Side['name'], work: string, viewerDir: string, repo: string): Promise<Side> {
  let service: ChangesetService | undefined;
  const security = createEndpointSecurity({ host: '127.0.0.1', staticDir: viewerDir, endpoint: () => endpointOfUrl(service?.server.url) });
  service = new ChangesetService({
    host: '127.0.0.1',
    port: 0,
    stateDir: join(work, `state-${name}`),
    log: () => undefined,
    checkUpgrade: security.checkUpgrade,
    selectProtocol: security.selectProtocol,
    handleHttpRequest: security.handleHttpRequest,
    // The previous behaviour: 5,000 files in the state whatever their size.
    ...(name === 'anchor' ? { changesetMaxStateBytes: Number.POSITIVE_INFINITY } : {}),
  });
  const { url } = await service.start();
  const token = security.token!;
  const largest = { bytes: 0 };
  const client = await connect(url, token, (bytes) => (largest.bytes = Math.max(largest.bytes, bytes)));
  await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
  return { name, service, client, base: `${url.replace(/^ws:/, 'http:')}?token=${encodeURIComponent(token)}&session=bench`, largest };
}

const SESSION = 'ahp-session:/bench';
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate('bench', 'turn'), { turnId });

/** What the turn-end phase measured for one kind of turn: each side's times, alternated, and the load before each round. */
type TurnTimes = { ours: number[]; anchor: number[]; loads: number[] };

/**
 * Records `rounds` turns on both servers, each timing `turnEnded` → its turn
 * changeset ready at its client. In each round both start a turn, `edit`
 * changes the files once, and the two end it one after the other, the first
 * to end swapping every round (`alternated`): the first reads files the
 * second then finds in a warm page cache.
 */
async function turns(ours: Side, anchor: Side, rounds: number, turnId: (round: number) => string, edit: (round: number) => void): Promise<TurnTimes> {
  let calls = 0;
  const end = async (side: Side): Promise<number> => {
    const round = Math.floor(calls++ / 2);
    const id = turnId(round);
    if (calls % 2 === 1) {
      // The first of the round starts the turn on both servers and makes the edit.
      for (const s of [ours, anchor]) {
        await s.client.request('harness/turnStarted', { channel: SESSION, turnId: id, message: id });
        await s.client.request('subscribe', { channel: turnUri(id) });
      }
      edit(round);
    }
    const ready = side.client.waitReady(turnUri(id));
    const t0 = performance.now();
    await side.client.request('harness/turnEnded', { channel: SESSION, turnId: id });
    await ready;
    return performance.now() - t0;
  };
  return alternated(
    rounds,
    () => end(ours),
    () => end(anchor),
  );
}

function load(): string {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-viewer-'));
  const sides: Side[] = [];
  const browsers: { close(): Promise<void> }[] = [];
  try {
    await measure(work, sides, browsers);
  } finally {
    for (const browser of browsers) await browser.close();
    for (const side of sides) {
      side.client.close();
      await side.service.stop();
    }
    rmSync(work, { recursive: true, force: true });
  }
}

async function measure(work: string, sides: Side[], browsers: { cdp?: Cdp; close(): Promise<void> }[]): Promise<void> {
  const ourViewer = join(work, 'viewer');
  const anchorViewer = join(work, 'viewer-anchor');
  // The viewer as `npm run build` makes it (without its type check), into a folder of this run's own; the anchor's from git.
  execFileSync(process.execPath, [join(process.cwd(), 'viewer', 'build.mjs'), '--no-typecheck', '--outdir', ourViewer], { stdio: 'inherit' });
  buildViewerAt(ANCHOR_REV, work, anchorViewer);

  // A monorepo of WIDE files, committed; both servers record the same turns over it.
  const repo = join(work, 'repo');
  console.log(`generating ${WIDE} files…`);
  const tail = Array.from({ length: 6 }, (_, k) => `export const w${k} = ${k};`).join('\n');
  const wide = (i: number, name: string) => `import { ${name} } from 'lib';\nexport const v${i} = ${name}(${i});\n${tail}\n`;
  const widePath = (i: number) => `mono/pkg${String(Math.floor(i / 100)).padStart(3, '0')}/file${String(i).padStart(5, '0')}.ts`;
  writeTree(repo, { 'README.md': '# bench\n' });
  for (let i = 0; i < WIDE; i++) writeTree(repo, { [widePath(i)]: wide(i, 'old') });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: gitEnv });
  execFileSync('git', ['add', '-A'], { cwd: repo, env: gitEnv });
  execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: repo, env: gitEnv });

  sides.push(await startSide('ours', work, ourViewer, repo));
  sides.push(await startSide('anchor', work, anchorViewer, repo));
  const [ours, anchor] = sides as [Side, Side];
  /** FILES new files of 20 lines; later rounds of the turn-end phase add as many again in folders of their own. */
  const many = (round: number): Record<string, string> => {
    const files: Record<string, string> = {};
    const folder = round === 0 ? '' : `more${round}/`;
    for (let i = 0; i < FILES; i++) {
      files[`${folder}pkg${String(Math.floor(i / 100)).padStart(2, '0')}/file${String(i).padStart(4, '0')}.ts`] =
        Array.from({ length: 20 }, (_, k) => `export const v${i}_${k} = ${k};`).join('\n') + '\n';
    }
    return files;
  };
  console.log(`recording the turns (${TURN_ROUNDS} of each kind, the side that ends first alternating)…`);
  const loadFiles = load();
  const readyFiles = await turns(
    ours,
    anchor,
    TURN_ROUNDS,
    (r) => (r === 0 ? 'files' : `files-${r + 1}`),
    (r) => writeTree(repo, many(r)),
  );
  const long =
    Array.from({ length: LINES }, (_, k) => `export function f${k}(x: number): number { return x * ${k} + ${k % 7}; } // line ${k + 1}`).join('\n') + '\n';
  if (LINES > 0)
    await turns(
      ours,
      anchor,
      1,
      () => 'long',
      () => writeTree(repo, { 'src/long.ts': long }),
    );
  const loadWide = load();
  const readyWide =
    WIDE > 0
      ? await turns(
          ours,
          anchor,
          TURN_ROUNDS,
          (r) => (r === 0 ? 'codemod' : `codemod-${r + 1}`),
          (r) => {
            for (let i = 0; i < WIDE; i++) writeFileSync(join(repo, widePath(i)), wide(i, r === 0 ? 'renamed' : `renamed${r + 1}`));
          },
        )
      : undefined;
  const frames = { ours: ours.largest.bytes, anchor: anchor.largest.bytes };

  const ms = (x: number) => `${x.toFixed(0).padStart(5)} ms`;
  const spread = (xs: number[]) => `min ${ms(Math.min(...xs))}  max ${ms(Math.max(...xs))}`;
  const paints = (name: string) => results.get(name)!.map((l) => l.paint);
  const row = (name: string, xs: number[], target?: number): string =>
    `  ${name.padEnd(46)} median ${ms(median(xs))}  ${spread(xs)}` +
    (target === undefined ? '' : `   target ≤ ${target} ms ${median(xs) <= target ? 'met' : 'MISSED'}`);
  const ratio = (a: number[], b: number[]) => {
    const pairs = a.map((x, i) => (x / b[i]!).toFixed(2)).join(' ');
    return `  ratio ours/anchor ${(median(a) / median(b)).toFixed(2)}x  (per round: ${pairs})`;
  };
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const loads1 = (t: TurnTimes) => t.loads.map((x) => x.toFixed(1)).join(' ');
  console.log(`\nturn end → turn changeset ready at a subscribed client (${TURN_ROUNDS} rounds alternated):`);
  console.log(`${FILES} added files (load ${loadFiles}; 1-minute load per round ${loads1(readyFiles)}):`);
  console.log(row('ours', readyFiles.ours));
  console.log(row('anchor', readyFiles.anchor));
  console.log(ratio(readyFiles.ours, readyFiles.anchor));
  if (readyWide) {
    console.log(`${WIDE}-file codemod (load ${loadWide}; 1-minute load per round ${loads1(readyWide)}):`);
    console.log(row('ours', readyWide.ours));
    console.log(row('anchor', readyWide.anchor));
    console.log(ratio(readyWide.ours, readyWide.anchor));
  }

  if (WIDE > 0) {
    // Listing every file of the codemod turn: compact pages (what the viewer loads) against full pages, alternated.
    const listing = { compact: [] as number[], full: [] as number[], compactBytes: 0, fullBytes: 0, compactPages: 0, fullPages: 0 };
    for (let round = 0; round < 3; round++) {
      for (const form of round % 2 === 0 ? (['compact', 'full'] as const) : (['full', 'compact'] as const)) {
        const t0 = performance.now();
        let cursor: string | undefined;
        let pages = 0;
        let files = 0;
        do {
          const page = (await ours.client.request('changesetFiles', {
            channel: turnUri('codemod'),
            form,
            ...(cursor ? { cursor } : {}),
          })) as ChangesetFilesResult;
          pages++;
          files += page.compact ? page.compact.flags.length : page.files!.length;
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        if (files !== WIDE) throw new Error(`listed ${files} files of ${WIDE}`);
        listing[form].push(performance.now() - t0);
        listing[`${form}Pages`] = pages;
      }
    }
    ours.largest.bytes = 0;
    await ours.client.request('changesetFiles', { channel: turnUri('codemod') });
    listing.compactBytes = ours.largest.bytes;
    console.log(`\nlisting all ${WIDE} files with changesetFiles (3 rounds alternated, load ${load()}):`);
    console.log(`  compact: median ${ms(median(listing.compact))} in ${listing.compactPages} pages (first page ${kb(listing.compactBytes)})`);
    console.log(`  full:    median ${ms(median(listing.full))} in ${listing.fullPages} pages`);
    console.log(`  ratio compact/full ${(median(listing.compact) / median(listing.full)).toFixed(2)}x`);
  }
  const base = (side: Side) => side.base;
  // The observed tab runs in a browser of its own: the Network domain on in one tab slows the others' sockets too.
  const browser = await launchBrowser(join(work, 'chromium'));
  browsers.push(browser);
  const observedBrowser = OBSERVED ? await launchBrowser(join(work, 'chromium-observed')) : undefined;
  if (observedBrowser) browsers.push(observedBrowser);
  const tab = await openTab(browser.cdp, false);
  const observedTab = observedBrowser ? await openTab(observedBrowser.cdp, true) : undefined;
  type Case = { name: string; side: Side; url: string; settle: number; listed: boolean };
  const cases: Case[] = [];
  for (const side of sides) {
    cases.push({ name: `files-${side.name}`, side, url: `${base(side)}&turn=files`, settle: SETTLE_MS, listed: side === ours });
    if (WIDE > 0) cases.push({ name: `wide-${side.name}`, side, url: `${base(side)}&turn=codemod`, settle: SETTLE_WIDE_MS, listed: side === ours });
  }
  if (LINES > 0) cases.push({ name: 'lines-ours', side: ours, url: `${base(ours)}&turn=long&file=src/long.ts`, settle: SETTLE_MS, listed: false });
  const results = new Map<string, Load[]>(cases.map((c) => [c.name, []]));
  const loads: string[] = [];
  const observedTimes: number[] = [];
  const printRounds = (): void => {
    console.log(`\nviewer: time to first diff paint (navigation → first frame with changed lines), ${loads.length} rounds, anchor = ${ANCHOR_REV}`);
    console.log(`load average per round (before → after): ${loads.join(' | ')}`);
    console.log(`${FILES}-file turn (added files):`);
    console.log(row('ours', paints('files-ours'), TARGETS.files));
    console.log(row('anchor (previous viewer and state)', paints('files-anchor')));
    console.log(ratio(paints('files-ours'), paints('files-anchor')));
    console.log(
      row(
        'ours: every file listed',
        results.get('files-ours')!.map((l) => l.listed!),
      ),
    );
    if (WIDE > 0) {
      console.log(`${WIDE}-file codemod turn (one line in each file):`);
      console.log(row('ours', paints('wide-ours'), TARGETS.wide));
      console.log(row('anchor (previous viewer and state)', paints('wide-anchor')));
      console.log(ratio(paints('wide-ours'), paints('wide-anchor')));
      console.log(
        row(
          `ours: all ${WIDE} files listed`,
          results.get('wide-ours')!.map((l) => l.listed!),
        ),
      );
      console.log(`  the anchor lists the first 5,000 of ${WIDE} files`);
    }
    if (LINES > 0) {
      console.log(`${LINES}-line file:`);
      console.log(row('ours', paints('lines-ours'), TARGETS.lines));
    }
    if (observedTimes.length > 0) console.log(row(`${FILES} files, Network domain on (ours)`, observedTimes));
    const largestPage = (name: string) => Math.max(...results.get(name)!.map((l) => l.frame));
    console.log('\nlargest frame received (bytes of JSON):');
    console.log(`  page, ${FILES}-file turn: ours ${kb(largestPage('files-ours'))}, anchor ${kb(largestPage('files-anchor'))}`);
    if (WIDE > 0) console.log(`  page, ${WIDE}-file turn: ours ${kb(largestPage('wide-ours'))}, anchor ${kb(largestPage('wide-anchor'))}`);
    console.log(`  scripted client over the turns (states, snapshots, envelopes): ours ${kb(frames.ours)}, anchor ${kb(frames.anchor)}`);
  };
  console.log('warming up…');
  for (const c of cases) {
    console.log(`  ${c.name}`);
    await tab.open(c.url, c.name, c.settle, c.listed);
  }
  if (observedTab) await observedTab.open(`${base(ours)}&turn=files`, 'files-ours, Network domain on');
  for (let round = 0; round < ROUNDS; round++) {
    const before = load();
    // Ours and the anchor alternate case by case; every other round the order is reversed.
    for (const c of round % 2 === 0 ? cases : [...cases].reverse()) results.get(c.name)!.push(await tab.open(c.url, c.name, c.settle, c.listed));
    if (observedTab) observedTimes.push((await observedTab.open(`${base(ours)}&turn=files`, 'files-ours, Network domain on')).paint);
    loads.push(`${before} → ${load()}`);
    console.log(`round ${round + 1}/${ROUNDS} done (load ${loads.at(-1)})`);
    printRounds();
  }
  if (TRACE !== undefined) {
    // One more load of each case with a Chromium trace of the page (open in chrome://tracing or DevTools' Performance panel).
    mkdirSync(TRACE, { recursive: true });
    for (const c of cases) await tab.open(c.url, c.name, c.settle, c.listed, join(TRACE, `${c.name}.json`));
  }
}

await main();
