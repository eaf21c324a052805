/**
 * What the browser tests share: the viewer built once for the run
 * (`global-setup.ts`), the whole product started in-process and locked down
 * as `serve` locks it (token, origin check, the viewer's static files with
 * the CSP), a scripted client that records turns, and Debian's Chromium
 * driven by playwright-core.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { ChangesetService, type ChangesetServiceOptions } from '../../server/service.js';
import { createEndpointSecurity, endpointOfUrl } from '../../server/security/index.js';
import { TestClient } from '../helpers/client.js';
import { recordTurn as record } from '../helpers/changesets.js';
import { TempDirs } from '../helpers/workspace.js';

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const CHROMIUM = '/usr/bin/chromium';

/** The folder the viewer was built into for this run (by `global-setup.ts`; no test rewrites it). */
export function viewerDir(): string {
  return inject('viewerDir');
}

/** Launches headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    timeout: 60_000,
  });
}

/** The product running for one test, with the viewer served at `viewerUrl`. */
export interface ViewerServer {
  service: ChangesetService;
  /** `http://127.0.0.1:PORT/?token=…`, what `serve` prints. */
  viewerUrl: string;
  /** The bearer token. */
  token: string;
  /** A scripted client connected with the token. */
  client: TestClient;
  stop(): Promise<void>;
}

/** Starts the product with endpoint security, serving the viewer built into `viewerDir`. */
export async function startViewerServer(viewerDir: string, options: ChangesetServiceOptions = {}): Promise<ViewerServer> {
  const stateDir = await mkdtemp(join(tmpdir(), 'viewer-e2e-'));
  let service: ChangesetService | undefined;
  const security = createEndpointSecurity({ host: '127.0.0.1', staticDir: viewerDir, endpoint: () => endpointOfUrl(service?.server.url) });
  service = new ChangesetService({
    host: '127.0.0.1',
    port: 0,
    stateDir,
    log: () => undefined,
    checkUpgrade: security.checkUpgrade,
    selectProtocol: security.selectProtocol,
    handleHttpRequest: security.handleHttpRequest,
    ...options,
  });
  const { url } = await service.start();
  const token = security.token!;
  const client = await TestClient.connect(url, { token, check: null });
  await client.initialize();
  const running = service;
  return {
    service: running,
    viewerUrl: `${url.replace(/^ws:/, 'http:')}?token=${encodeURIComponent(token)}`,
    token,
    client,
    stop: async () => {
      await client.close().catch(() => undefined);
      await running.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** Creates a session over a directory; returns its id and URI. */
export async function createSession(client: TestClient, id: string, dir: string): Promise<string> {
  const uri = `ahp-session:/${id}`;
  await client.request('createSession', { channel: uri, workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 60_000 });
  return uri;
}

/** Records one turn around `edit` (resolves once changesets reflect it). */
export function recordTurn(client: TestClient, session: string, turnId: string, message: string, edit: () => void): Promise<void> {
  return record(client, session, turnId, edit, message);
}

/** The browser and the server a test file's tests use, with their lifecycle hooks registered. */
export interface ViewerFixture {
  readonly browser: Browser;
  readonly server: ViewerServer;
  readonly temp: TempDirs;
}

/**
 * Registers the hooks every viewer test file needs: one browser per file,
 * each test's pages closed after it, and a fresh server per test (`test`)
 * or one server for the whole file (`file`, for tests that look at the same
 * recorded turns).
 */
export function useViewerFixture(serverScope: 'test' | 'file' = 'test'): ViewerFixture {
  const temp = new TempDirs();
  let browser: Browser | undefined;
  let server: ViewerServer | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
    if (serverScope === 'file') server = await startViewerServer(viewerDir());
  }, 120_000);
  afterAll(async () => {
    if (serverScope === 'file') {
      await server?.stop();
      temp.cleanup();
    }
    await browser?.close();
  });
  if (serverScope === 'test') {
    beforeEach(async () => {
      server = await startViewerServer(viewerDir());
    });
  }
  afterEach(async () => {
    // A page left open keeps drawing, and reconnecting to a stopped server, beside the next test.
    if (browser) await closePages(browser);
    if (serverScope === 'test') {
      await server?.stop();
      temp.cleanup();
    }
  });
  return {
    get browser() {
      return browser!;
    },
    get server() {
      return server!;
    },
    temp,
  };
}

/** Closes every page a test opened in the browser. */
export async function closePages(browser: Browser): Promise<void> {
  await Promise.all(browser.contexts().map((context) => context.close().catch(() => undefined)));
}

/** What a test can choose about the page before it loads. */
export interface ViewerOptions {
  /** The remembered layout: every file on one page (the default) or one file at a time. */
  layout?: 'all' | 'file';
  /** The system colour scheme the browser reports. */
  colorScheme?: 'light' | 'dark';
  /** A script run in every page before the page's own (to watch what it does). */
  initScript?: string;
}

/** Opens the viewer in a new page and collects page errors (a CSP violation or an exception fails the test). */
export async function openViewer(
  browser: Browser,
  url: string,
  viewport = { width: 1400, height: 860 },
  options: ViewerOptions = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, colorScheme: options.colorScheme ?? 'light' });
  if (options.layout) {
    await context.addInitScript(
      (layout) => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem('changeset-server.layout', layout),
      options.layout,
    );
  }
  if (options.initScript) await context.addInitScript(options.initScript);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  // Generous: on a loaded machine, beside another test file, a page can take many seconds to draw what a test waits for.
  page.setDefaultTimeout(60_000);
  await page.goto(url);
  return { page, errors };
}

/**
 * The browser globals the tests' in-page functions touch, typed minimally:
 * the test TypeScript project has no DOM library, and these functions run
 * in the page (`page.evaluate`), reaching them through `globalThis`.
 */
export interface PageGlobals {
  location: { search: string };
  document: { getElementById(id: string): { scrollTop: number; scrollHeight: number } | null };
  requestAnimationFrame(callback: () => void): number;
  WebSocket: new (url: string | URL, protocols?: string | string[]) => PageSocket;
  /** Sockets the page opened, recorded by the test's init script. */
  sockets: PageSocket[];
}

/** The part of a page's WebSocket the tests use. */
export interface PageSocket {
  close(): void;
}
