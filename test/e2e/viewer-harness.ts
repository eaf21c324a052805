/**
 * What the browser tests share: the viewer built once for the run and one
 * Chromium that every test file connects to (`global-setup.ts`), the whole
 * product started in-process and locked down as `serve` locks it (token,
 * origin check, the viewer's static files with the CSP), and a scripted
 * client that records turns. A test file gets all of it from
 * `useViewerFixture()`; every page a test opens is in a browser context of
 * its own, closed after the test, so nothing a page stored reaches another.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { ChangesetService, type ChangesetServiceOptions } from '../../server/service.js';
import { createEndpointSecurity, endpointOfUrl } from '../../server/security/index.js';
import { TestClient } from '../helpers/client.js';
import { recordTurn as record } from '../helpers/changesets.js';
import { TempDirs } from '../helpers/workspace.js';

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** The folder the viewer was built into for this run (by `global-setup.ts`; no test rewrites it). */
export function viewerDir(): string {
  return inject('viewerDir');
}

/**
 * Connects to the run's Chromium (started once by `global-setup.ts`, shared by every browser test file).
 * The connection sees only the contexts it creates; closing it closes them and leaves the browser to the others.
 */
export function connectBrowser(): Promise<Browser> {
  return chromium.connect(inject('browserEndpoint'), { timeout: 60_000 });
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
 * Registers the hooks every viewer test file needs: a connection to the
 * run's browser for the file, a blank page made ready at the start of each
 * test (see {@link prepareSpare}), each test's pages closed after it, and a
 * fresh server per test (`test`) or one server for the whole file (`file`,
 * for tests that look at the same recorded turns; `none` for a file that
 * starts its own).
 */
export function useViewerFixture(serverScope: 'test' | 'file' | 'none' = 'test'): ViewerFixture {
  const temp = new TempDirs();
  let browser: Browser | undefined;
  let server: ViewerServer | undefined;
  beforeAll(async () => {
    browser = await connectBrowser();
    if (serverScope === 'file') server = await startViewerServer(viewerDir());
  }, 120_000);
  afterAll(async () => {
    if (serverScope === 'file') await server?.stop();
    if (serverScope !== 'test') temp.cleanup();
    await browser?.close();
  });
  beforeEach(async () => {
    if (browser) prepareSpare(browser);
    if (serverScope === 'test') server = await startViewerServer(viewerDir());
  });
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
      if (!server) throw new Error(`this file's viewer fixture starts no server (${serverScope})`);
      return server;
    },
    temp,
  };
}

/**
 * The pages of one test file on its browser connection. A test's first page
 * is in the file's browser context (a context costs the browser far more
 * than a page); each further page a test opens is in a context of its own,
 * another browser as far as the pages can tell. Pages are closed after each
 * test, and a page's origin starts with empty storage (see
 * {@link FRESH_ORIGIN}), so nothing one test's page stored reaches another.
 */
interface FilePages {
  context?: Promise<BrowserContext>;
  /** A blank page in the file's context, made ahead for the next test's first page. */
  spare?: Promise<Page | undefined>;
  /** Pages opened since the last {@link closePages}. */
  opened: number;
}

const filePages = new WeakMap<Browser, FilePages>();

function pagesOf(browser: Browser): FilePages {
  let pages = filePages.get(browser);
  if (!pages) filePages.set(browser, (pages = { opened: 0 }));
  return pages;
}

function fileContext(browser: Browser): Promise<BrowserContext> {
  const pages = pagesOf(browser);
  pages.context ??= browser.newContext();
  return pages.context;
}

/**
 * Starts making a blank page for the next test's first {@link openViewer}
 * on this browser, so that its renderer starts while the test records its
 * turns instead of after. Nothing is loaded in it before `openViewer` sets
 * it up as it would a new page.
 */
export function prepareSpare(browser: Browser): void {
  const pages = pagesOf(browser);
  pages.spare ??= fileContext(browser)
    .then((context) => context.newPage())
    .catch(() => undefined);
}

/** Closes every page a test opened on this browser connection, and the contexts of its further pages. */
export async function closePages(browser: Browser): Promise<void> {
  const pages = pagesOf(browser);
  pages.opened = 0;
  // A spare no test used stays for the next test.
  const spare = await pages.spare;
  const shared = pages.context ? await pages.context.catch(() => undefined) : undefined;
  await Promise.all(
    browser
      .contexts()
      .map((context) => (context === shared ? Promise.all(context.pages().map((page) => (page === spare ? undefined : page.close()))) : context.close())),
  ).catch(() => undefined);
}

/**
 * Run in a page before each document of it: the first document of a page
 * at an origin clears what earlier pages of the context stored there
 * (a reload, or a later document of the same page, keeps it, as a user's
 * browser would). Servers come and go on ports the system hands out, and
 * a file's tests may share one.
 */
const FRESH_ORIGIN = `(() => {
  try {
    if (sessionStorage.getItem('viewer-e2e.page') === null) {
      localStorage.clear();
      sessionStorage.setItem('viewer-e2e.page', '1');
    }
  } catch {}
})();`;

/** What a test can choose about the page before it loads. */
export interface ViewerOptions {
  /** The remembered layout: every file on one page (the default) or one file at a time. */
  layout?: 'all' | 'file';
  /** The system colour scheme the browser reports. */
  colorScheme?: 'light' | 'dark';
  /** A script run in every page before the page's own (to watch what it does). */
  initScript?: string;
  /** The language and time zone the page runs in (a context of its own); the browser's own when absent. */
  clock?: { locale: string; timezoneId: string };
}

/**
 * Opens the viewer in a new page and collects page errors (a CSP violation
 * or an exception fails the test). A test's first page is in its file's
 * browser context, each further one in a context of its own.
 */
export async function openViewer(
  browser: Browser,
  url: string,
  viewport = { width: 1400, height: 860 },
  options: ViewerOptions = {},
): Promise<{ page: Page; errors: string[] }> {
  const pages = pagesOf(browser);
  let page: Page | undefined;
  if (options.clock) {
    pages.opened++;
    page = await (await browser.newContext(options.clock)).newPage();
  } else if (pages.opened++ === 0) {
    const spare = await pages.spare;
    pages.spare = undefined;
    page = spare && !spare.isClosed() ? spare : await (await fileContext(browser)).newPage();
  } else {
    page = await (await browser.newContext()).newPage();
  }
  await page.addInitScript(FRESH_ORIGIN);
  await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
  if (options.layout) {
    await page.addInitScript(
      (layout) => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem('changeset-server.layout', layout),
      options.layout,
    );
  }
  if (options.initScript) await page.addInitScript(options.initScript);
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
