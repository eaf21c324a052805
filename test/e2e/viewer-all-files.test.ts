import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandCompactFiles, type ChangesetFilesResult } from '../../protocol/extensions/changeset-files.js';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import {
  createSession,
  openViewer,
  recordTurn,
  startViewerServer,
  useViewerFixture,
  viewerDir,
  type PageGlobals,
  type ViewerServer,
} from './viewer-harness.js';

// The server cuts changeset states at 120 files here (5,000 and 800,000 bytes by default): the same path as 50,000 files.
// 600 files are five times the cap and come in one page of the file listing, as 1,500 did; the file list draws only the
// rows in view either way. Recording and drawing fewer files is what makes the test cheaper.
const fx = useViewerFixture('none');
const FILES = 600;
const CAP = 120;
let server: ViewerServer;
const pathOf = (i: number) => `pkg${String(Math.floor(i / 100)).padStart(2, '0')}/file${String(i).padStart(4, '0')}.ts`;
const turnUri = expandChangesetUri(changesetUriTemplate('wide', 'turn'), { turnId: 'codemod' });

/** Session `wide`, turn `codemod`: one line changed in each of 600 files. */
beforeAll(async () => {
  server = await startViewerServer(viewerDir(), { changesetMaxFiles: CAP });
  const before: Record<string, string> = {};
  const tail = Array.from({ length: 10 }, (_, k) => `export const w${k} = ${k};\n`).join('');
  for (let i = 0; i < FILES; i++) before[pathOf(i)] = `import { old } from 'lib';\nexport const v${i} = old(${i});\n${tail}`;
  const repo = makeRepo(fx.temp.make(), before);
  const session = await createSession(server.client, 'wide', repo);
  const after: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) after[pathOf(i)] = `import { renamed } from 'lib';\nexport const v${i} = old(${i});\n${tail}`;
  await recordTurn(server.client, session, 'codemod', 'rename the import everywhere', () => writeFiles(repo, after));
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

/** Whether a file is marked reviewed on the server, asked the way any client can. */
async function viewedOnServer(path: string): Promise<boolean> {
  const page = await server.client.request<ChangesetFilesResult>('changesetFiles', { channel: turnUri, filter: { text: path, reviewed: true } });
  return expandCompactFiles(page.compact!).some((f) => (f._meta as { path: string }).path === path);
}

describe('a changeset past the server’s state cap', () => {
  it('lists, filters, opens and ticks files past the cap, and j / k walk across them', async () => {
    const { page, errors } = await openViewer(fx.browser, `${server.viewerUrl}&session=wide&turn=codemod`, { width: 1400, height: 900 }, { layout: 'file' });
    await expect.poll(() => page.locator('.toolbar .counts').first().textContent(), { timeout: 120_000 }).toMatch(/^600 files \+600 −600/);
    // Every file is listed: the last one, far past the 120 the state carries, is in the list once scrolled to.
    await expect.poll(() => page.locator('#review-progress').textContent(), { timeout: 60_000 }).toBe('0 / 600 viewed');
    await page.locator('#files').evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.locator(`.row.file[data-path="${pathOf(FILES - 1)}"]`).waitFor();

    // The filter works over every file.
    await page.locator('#file-filter').fill('pkg05/file052');
    await expect.poll(() => page.locator('#filter-count').textContent()).toBe('10 of 600 files');
    await page.locator(`.row.file[data-path="${pathOf(525)}"] .file-open`).click();
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe(pathOf(525));
    await expect.poll(() => page.locator('#diff tr.line.add').first().textContent()).toContain("import { renamed } from 'lib';");

    // "Viewed" on it reaches the server, which keeps it for every client.
    await page.locator(`.row.file[data-path="${pathOf(525)}"] .viewed-box`).check();
    await expect.poll(() => viewedOnServer(pathOf(525)), { timeout: 20_000 }).toBe(true);
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('1 / 600 viewed');

    // j / k walk the filtered list past the cap.
    await page.locator('body').press('j');
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe(pathOf(526));
    await page.locator('body').press('k');
    await page.locator('body').press('k');
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe(pathOf(524));
    expect(errors).toEqual([]);
  }, 300_000);

  it('opens a link to a file past the cap, on the review page, and expands its unchanged lines', async () => {
    const path = pathOf(FILES - 1);
    const { page, errors } = await openViewer(fx.browser, `${server.viewerUrl}&session=wide&turn=codemod&file=${encodeURIComponent(path)}`);
    const section = page.locator(`.rv-file[data-path="${path}"]`);
    await section.locator('.rl.add').first().waitFor({ timeout: 120_000 });
    expect(await section.locator('.rl.add').first().textContent()).toContain("import { renamed } from 'lib';");
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).location.search)).toContain('file=pkg05');
    // Its unchanged lines come from its content, which the list's compact entry does not carry: the full entry is asked for.
    await section.locator('.expand').last().click();
    await section.locator('.rl', { hasText: 'export const w9 = 9;' }).waitFor();
    expect(errors).toEqual([]);
  }, 300_000);
});
