/**
 * Viewer benchmark: time to first diff paint in Chromium — from navigation
 * to the first frame that shows changed lines of a diff — for a deep link
 * to (a) a 5,000-file turn changeset (the review page: subscribe, lay out
 * 5,000 files, fetch and draw the first ones) and (b) one file of 10,000
 * added lines. The whole product runs in-process with the token, origin
 * check and CSP of `serve`; each round opens the link in one browser tab,
 * as a link opened in a running browser, with the HTTP cache cleared; the
 * two cases alternate round by round and medians are reported. The tab is
 * driven over the DevTools protocol without its Network domain, which
 * would copy every WebSocket frame into the protocol (see `launchTab`).
 *
 *   npm run bench -- viewer [--rounds 7] [--files 5000] [--lines 10000]
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { createEndpointSecurity, endpointOfUrl } from '../../server/security/index.js';
import { ChangesetService } from '../../server/service.js';
import { gitEnv } from '../common/workspace.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 7);
const FILES = Number(args.get('files') ?? 5000);
const LINES = Number(args.get('lines') ?? 10_000);
/** Pause after each load, so one round's trailing work does not fall into the next. */
const SETTLE_MS = 700;
/** Targets on the reference machine (see docs/performance.md). */
const TARGETS = { files: 300, lines: 500 };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A minimal JSON-RPC client over the endpoint (with the bearer token). */
async function connect(url: string, token: string): Promise<{ request(method: string, params: unknown): Promise<unknown>; close(): void }> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  ws.on('message', (data: Buffer) => {
    // Events carrying a copy of a large WebSocket frame are dropped unread: parsing them would load this process, the server's.
    if (data.length > 65_536 && data.subarray(0, 64).toString().startsWith('{"method":')) return;
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
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
  return { request, close: () => ws.close() };
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** Marks, in every page the tab loads, the first frame that shows a changed diff line (ms since navigation). */
const OBSERVER = `(() => {
  let done;
  window.firstDiffPaint = new Promise((resolve) => (done = resolve));
  const observer = new MutationObserver(() => {
    if (!document.querySelector('.rl.add, .rl.del, tr.line.add, tr.line.del')) return;
    observer.disconnect();
    // The frame after the lines are in the page is the one that shows them.
    requestAnimationFrame(() => done(performance.now()));
  });
  observer.observe(document, { childList: true, subtree: true });
})();`;

/** A Chrome DevTools Protocol connection to one browser, with flat sessions for its tabs. */
interface Cdp {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<T>;
  close(): void;
}

async function cdpConnect(url: string, onEvent: (method: string, params: Record<string, unknown>) => void): Promise<Cdp> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
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
    if (message.method) return onEvent(message.method, message.params ?? {});
    const w = waiting.get(message.id!);
    if (!w) return;
    waiting.delete(message.id!);
    if (message.error) w.reject(new Error(message.error.message));
    else w.resolve(message.result);
  });
  return {
    send: <T>(method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
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
async function openTab(cdp: Cdp, observed: boolean): Promise<{ open(url: string): Promise<number> }> {
  const { targetId } = await cdp.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1400, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
  await cdp.send('Page.enable', {}, sessionId);
  await cdp.send('Runtime.enable', {}, sessionId);
  await cdp.send('Page.addScriptToEvaluateOnNewDocument', { source: OBSERVER }, sessionId);
  if (observed) {
    await cdp.send('Network.enable', {}, sessionId);
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true }, sessionId);
  }
  const evaluate = async (expression: string): Promise<unknown> =>
    (await cdp.send<{ result: { value?: unknown } }>('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId)).result.value;
  return {
    /** Opens a link in the tab (from a blank page) and returns its time to first diff paint. */
    async open(url: string): Promise<number> {
      await cdp.send('Page.navigate', { url: 'about:blank' }, sessionId);
      if (!observed) await cdp.send('Network.clearBrowserCache', {}, sessionId);
      await cdp.send('Page.navigate', { url }, sessionId);
      const deadline = Date.now() + 120_000;
      for (;;) {
        const value = await evaluate(`location.protocol === 'http:' && window.firstDiffPaint !== undefined ? window.firstDiffPaint : null`);
        if (typeof value === 'number') {
          // The page's work after its first paint (the session's other changesets, 2.7 MB each here, and their
          // copies into the protocol when observed) finishes before the next round starts.
          await new Promise((r) => setTimeout(r, SETTLE_MS));
          await cdp.send('Page.navigate', { url: 'about:blank' }, sessionId);
          return value;
        }
        if (Date.now() > deadline) throw new Error(`no diff painted at ${url}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-viewer-'));
  const viewerDir = join(work, 'viewer');
  // The viewer as `npm run build` makes it (without its type check), into a folder of this run's own.
  execFileSync(process.execPath, [join(process.cwd(), 'viewer', 'build.mjs'), '--no-typecheck', '--outdir', viewerDir], { stdio: 'inherit' });
  const repo = join(work, 'repo');
  writeTree(repo, { 'README.md': '# bench\n' });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: gitEnv });
  execFileSync('git', ['add', '-A'], { cwd: repo, env: gitEnv });
  execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: repo, env: gitEnv });

  let service: ChangesetService | undefined;
  const security = createEndpointSecurity({ host: '127.0.0.1', staticDir: viewerDir, endpoint: () => endpointOfUrl(service?.server.url) });
  service = new ChangesetService({
    host: '127.0.0.1',
    port: 0,
    stateDir: join(work, 'state'),
    log: () => undefined,
    checkUpgrade: security.checkUpgrade,
    selectProtocol: security.selectProtocol,
    handleHttpRequest: security.handleHttpRequest,
  });
  const { url } = await service.start();
  const token = security.token!;
  const client = await connect(url, token);
  const session = 'ahp-session:/bench';
  await client.request('createSession', { channel: session, workingDirectory: pathToFileURL(repo).href });

  const many: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) {
    many[`pkg${String(Math.floor(i / 100)).padStart(2, '0')}/file${String(i).padStart(4, '0')}.ts`] =
      Array.from({ length: 20 }, (_, k) => `export const v${i}_${k} = ${k};`).join('\n') + '\n';
  }
  await client.request('harness/turnStarted', { channel: session, turnId: 'files', message: `${FILES} files` });
  writeTree(repo, many);
  await client.request('harness/turnEnded', { channel: session, turnId: 'files' });
  const long =
    Array.from({ length: LINES }, (_, k) => `export function f${k}(x: number): number { return x * ${k} + ${k % 7}; } // line ${k + 1}`).join('\n') + '\n';
  await client.request('harness/turnStarted', { channel: session, turnId: 'long', message: `one ${LINES}-line file` });
  writeTree(repo, { 'src/long.ts': long });
  await client.request('harness/turnEnded', { channel: session, turnId: 'long' });

  const base = `${url.replace(/^ws:/, 'http:')}?token=${encodeURIComponent(token)}&session=bench`;
  // The observed tab runs in a browser of its own: the Network domain on in one tab slows the others' sockets too.
  const browsers = [await launchBrowser(join(work, 'chromium')), await launchBrowser(join(work, 'chromium-observed'))];
  const tab = await openTab(browsers[0]!.cdp, false);
  const observedTab = await openTab(browsers[1]!.cdp, true);
  const times = { files: [] as number[], lines: [] as number[], observed: [] as number[] };
  try {
    // One warm-up of each (the server computes and caches the turn changesets on first subscribe).
    await tab.open(`${base}&turn=files`);
    await tab.open(`${base}&turn=long&file=src/long.ts`);
    await observedTab.open(`${base}&turn=files`);
    for (let round = 0; round < ROUNDS; round++) {
      times.files.push(await tab.open(`${base}&turn=files`));
      times.lines.push(await tab.open(`${base}&turn=long&file=src/long.ts`));
      times.observed.push(await observedTab.open(`${base}&turn=files`));
    }
  } finally {
    for (const browser of browsers) await browser.close();
    client.close();
    await service.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const row = (name: string, xs: number[], target?: number): string =>
    `${name.padEnd(44)} median ${median(xs).toFixed(0).padStart(5)} ms   min ${Math.min(...xs)
      .toFixed(0)
      .padStart(5)}   max ${Math.max(...xs)
      .toFixed(0)
      .padStart(5)}` + (target === undefined ? '' : `   target < ${target} ms ${median(xs) < target ? 'met' : 'MISSED'}`);
  console.log(`viewer: time to first diff paint (navigation → first frame with changed lines), ${ROUNDS} rounds`);
  console.log(row(`${FILES}-file changeset`, times.files, TARGETS.files));
  console.log(row(`${LINES}-line file`, times.lines, TARGETS.lines));
  console.log(row(`${FILES}-file changeset, Network domain on`, times.observed));
}

await main();
