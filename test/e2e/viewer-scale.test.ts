import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture, type PageGlobals } from './viewer-harness.js';

// Workspaces and state directories in memory when the system has room: the files, the watchers and the recorded
// turns are the same; what goes is the disk's round trip for each of the store's fsyncs and each file written.
useMemoryTempDir();
// One server for the file: both tests look at the same turn of 5,000 files, recorded once.
const fx = useViewerFixture('file');

const numbered = (n: number, prefix: string): string => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

/** Session `huge`, turn `huge`: 5,000 new files of 20 lines each, 100 to a folder. */
beforeAll(async () => {
  const repo = makeRepo(fx.temp.make(), { 'seed.txt': 'seed\n' });
  const session = await createSession(fx.server.client, 'huge', repo);
  const files: Record<string, string> = {};
  for (let i = 0; i < 5000; i++)
    files[`pkg${String(Math.floor(i / 100)).padStart(2, '0')}/file${String(i).padStart(4, '0')}.ts`] = numbered(20, `export const v${i} =`);
  await recordTurn(fx.server.client, session, 'huge', '100,000 lines', () => writeFiles(repo, files));
}, 300_000);

/** The page's review scroller and rows, typed for in-page functions. */
interface ReviewGlobals {
  document: {
    getElementById(id: string): { scrollTop: number; scrollHeight: number; clientHeight: number } | null;
    querySelectorAll(selector: string): { length: number };
  };
}

/** Counts the diff requests the page sends (from before it connects). */
const COUNT_DIFF_REQUESTS = `(() => {
  window.diffRequests = 0;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.includes('"changesetFileDiff"')) window.diffRequests++;
    return send.call(this, data);
  };
})();`;

describe('viewer at 5,000 files', () => {
  /**
   * The one page of the file: loading a 5,000-file changeset is what costs the browser most, so the tests look at it
   * in turn, in the order below (the diff requests are counted from the page's start).
   */
  let huge: Promise<{ page: Page; errors: string[] }> | undefined;
  const hugePage = () =>
    (huge ??= openViewer(
      fx.browser,
      `${fx.server.viewerUrl}&session=huge&turn=huge`,
      { width: 1400, height: 900 },
      { initScript: COUNT_DIFF_REQUESTS, keep: true },
    ));

  it('stays light at 5,000 files and 100,000 changed lines: bounded page, diffs fetched only for what is passed', async () => {
    const { page, errors } = await hugePage();
    await page.locator('.rv-file[data-path="pkg00/file0000.ts"] .rl.add').first().waitFor({ timeout: 120_000 });
    await expect.poll(() => page.locator('.toolbar .counts').first().textContent(), { timeout: 120_000 }).toMatch(/^5000 files \+100000/);

    // Jump through the page in 60 steps; after each is drawn, the page holds only what is on screen.
    const steps = await page.evaluate(async () => {
      const { document, requestAnimationFrame } = globalThis as unknown as PageGlobals & ReviewGlobals;
      const scroller = document.getElementById('review')!;
      let count = 0;
      let files = 0;
      let rows = 0;
      for (let top = 0; top < scroller.scrollHeight; top += scroller.scrollHeight / 60) {
        scroller.scrollTop = top;
        await new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
        count++;
        files = Math.max(files, document.querySelectorAll('.rv-file').length);
        rows = Math.max(rows, document.querySelectorAll('.rl').length);
      }
      return { count, files, rows };
    });
    expect(steps.count).toBeGreaterThanOrEqual(60);
    expect(steps.files).toBeLessThan(20);
    expect(steps.rows).toBeLessThan(300);
    expect(await page.locator('.rv-file').count()).toBeLessThan(20);
    expect(await page.locator('.rl').count()).toBeLessThan(300);
    // Jumping through the page asked for the files passed, not for all 5,000.
    const diffRequests = await page.evaluate(() => (globalThis as unknown as { diffRequests: number }).diffRequests);
    expect(diffRequests).toBeGreaterThan(0);
    expect(diffRequests).toBeLessThan(1000);

    await page.locator('#review').evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.locator('.rv-file[data-path="pkg49/file4999.ts"] .rl.add').last().waitFor();
    expect(errors).toEqual([]);
  }, 300_000);

  it('scrolls a 5,000-file changeset with a bounded number of rows in the page', async () => {
    // One file at a time, from the top of the list.
    const { page, errors } = await hugePage();
    await page.locator('[data-layout="file"]').click();
    await page.locator('table.diff').waitFor({ timeout: 120_000 });
    await page.locator('#files').evaluate((el) => {
      el.scrollTop = 0;
    });
    await page.locator('.row.file[data-path="pkg00/file0000.ts"]').waitFor({ timeout: 120_000 });
    await expect.poll(() => page.locator('.toolbar .counts').first().textContent(), { timeout: 120_000 }).toMatch(/^5000 files/);
    const bounded = async (): Promise<number> => page.locator('#files .row').count();
    expect(await bounded()).toBeLessThan(100);

    // Scroll to the end in steps, as a wheel would, each step drawn before the next.
    const steps = await page.evaluate(async () => {
      const { document, requestAnimationFrame } = globalThis as unknown as PageGlobals;
      const scroller = document.getElementById('files')!;
      let count = 0;
      for (let top = 0; top < scroller.scrollHeight; top += 4000) {
        scroller.scrollTop = top;
        await new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
        count++;
      }
      scroller.scrollTop = scroller.scrollHeight;
      await new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
      return count;
    });
    expect(steps).toBeGreaterThan(30);
    await page.locator('.row.file[data-path="pkg49/file4999.ts"]').waitFor();
    expect(await bounded()).toBeLessThan(100);

    // j / k walk the list and keep the selection in view.
    await page.locator('.row.file[data-path="pkg49/file4999.ts"] .file-open').click();
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('pkg49/file4999.ts');
    await page.locator('body').press('k');
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('pkg49/file4998.ts');
    expect(errors).toEqual([]);
  }, 300_000);
});
