import type { ChangesetState } from '../../protocol/index.js';
import { describe, expect, it } from 'vitest';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { recordDemoTurn } from './doc-scenes.js';
import { createSession, openViewer, recordTurn, useViewerFixture, type PageGlobals } from './viewer-harness.js';

// Workspaces and state directories in memory when the system has room: the files, the watchers and the recorded
// turns are the same; what goes is the disk's round trip for each of the store's fsyncs and each file written.
useMemoryTempDir();
const fx = useViewerFixture();

/** Keeps the page's sockets in `sockets` (see {@link PageGlobals}), so that a test can drop one. */
const KEEP_SOCKETS = `(() => {
  const sockets = [];
  window.sockets = sockets;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      sockets.push(this);
    }
  };
})();`;

describe('web viewer', () => {
  it('shows a recorded turn: its files grouped by directory, a diff with changed words, side by side', async () => {
    await recordDemoTurn(fx);

    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl, undefined, { layout: 'file' });
    // The token leaves the address bar once the page has it.
    await page.waitForFunction(() => !(globalThis as unknown as PageGlobals).location.search.includes('token='));
    await page.locator('#connection[data-state="open"]').waitFor();
    await page.locator('[data-session="ahp-session:/demo"][aria-current="true"]').waitFor();

    await page.locator('[data-turn="t1"]').click();
    await expect.poll(() => page.locator('#changeset-title').textContent(), { timeout: 30_000 }).toContain('Make greet friendlier');
    await page.locator('.row.file[data-path="src/app.ts"]').waitFor();
    const listed = await page
      .locator('#files .row')
      .evaluateAll((rows) => rows.map((r) => (r.classList.contains('dir') ? `[${r.textContent}]` : r.getAttribute('data-path'))));
    expect(listed).toEqual(['[./]', 'logo.bin', 'old.txt', '[docs/]', 'docs/guide.md', '[src/]', 'src/app.ts', '[src/util/]', 'src/util/math.ts']);
    await expect.poll(() => page.locator('.row.file[data-path="logo.bin"] .placeholder').textContent()).toBe('binary');
    // Counts from the turn changeset appear in the turn list once it was opened.
    await expect.poll(() => page.locator('[data-turn="t1"] .counts').textContent()).toMatch(/5 files \+\d+ −\d+/);

    await page.locator('.row.file[data-path="src/app.ts"] .file-open').click();
    await page.locator('table.diff.unified').waitFor();
    expect(await page.locator('#diff-title .path').textContent()).toBe('src/app.ts');
    const inserted = await page.locator('table.diff ins.word').allTextContents();
    const deleted = await page.locator('table.diff del.word').allTextContents();
    expect(inserted.join('|')).toContain('42');
    expect(deleted.join('|')).toContain('41');
    expect(await page.locator('table.diff tr.line.add').count()).toBe(2);
    expect(await page.locator('table.diff tr.line.del').count()).toBe(2);
    expect(await page.locator('table.diff tr.hunk-header').count()).toBe(2);

    // Unchanged lines between the hunks are collapsed; one review tick shows in the progress.
    const gap = page.locator('button.expand', { hasText: /Expand \d+ unchanged lines/ });
    await gap.waitFor();
    await page.locator('.row.file[data-path="docs/guide.md"] .viewed-box').check();
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('1 / 5 viewed');

    // The collapsed region expands from the file's content (read with resourceRead).
    const before = await page.locator('table.diff tr.line').count();
    await gap.click();
    await expect.poll(() => page.locator('button.expand', { hasText: /Expand \d+ unchanged lines/ }).count()).toBe(0);
    expect(await page.locator('table.diff tr.line').count()).toBeGreaterThan(before);
    expect(await page.locator('table.diff td.code', { hasText: 'const step6 = input * 7;' }).count()).toBe(1);

    // Keyboard: s = side by side, j = next file, u = unified.
    await page.locator('body').press('s');
    await page.locator('table.diff.split').waitFor();
    expect(await page.locator('table.diff.split tr.line').first().locator('td').count()).toBe(4);
    await page.locator('body').press('j');
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('src/util/math.ts');
    await page.locator('body').press('k');
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('src/app.ts');
    await page.locator('body').press('u');
    await page.locator('table.diff.unified').waitFor();

    // The binary file gets a placeholder instead of a diff.
    await page.locator('.row.file[data-path="logo.bin"] .file-open').click();
    await expect.poll(() => page.locator('.placeholder-block').textContent()).toContain('Binary file');
    await page.locator('.row.file[data-path="src/app.ts"] .file-open').click();
    await page.locator('table.diff ins.word').first().waitFor();

    await page.locator('body').press('s');
    await page.locator('table.diff.split').waitFor();
    expect(errors).toEqual([]);
  }, 180_000);

  it('shows new turns live and syncs "Viewed" between two browsers, with progress', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const session = await createSession(fx.server.client, 'live', repo);
    await recordTurn(fx.server.client, session, 't1', 'first', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n' }));

    const alice = await openViewer(fx.browser, fx.server.viewerUrl, undefined, { layout: 'file' });
    const bob = await openViewer(fx.browser, fx.server.viewerUrl, undefined, { layout: 'file' });
    for (const { page } of [alice, bob]) {
      await page.locator('.chip[data-change-kind="session"][aria-pressed="true"]').waitFor();
      await page.locator('.row.file[data-path="b.txt"]').waitFor();
      await expect.poll(() => page.locator('#review-progress').textContent()).toBe('0 / 2 viewed');
    }

    // Alice ticks a.txt with the keyboard; Bob sees it ticked without reloading.
    await alice.page.locator('.row.file[data-path="a.txt"] .file-open').click();
    await alice.page.locator('table.diff').waitFor();
    await alice.page.locator('body').press('v');
    await expect.poll(() => alice.page.locator('.row.file[data-path="a.txt"] .viewed-box').isChecked()).toBe(true);
    await expect.poll(() => bob.page.locator('.row.file[data-path="a.txt"] .viewed-box').isChecked(), { timeout: 30_000 }).toBe(true);
    await expect.poll(() => bob.page.locator('#review-progress').textContent()).toBe('1 / 2 viewed');
    // Bob ticks b.txt with the checkbox; Alice sees it.
    await bob.page.locator('.row.file[data-path="b.txt"] .viewed-box').check();
    await expect.poll(() => alice.page.locator('#review-progress').textContent(), { timeout: 30_000 }).toBe('2 / 2 viewed');

    // A new turn appears in both turn lists, and its file joins the live session changeset.
    await recordTurn(fx.server.client, session, 't2', 'second turn', () => writeFiles(repo, { 'c.txt': 'C\n' }));
    for (const { page } of [alice, bob]) {
      await page.locator('[data-turn="t2"]').waitFor({ timeout: 30_000 });
      await page.locator('.row.file[data-path="c.txt"]').waitFor({ timeout: 30_000 });
      await expect.poll(() => page.locator('#review-progress').textContent()).toBe('2 / 3 viewed');
    }
    expect(alice.errors).toEqual([]);
    expect(bob.errors).toEqual([]);
  }, 180_000);

  it('reconnects after a dropped connection, replaying what it missed', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'drop', repo);
    await recordTurn(fx.server.client, session, 't1', 'first', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n' }));
    const uri = 'ahp-changeset:/drop/session';
    await fx.server.client.subscribe(uri);
    await expect.poll(() => fx.server.client.state<ChangesetState>(uri)?.files.length, { timeout: 30_000 }).toBe(2);
    const fileA = fx.server.client.state<ChangesetState>(uri)!.files.find((f) => f.id.endsWith('/a.txt'))!.id;

    // Keep a handle on the page's sockets so the test can drop one (the page itself exposes none).
    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl, undefined, { initScript: KEEP_SOCKETS });
    // What the page sends on the sockets it opens from now on: the one it reconnects with.
    const sent: string[] = [];
    page.on('websocket', (ws) => ws.on('framesent', (frame) => sent.push(String(frame.payload))));
    await page.locator('.row.file[data-path="a.txt"]').waitFor();

    await page.evaluate(() => (globalThis as unknown as PageGlobals).sockets.at(-1)!.close());
    // While the page is away, another client ticks a file.
    fx.server.client.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [fileA], reviewed: true });
    await page.locator('#connection[data-state="open"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('.row.file[data-path="a.txt"] .viewed-box').isChecked(), { timeout: 30_000 }).toBe(true);
    const reconnect = sent
      .map((f) => JSON.parse(f) as { method?: string; params?: { subscriptions?: string[]; lastSeenServerSeq?: number } })
      .find((m) => m.method === 'reconnect');
    expect(reconnect?.params?.subscriptions).toContain(uri);
    expect(reconnect?.params?.lastSeenServerSeq).toBeGreaterThan(0);

    // Still live afterwards.
    fx.server.client.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [fileA], reviewed: false });
    await expect.poll(() => page.locator('.row.file[data-path="a.txt"] .viewed-box').isChecked(), { timeout: 30_000 }).toBe(false);
    expect(errors).toEqual([]);
  }, 180_000);

  it('reverts a "Viewed" tick the server refuses and says why', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n' });
    const session = await createSession(fx.server.client, 'refuse', repo);
    await recordTurn(fx.server.client, session, 't1', 'first', () => writeFiles(repo, { 'a.txt': 'A\n' }));
    const { page, errors } = await openViewer(fx.browser, 'about:blank', undefined, { fresh: true });
    // Corrupt the page's review actions on their way out, so the server answers with a rejection echo.
    await page.routeWebSocket(/.*/, (ws) => {
      const upstream = ws.connectToServer();
      ws.onMessage((message) => {
        const text = String(message);
        upstream.send(text.includes('"dispatchAction"') ? text.replace(/"files":\[[^\]]*\]/, '"files":[]') : text);
      });
    });
    await page.goto(fx.server.viewerUrl);
    const box = page.locator('.row.file[data-path="a.txt"] .viewed-box');
    await box.waitFor();
    await box.click();
    await expect.poll(() => page.locator('.notice.error').textContent(), { timeout: 30_000 }).toContain('Could not change "Viewed"');
    await expect.poll(() => box.isChecked()).toBe(false);
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('0 / 1 viewed');
    expect(errors).toEqual([]);
  }, 180_000);

  it('compares two turns', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\n' });
    const session = await createSession(fx.server.client, 'cmp', repo);
    await recordTurn(fx.server.client, session, 't1', 'first', () => writeFiles(repo, { 'a.txt': 'two\n' }));
    await recordTurn(fx.server.client, session, 't2', 'second', () => writeFiles(repo, { 'a.txt': 'three\n', 'b.txt': 'new\n' }));
    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl);
    await page.locator('[data-turn="t2"]').waitFor();
    await page.getByLabel('Compare turn 1').check();
    await page.getByLabel('Compare turn 2').check();
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Compare: turn 1 → turn 2');
    await page.locator('.row.file[data-path="b.txt"]').waitFor();
    expect(await page.locator('.row.file').count()).toBe(2);
    expect(errors).toEqual([]);
  }, 180_000);
});
