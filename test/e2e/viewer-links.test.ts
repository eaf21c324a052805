import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture, type PageGlobals } from './viewer-harness.js';

const fx = useViewerFixture();

const query = (page: { evaluate<T>(fn: () => T): Promise<T> }): Promise<string> => page.evaluate(() => (globalThis as unknown as PageGlobals).location.search);

describe('viewer deep links', () => {
  it('keeps session, turn, file and line in the address; reload, back and forward restore them; a link opens the same view', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'one\ntwo\nthree\n' });
    const session = await createSession(fx.server.client, 'links', repo);
    await recordTurn(fx.server.client, session, 't1', 'first turn', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'one\nTWO\nthree\n' }));
    await recordTurn(fx.server.client, session, 't2', 'second turn', () => writeFiles(repo, { 'c.txt': 'c\n' }));

    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl);
    // The first file of the session changeset is selected and named in the address (the token is not).
    await expect.poll(() => query(page)).toBe('?session=links&view=session&file=a.txt');

    await page.locator('[data-turn="t1"]').click();
    await expect.poll(() => query(page)).toBe('?session=links&turn=t1&file=a.txt');
    await page.locator('.row.file[data-path="b.txt"] .file-open').click();
    await expect.poll(() => query(page)).toBe('?session=links&turn=t1&file=b.txt');
    await page.locator('[data-line="R2"]').first().click();
    await expect.poll(() => query(page)).toBe('?session=links&turn=t1&file=b.txt&line=R2');
    await page.locator('.linked [data-line="R2"]').first().waitFor();

    await page.reload();
    await expect.poll(() => page.locator('#changeset-title').textContent()).toContain('first turn');
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('b.txt');
    await page.locator('.linked [data-line="R2"]').first().waitFor();
    await expect.poll(() => query(page)).toBe('?session=links&turn=t1&file=b.txt&line=R2');

    await page.goBack();
    await expect.poll(() => query(page)).toBe('?session=links&turn=t1&file=b.txt');
    // The address changes first; the line mark goes with the next frame.
    await expect.poll(() => page.locator('.linked').count()).toBe(0);
    await page.goBack();
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('a.txt');
    await page.goBack();
    await expect.poll(() => page.locator('.chip[data-change-kind="session"]').getAttribute('aria-pressed')).toBe('true');
    await page.goForward();
    await expect.poll(() => page.locator('#changeset-title').textContent()).toContain('first turn');
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('a.txt');

    // A shared link (with the token, as `open` prints it), opened in the tab, opens a comparison of two turns on a file.
    await page.goto(`${fx.server.viewerUrl}&session=links&from=t1&to=t2&file=c.txt`);
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Compare: turn 1 → turn 2');
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('c.txt');
    await expect.poll(() => query(page)).toBe('?session=links&from=t1&to=t2&file=c.txt');
    expect(errors).toEqual([]);
  }, 180_000);
});
