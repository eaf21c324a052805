import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, startViewerServer, useViewerFixture, viewerDir, type ViewerServer } from './viewer-harness.js';

// The server cuts changeset states at 10 files here, so the page lists the other 50 itself: the path of a 50,000-file turn.
const fx = useViewerFixture('none');
const FILES = 60;
let server: ViewerServer;
const pathOf = (i: number) => `src/file${String(i).padStart(2, '0')}.ts`;
const turnUri = expandChangesetUri(changesetUriTemplate('first', 'turn'), { turnId: 'add' });

/** Session `first`, turn `add`: 60 new files of 20 lines. */
beforeAll(async () => {
  server = await startViewerServer(viewerDir(), { changesetMaxFiles: 10 });
  const repo = makeRepo(fx.temp.make(), { 'README.md': '# first\n' });
  const session = await createSession(server.client, 'first', repo);
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[pathOf(i)] = Array.from({ length: 20 }, (_, k) => `export const v${i}_${k} = ${k};\n`).join('');
  await recordTurn(server.client, session, 'add', 'add sixty files', () => writeFiles(repo, files));
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

/** Records, in order, the requests the page sends (id, method, channel) and the ids of the answers it receives. */
const LOG_SOCKET = `(() => {
  window.socketLog = [];
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        if (typeof e.data !== 'string' || !e.data.startsWith('{"jsonrpc":"2.0","id":')) return;
        window.socketLog.push({ answer: JSON.parse(e.data).id });
      });
    }
    send(data) {
      if (typeof data === 'string') {
        const m = JSON.parse(data);
        if (m.id !== undefined) window.socketLog.push({ id: m.id, method: m.method, channel: m.params?.channel, ids: m.params?.ids, fileId: m.params?.fileId });
      }
      return super.send(data);
    }
  };
})();`;

type Logged = { answer?: number; id?: number; method?: string; channel?: string; ids?: string[]; fileId?: string };

describe('the first screen of a changeset past the state cap', () => {
  it('asks for the rest of its files and the session’s other changesets only once the first screen’s diffs are answered', async () => {
    const { page, errors } = await openViewer(
      fx.browser,
      `${server.viewerUrl}&session=first&turn=add`,
      { width: 1400, height: 900 },
      {
        layout: 'all',
        initScript: LOG_SOCKET,
        fresh: true,
      },
    );
    // The first screen shows added lines, every file is listed, and the chips count the session's changesets.
    await page.locator('.rl.add').first().waitFor();
    await expect.poll(() => page.locator('#review-progress').textContent(), { timeout: 60_000 }).toBe(`0 / ${FILES} viewed`);
    await expect.poll(() => page.locator('.chip[data-change-kind="session"] .counts').textContent(), { timeout: 60_000 }).toMatch(/^60 files/);

    const log = (await page.evaluate(() => (globalThis as unknown as { socketLog: Logged[] }).socketLog)) as Logged[];
    // The files on the first screen (the page has not scrolled): their sections within the window.
    const onScreen = (await page.evaluate(
      `[...document.querySelectorAll('.rv-file')].filter((e) => { const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }).map((e) => e.dataset.fileId)`,
    )) as string[];
    expect(onScreen.length).toBeGreaterThan(0);
    const sent = log.filter((m) => m.id !== undefined);
    const answeredAt = new Map(log.flatMap((m, at) => (m.answer !== undefined ? [[m.answer, at] as const] : [])));
    // The first request for each file on screen (a diff is asked again when the session's turns arrive after it).
    const firstScreen = onScreen.flatMap((fileId) => sent.find((m) => m.method === 'changesetFileDiff' && m.channel === turnUri && m.fileId === fileId) ?? []);
    const listing = sent.filter((m) => m.method === 'changesetFiles' && m.ids === undefined);
    const others = sent.filter((m) => m.method === 'subscribe' && m.channel?.startsWith('ahp-changeset:') && m.channel !== turnUri);
    expect(firstScreen.length).toBeGreaterThan(0);
    expect(listing.length).toBeGreaterThan(0);
    expect(others.length).toBeGreaterThan(0);
    // The first screen's diffs were asked for, and answered, before the listing or another changeset went out:
    // nothing of theirs (the server's work, hundreds of kilobytes on the socket) stood in front of the first screen.
    const firstLater = Math.min(...[...listing, ...others].map((m) => log.indexOf(m)));
    expect(new Set(firstScreen.map((m) => m.fileId))).toEqual(new Set(onScreen));
    for (const m of firstScreen) expect(answeredAt.get(m.id!), `the diff asked for as request ${m.id}`).toBeLessThan(firstLater);
    expect(errors).toEqual([]);
  }, 120_000);
});
