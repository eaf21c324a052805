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
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
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

/** What a test file can choose about the browser context its pages share. */
export interface ViewerFixtureOptions {
  /** The language and time zone every page of the file runs in; the browser's own when absent. */
  clock?: { locale: string; timezoneId: string };
}

/**
 * Registers the hooks every viewer test file needs: a connection to the
 * run's browser for the file, the file's page made ready at the start of
 * each test (see {@link prepareSpare}), what each test opened closed or put
 * back after it, and a fresh server per test (`test`) or one server for the
 * whole file (`file`, for tests that look at the same recorded turns; `none`
 * for a file that starts its own).
 */
export function useViewerFixture(serverScope: 'test' | 'file' | 'none' = 'test', options: ViewerFixtureOptions = {}): ViewerFixture {
  const temp = new TempDirs();
  let browser: Browser | undefined;
  let server: ViewerServer | undefined;
  beforeAll(async () => {
    browser = await connectBrowser();
    if (options.clock) pagesOf(browser).contextOptions = options.clock;
    if (serverScope === 'file') server = await startViewerServer(viewerDir());
  }, 120_000);
  afterAll(async () => {
    // Pages kept for the file's tests go before their server does.
    if (browser) await closeKept(browser);
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
 * is the file's page, in the file's browser context: made once, and after
 * each test emptied (its document left for a blank one, what the test set up
 * on it taken off) for the next test's first page, as a new page costs the
 * browser far more than a new document in one. Each further page a test
 * opens is a page of its own, in a context of its own (another browser as
 * far as the pages can tell), closed after the test; so is the file's page
 * when a test sets it up itself ({@link ViewerOptions.fresh}). A page kept
 * for the file's tests ({@link ViewerOptions.keep}) is closed when the file
 * ends. A page's first document at an origin in a test starts with empty
 * storage (see {@link freshOrigin}), so nothing one test's page stored
 * reaches another.
 */
interface FilePages {
  context?: Promise<BrowserContext>;
  /** The options of the file's context and of the contexts of further pages. */
  contextOptions?: { locale: string; timezoneId: string };
  /** The file's page, blank and ready for the next test's first page. */
  spare?: Promise<Page | undefined>;
  /** Pages opened since the last {@link closePages}. */
  opened: number;
  /** The file's page while a test uses it, with what the test set up on it, to be taken off after it. */
  lent?: { page: Page; cdp: CDPSession; scripts: string[]; keep: boolean };
  /** Pages opened to each test's first {@link openViewer}, numbering its storage generation. */
  generation: number;
  /** The contexts of pages kept open for the file's later tests ({@link ViewerOptions.keep}). */
  kept: Set<BrowserContext>;
}

const filePages = new WeakMap<Browser, FilePages>();

function pagesOf(browser: Browser): FilePages {
  let pages = filePages.get(browser);
  if (!pages) filePages.set(browser, (pages = { opened: 0, generation: 0, kept: new Set() }));
  return pages;
}

function fileContext(browser: Browser): Promise<BrowserContext> {
  const pages = pagesOf(browser);
  pages.context ??= browser.newContext(pages.contextOptions);
  return pages.context;
}

/**
 * Starts making the file's page for the next test's first {@link openViewer}
 * on this browser, if there is none yet, so that its renderer starts while
 * the test records its turns instead of after. Nothing is loaded in it
 * before `openViewer` sets it up.
 */
export function prepareSpare(browser: Browser): void {
  const pages = pagesOf(browser);
  pages.spare ??= fileContext(browser)
    .then((context) => context.newPage())
    .catch(() => undefined);
}

/** The page events tests listen to; their listeners are taken off the file's page after each test. */
const PAGE_EVENTS = ['pageerror', 'console', 'response', 'request', 'websocket', 'dialog', 'framenavigated', 'load'] as const;

/**
 * Closes every page a test opened on this browser connection but the file's
 * page, which is emptied for the next test, and the contexts of its further
 * pages.
 */
export async function closePages(browser: Browser): Promise<void> {
  const pages = pagesOf(browser);
  pages.opened = 0;
  const lent = pages.lent;
  pages.lent = undefined;
  if (lent?.keep && !lent.page.isClosed()) {
    // Emptied: the test's scripts and listeners off, its document left for a blank one (no socket, no timer).
    const emptied = (async () => {
      for (const type of PAGE_EVENTS) lent.page.removeAllListeners(type);
      for (const identifier of lent.scripts) await lent.cdp.send('Page.removeScriptToEvaluateOnNewDocument', { identifier });
      await lent.cdp.detach();
      await lent.page.goto('about:blank');
      return lent.page;
    })().catch(async () => {
      await lent.page.close().catch(() => undefined);
      return undefined;
    });
    pages.spare = emptied;
    await emptied;
  }
  const spare = await pages.spare;
  const shared = pages.context ? await pages.context.catch(() => undefined) : undefined;
  await Promise.all(
    browser.contexts().map((context) => {
      if (context === shared) return Promise.all(context.pages().map((page) => (page === spare ? undefined : page.close())));
      return pages.kept.has(context) ? undefined : context.close();
    }),
  ).catch(() => undefined);
}

/** Closes the pages kept open for a file's tests ({@link ViewerOptions.keep}). */
async function closeKept(browser: Browser): Promise<void> {
  const pages = pagesOf(browser);
  const kept = [...pages.kept];
  pages.kept.clear();
  await Promise.all(kept.map((context) => context.close().catch(() => undefined)));
}

/**
 * Run in a page before each document of it: the first document at an origin
 * in a test's page clears what earlier documents (an earlier test's, or
 * earlier pages of the context) stored there, locally and for the tab (a
 * reload, or a later document of the same test, keeps it, as a user's
 * browser would). Servers come and go on ports the system hands out, and a
 * file's tests may share one.
 */
function freshOrigin(generation: string): string {
  return `(() => {
  try {
    if (sessionStorage.getItem('viewer-e2e.page') !== ${JSON.stringify(generation)}) {
      localStorage.clear();
      sessionStorage.clear();
      sessionStorage.setItem('viewer-e2e.page', ${JSON.stringify(generation)});
    }
  } catch {}
})();`;
}

/** What a test can choose about the page before it loads. */
export interface ViewerOptions {
  /** The remembered layout: every file on one page (the default) or one file at a time. */
  layout?: 'all' | 'file';
  /** The system colour scheme the browser reports. */
  colorScheme?: 'light' | 'dark';
  /** A script run in every page before the page's own (to watch what it does). */
  initScript?: string;
  /**
   * The page is closed after the test instead of emptied for the next one: for a test that sets the page up itself
   * (its own init scripts, routes) before it loads, which no later test may inherit.
   */
  fresh?: boolean;
  /**
   * The page stays open for the file's later tests, each going on where the one before left it, and is closed when
   * the file ends: for tests that look at the same view of a big changeset, which costs the browser most to load. A
   * page of its own, in a context of its own, as further pages are.
   */
  keep?: boolean;
}

/**
 * Opens the viewer in a page and collects page errors (a CSP violation or an
 * exception fails the test). A test's first page is the file's page (see
 * {@link FilePages}), each further one a new page in a context of its own.
 */
export async function openViewer(
  browser: Browser,
  url: string,
  viewport = { width: 1400, height: 860 },
  options: ViewerOptions = {},
): Promise<{ page: Page; errors: string[] }> {
  const pages = pagesOf(browser);
  let page: Page | undefined;
  if (!options.keep && pages.opened++ === 0) {
    const spare = await pages.spare;
    pages.spare = undefined;
    page = spare && !spare.isClosed() ? spare : await (await fileContext(browser)).newPage();
    const lent = { page, cdp: await page.context().newCDPSession(page), scripts: [] as string[], keep: options.fresh !== true };
    pages.lent = lent;
    // Scripts the session adds run only while it has the page domain enabled.
    await lent.cdp.send('Page.enable');
    const addScript = async (source: string): Promise<void> => {
      lent.scripts.push((await lent.cdp.send('Page.addScriptToEvaluateOnNewDocument', { source })).identifier);
    };
    await addScript(freshOrigin(`${process.pid}.${++pages.generation}`));
    if (options.layout) await addScript(layoutScript(options.layout));
    if (options.initScript) await addScript(options.initScript);
  } else {
    const context = await browser.newContext(pages.contextOptions);
    if (options.keep) pages.kept.add(context);
    page = await context.newPage();
    await page.addInitScript(freshOrigin('further'));
    if (options.layout) await page.addInitScript(layoutScript(options.layout));
    if (options.initScript) await page.addInitScript(options.initScript);
  }
  await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
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
 * Brings an open viewer to the view a link names (`?session=…&turn=…&file=…&line=…`) the way back / forward does:
 * the address changes and the page follows it in the document it has. For a test about what a link shows (the file
 * and line it selects, marks and scrolls to) after the page's first load; a test about loading a link uses `goto`.
 */
export async function followLink(page: Page, search: string): Promise<void> {
  await page.evaluate(`(() => {
    history.pushState(null, '', location.pathname + ${JSON.stringify(search)});
    dispatchEvent(new PopStateEvent('popstate'));
  })()`);
}

/** Remembers a layout before the page's own scripts read it, in every document of the page. */
function layoutScript(layout: 'all' | 'file'): string {
  return `(() => { try { localStorage.setItem('changeset-server.layout', ${JSON.stringify(layout)}); } catch {} })();`;
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
