import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

const SHOTS = process.env['HABITS_SHOTS'];

/** Runs a function written for the page (the test project has no DOM types) with one JSON argument. */
function inPage<T>(page: Page, fn: string, arg: unknown = null): Promise<T> {
  return page.evaluate(`(${fn})(${JSON.stringify(arg)})`) as Promise<T>;
}

/** The ranges of a search highlight: their text and the kind of line they are on. */
const MARKS = `(name) => {
  const hl = CSS.highlights.get(name);
  if (!hl) return [];
  return [...hl].map((r) => {
    const cell = r.startContainer.parentElement.closest('.code');
    return { text: r.toString(), kind: ['add', 'del', 'context'].find((k) => cell.classList.contains(k)), table: !!cell.closest('table') };
  });
}`;

interface Mark {
  text: string;
  kind: string;
  table: boolean;
}

const marks = (page: Page, name = 'search-match'): Promise<Mark[]> => inPage<Mark[]>(page, MARKS, name);
const kindsOf = async (page: Page): Promise<string[]> => [...new Set((await marks(page)).map((m) => m.kind))].sort();

describe('the habits of a review tool', () => {
  it('searches the diffs: counts matches in added, removed and context lines, walks them, marks them in both layouts and themes', async () => {
    const before = ['const alpha = 1;', '// needle in context', 'const beta = 2;', "const old = 'Needle removed';", 'const gamma = 3;'];
    const after = [
      'const alpha = 1;',
      '// needle in context',
      'const beta = 2;',
      "const fresh = 'needle added';",
      'const gamma = 3;',
      "const delta = 'NEEDLE twice needle';",
    ];
    const repo = makeRepo(fx.temp.make(), { 'src/a.ts': `${before.join('\n')}\n`, 'c.txt': 'plain\n' });
    const session = await createSession(fx.server.client, 'find', repo);
    await recordTurn(fx.server.client, session, 't1', 'needles', () =>
      writeFiles(repo, { 'src/a.ts': `${after.join('\n')}\n`, 'src/b.ts': "export const b = 'needle';\n", 'c.txt': 'plain text\n' }),
    );
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=find&turn=t1`);
    await page.locator('.rv-file[data-path="src/a.ts"] .rl.add').first().waitFor();

    // `f` goes to the search; the text is found whatever its case, in every kind of line, in both files.
    await page.locator('#review').focus();
    await page.keyboard.press('f');
    await expect.poll(() => page.evaluate('document.activeElement.id')).toBe('diff-search');
    await page.keyboard.type('needle');
    const count = page.locator('#search-count');
    await expect.poll(() => count.textContent()).toBe('6 matches in 2 files');
    await expect.poll(() => kindsOf(page)).toEqual(['add', 'context', 'del']);
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/search-light.png` });

    // Which lines are searched, and case.
    await page.locator('.search-kind input[data-kind="context"]').uncheck();
    await expect.poll(() => count.textContent()).toBe('5 matches in 2 files');
    await expect.poll(() => kindsOf(page)).toEqual(['add', 'del']);
    await page.locator('.search-kind input[data-kind="context"]').check();
    await page.locator('#search-case').check();
    await expect.poll(() => count.textContent()).toBe('4 matches in 2 files');
    await page.locator('#search-case').uncheck();
    await expect.poll(() => count.textContent()).toBe('6 matches in 2 files');

    // Enter / Shift+Enter walk the matches, round the end; the current one is marked apart.
    await page.locator('#diff-search').focus();
    const seen: string[] = [];
    for (let i = 1; i <= 6; i++) {
      await page.keyboard.press('Enter');
      await expect.poll(() => count.textContent()).toBe(`${i} of 6 matches in 2 files`);
      await expect.poll(async () => (await marks(page, 'search-current')).length).toBeGreaterThan(0);
      const [current] = await marks(page, 'search-current');
      expect(current!.text.toLowerCase()).toBe('needle');
      seen.push(current!.kind);
    }
    expect([...new Set(seen)].sort()).toEqual(['add', 'context', 'del']);
    await page.keyboard.press('Enter');
    await expect.poll(() => count.textContent()).toBe('1 of 6 matches in 2 files');
    await page.keyboard.press('Shift+Enter');
    await expect.poll(() => count.textContent()).toBe('6 of 6 matches in 2 files');
    // The buttons, and `.` / `,` away from the field, do the same.
    await page.locator('#search-prev').click();
    await expect.poll(() => count.textContent()).toBe('5 of 6 matches in 2 files');
    await page.locator('#review').focus();
    await page.keyboard.press('.');
    await expect.poll(() => count.textContent()).toBe('6 of 6 matches in 2 files');
    await page.keyboard.press(',');
    await expect.poll(() => count.textContent()).toBe('5 of 6 matches in 2 files');

    // Side by side: still marked, the context line on both sides.
    await page.locator('.view-switch button', { hasText: 'Side by side' }).click();
    await page.locator('.rv-file[data-path="src/a.ts"] .rl.pair').first().waitFor();
    await expect.poll(() => kindsOf(page)).toEqual(['add', 'context', 'del']);

    // One file at a time, dark: the selected file's table is marked, and the walk moves between files.
    await page.locator('#theme').selectOption('dark');
    await page.locator('[data-layout="file"]').click();
    await page.locator('table.diff').waitFor();
    await expect.poll(async () => (await marks(page)).some((m) => m.table)).toBe(true);
    const dark = await inPage<string>(
      page,
      `() => getComputedStyle(document.querySelector('table.diff td.code'), '::highlight(search-match)').backgroundColor`,
    );
    expect(dark).toBe('rgb(158, 106, 3)');
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('.');
      await expect.poll(async () => (await marks(page, 'search-current')).filter((m) => m.table).length).toBeGreaterThan(0);
    }
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/search-dark-file.png` });
    // Escape in the field clears the search and its marks.
    await page.locator('#diff-search').focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => count.textContent()).toBe('');
    expect(await marks(page)).toEqual([]);
    expect(errors).toEqual([]);
  }, 180_000);
});
