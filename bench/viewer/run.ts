/**
 * Viewer benchmark: time to first diff paint in Chromium — from navigation
 * to the first frame that shows changed lines of a diff — for a deep link
 * to (a) a 5,000-file turn changeset (the review page: subscribe, lay out
 * 5,000 files, fetch and draw the first ones) and (b) one file of 10,000
 * added lines. The whole product runs in-process with the token, origin
 * check and CSP of `serve`; each round opens the link in one browser tab,
 * as a link opened in a running browser, with the HTTP cache off; the two
 * cases alternate round by round and medians are reported.
 *
 *   npm run bench -- viewer [--rounds 7] [--files 5000] [--lines 10000]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { createEndpointSecurity, endpointOfUrl } from '../../server/security/index.js';
import { ChangesetService } from '../../server/service.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const ROUNDS = Number(args.get('rounds') ?? 7);
const FILES = Number(args.get('files') ?? 5000);
const LINES = Number(args.get('lines') ?? 10_000);
/** Targets on the reference machine (see docs/performance.md). */
const TARGETS = { files: 300, lines: 500 };

const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

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
  ws.on('message', (data) => {
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

/**
 * A browser tab that records, on every page it loads, the time (ms since
 * navigation) of the first frame showing a changed diff line; its HTTP
 * cache is off, so every load fetches the page and its bundle again.
 */
async function measuringTab(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(() => {
    const g = globalThis as unknown as {
      document: { querySelector(s: string): unknown };
      MutationObserver: new (cb: () => void) => { observe(n: unknown, o: unknown): void; disconnect(): void };
      requestAnimationFrame(cb: () => void): void;
      performance: { now(): number };
      firstDiffPaint?: number;
    };
    const observer = new g.MutationObserver(() => {
      if (!g.document.querySelector('.rl.add, .rl.del, tr.line.add, tr.line.del')) return;
      observer.disconnect();
      // The frame after the lines are in the page is the one that shows them.
      g.requestAnimationFrame(() => {
        g.firstDiffPaint = g.performance.now();
      });
    });
    observer.observe(g.document, { childList: true, subtree: true });
  });
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  return page;
}

/** Opens a link in the tab (from a blank page) and returns its time to first diff paint. */
async function firstDiffPaint(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  await page.goto(url);
  const done = await page.waitForFunction(() => (globalThis as unknown as { firstDiffPaint?: number }).firstDiffPaint);
  return (await done.jsonValue()) as number;
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
    many[`pkg${String(Math.floor(i / 100)).padStart(2, '0')}/file${String(i).padStart(4, '0')}.ts`] = Array.from({ length: 20 }, (_, k) => `export const v${i}_${k} = ${k};`).join('\n') + '\n';
  }
  await client.request('harness/turnStarted', { channel: session, turnId: 'files', message: `${FILES} files` });
  writeTree(repo, many);
  await client.request('harness/turnEnded', { channel: session, turnId: 'files' });
  const long = Array.from({ length: LINES }, (_, k) => `export function f${k}(x: number): number { return x * ${k} + ${k % 7}; } // line ${k + 1}`).join('\n') + '\n';
  await client.request('harness/turnStarted', { channel: session, turnId: 'long', message: `one ${LINES}-line file` });
  writeTree(repo, { 'src/long.ts': long });
  await client.request('harness/turnEnded', { channel: session, turnId: 'long' });

  const base = `${url.replace(/^ws:/, 'http:')}?token=${encodeURIComponent(token)}&session=bench`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  const times = { files: [] as number[], lines: [] as number[] };
  try {
    const tab = await measuringTab(browser);
    // One warm-up of each (the server computes and caches the turn changesets on first subscribe).
    await firstDiffPaint(tab, `${base}&turn=files`);
    await firstDiffPaint(tab, `${base}&turn=long&file=src/long.ts`);
    for (let round = 0; round < ROUNDS; round++) {
      times.files.push(await firstDiffPaint(tab, `${base}&turn=files`));
      times.lines.push(await firstDiffPaint(tab, `${base}&turn=long&file=src/long.ts`));
    }
  } finally {
    await browser.close();
    client.close();
    await service.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const row = (name: string, xs: number[], target: number): string =>
    `${name.padEnd(34)} median ${median(xs).toFixed(0).padStart(5)} ms   min ${Math.min(...xs).toFixed(0).padStart(5)}   max ${Math.max(...xs).toFixed(0).padStart(5)}   target < ${target} ms ${median(xs) < target ? 'met' : 'MISSED'}`;
  console.log(`viewer: time to first diff paint (navigation → first frame with changed lines), ${ROUNDS} rounds`);
  console.log(row(`${FILES}-file changeset`, times.files, TARGETS.files));
  console.log(row(`${LINES}-line file`, times.lines, TARGETS.lines));
}

await main();
