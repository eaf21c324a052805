/**
 * Takes the screenshots in `docs/images/` from the viewer built from the
 * current sources: `npm run screenshots`. Not a test (`npm test` never runs
 * it, as it rewrites tracked files); the scenes are the ones the browser
 * tests check (`doc-scenes.ts`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { colourOf, openThemeReview, recordBlameScene, recordDemoTurn, showReviewTop } from './doc-scenes.js';
import { openViewer, useViewerFixture, ROOT } from './viewer-harness.js';

const IMAGES = join(ROOT, 'docs', 'images');

const fx = useViewerFixture();

async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: join(IMAGES, name) });
  console.log(`wrote docs/images/${name}`);
}

describe('screenshots in the docs', () => {
  it('viewer-review.png and viewer-side-by-side.png: one file at a time', async () => {
    await recordDemoTurn(fx);
    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl, undefined, { layout: 'file' });
    await page.locator('[data-turn="t1"]').click();
    await expect.poll(() => page.locator('#changeset-title').textContent(), { timeout: 30_000 }).toContain('Make greet friendlier');
    await page.locator('.row.file[data-path="src/app.ts"] .file-open').click();
    await page.locator('table.diff.unified ins.word').first().waitFor();
    const gap = page.locator('button.expand', { hasText: /Expand \d+ unchanged lines/ });
    await gap.waitFor();
    await page.locator('.row.file[data-path="docs/guide.md"] .viewed-box').check();
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('1 / 5 viewed');
    await shoot(page, 'viewer-review.png');

    await gap.click();
    await expect.poll(() => gap.count()).toBe(0);
    await page.locator('body').press('s');
    await page.locator('table.diff.split ins.word').first().waitFor();
    await shoot(page, 'viewer-side-by-side.png');
    expect(errors).toEqual([]);
  }, 180_000);

  it('viewer-review-page-light.png and viewer-review-page-dark.png: every file on one page', async () => {
    const { page, errors } = await openThemeReview(fx);
    const keyword = page.locator('.rv-file[data-path="src/server.ts"] .hljs-keyword').first();
    await showReviewTop(page);
    const colour = () => colourOf(keyword);
    const light = await colour();
    await shoot(page, 'viewer-review-page-light.png');
    await page.locator('#theme').selectOption('dark');
    await expect.poll(colour).not.toBe(light);
    await shoot(page, 'viewer-review-page-dark.png');
    expect(errors).toEqual([]);
  }, 180_000);

  it('viewer-comments.png: a commented diff, one comment open and one the agent resolved', async () => {
    const { page, errors } = await openThemeReview(fx);
    const file = page.locator('.rv-file[data-path="src/server.ts"]');
    const added = file.locator('.rl.add [data-line^="R"]');
    const [first, second] = [await added.nth(0).getAttribute('data-line'), await added.nth(1).getAttribute('data-line')];
    const turn = expandChangesetUri(changesetUriTemplate('shots', 'turn'), { turnId: 't1' });
    const agentOne = await fx.server.client.request<{ id: string }>('comments/add', {
      channel: 'ahp-session:/shots',
      anchor: { kind: 'lines', changeset: turn, path: 'src/server.ts', side: 'after', startLine: Number(second!.slice(1)), endLine: Number(second!.slice(1)) },
      body: 'Read the port from the config file instead of a default here.',
      author: 'Ada',
    });
    await fx.server.client.request('comments/resolve', {
      channel: 'ahp-session:/shots',
      id: agentOne.id,
      by: 'agent',
      note: 'Moved the port to src/config.json',
    });
    const row = file.locator('.rl').filter({ has: page.locator(`[data-line="${first}"]`) });
    await row.hover();
    await row.locator('.add-comment').click();
    await page.locator('.comment-text').fill('Say who is greeted when no name is given: "world" is easy to miss.');
    await page.locator('.comment-text').press('Control+Enter');
    await expect.poll(() => file.locator('.comment').count()).toBe(2);
    await page.mouse.move(0, 0);
    await shoot(page, 'viewer-comments.png');
    expect(errors).toEqual([]);
  }, 180_000);

  it('viewer-blame.png: the blame gutter, a colour per author, one mark hovered', async () => {
    await recordBlameScene(fx);
    const { page, errors } = await openViewer(
      fx.browser,
      `${fx.server.viewerUrl}&session=blame&view=session&file=src/greet.ts`,
      { width: 1200, height: 640 },
      { layout: 'file' },
    );
    await page.locator('.diff-header .blame-toggle').click();
    await page.locator('td.num[data-line="R12"] .blame-mark').waitFor();
    await page.locator('td.num[data-line="R3"] .blame-mark').hover();
    await shoot(page, 'viewer-blame.png');
    expect(errors).toEqual([]);
  }, 180_000);
});
