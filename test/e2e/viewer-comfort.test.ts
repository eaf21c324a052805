import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// One server for the file: each test records a session of its own and opens the viewer on it.
const fx = useViewerFixture('file');

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** The in-page globals these tests read. */
interface ComfortGlobals {
  document: { body: unknown; activeElement: { getAttribute(name: string): string | null } | null };
  getComputedStyle(el: unknown): { backgroundColor: string };
}

describe('viewer comfort', () => {
  it('switches light and dark beside the system preference and remembers it; panes resize, hide, and side by side falls back to unified when narrow', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n' });
    const session = await createSession(fx.server.client, 'comfort', repo);
    await recordTurn(fx.server.client, session, 't1', 'first', () => writeFiles(repo, { 'a.txt': 'A\n' }));
    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl, { width: 1300, height: 800 }, { colorScheme: 'dark' });
    const background = (): Promise<string> =>
      page.evaluate(() => {
        const g = globalThis as unknown as ComfortGlobals;
        return g.getComputedStyle(g.document.body).backgroundColor;
      });
    await page.locator('.rv-file[data-path="a.txt"] .rl.add').waitFor();
    expect(await background()).toBe('rgb(13, 17, 23)');
    await page.locator('#theme').selectOption('light');
    await expect.poll(background).toBe('rgb(255, 255, 255)');

    // Drag the file list wider.
    const files = page.locator('#files-column');
    const before = (await files.boundingBox())!.width;
    /** How much wider than at first the file list is, in whole pixels. */
    const widened = async (): Promise<number> => Math.round((await files.boundingBox())!.width - before);
    const bar = (await page.locator('[data-splitter="files"]').boundingBox())!;
    await page.mouse.move(bar.x + bar.width / 2, bar.y + 200);
    await page.mouse.down();
    await page.mouse.move(bar.x + bar.width / 2 + 120, bar.y + 200, { steps: 4 });
    await page.mouse.up();
    await expect.poll(widened).toBe(120);

    // Both are remembered: after a reload the page is light and the file list as wide.
    await page.reload();
    await page.locator('.rv-file[data-path="a.txt"] .rl.add').waitFor();
    expect(await background()).toBe('rgb(255, 255, 255)');
    expect(await page.locator('#theme').inputValue()).toBe('light');
    await expect.poll(widened).toBe(120);
    await page.locator('#theme').selectOption('system');
    await expect.poll(background).toBe('rgb(13, 17, 23)');
    await page.locator('[data-splitter="files"]').focus();
    await page.keyboard.press('ArrowLeft');
    await expect.poll(widened).toBe(110);

    // 1300 px with both side panes leaves the diff too narrow for two columns: side by side draws unified, and says so.
    await page.locator('body').press('s');
    await page.locator('#narrow-note').waitFor();
    expect(await page.locator('.rv-body.unified').count()).toBe(1);
    // Hiding both side panes gives it the room.
    await page.locator('[data-toggle="sidebar"]').click();
    await page.locator('[data-toggle="files"]').click();
    await expect.poll(() => files.isVisible()).toBe(false);
    await page.locator('.rv-body.split').waitFor();
    expect(await page.locator('#narrow-note').count()).toBe(0);
    await page.locator('[data-toggle="files"]').click();
    await expect.poll(() => files.isVisible()).toBe(true);
    expect(errors).toEqual([]);
  }, 180_000);

  it('moves by hunk with n / p and by turn with [ / ], lists the keys with ?, and keeps the focus on the selected file', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': numbered(300), 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const session = await createSession(fx.server.client, 'keys', repo);
    await recordTurn(fx.server.client, session, 't1', 'three hunks', () =>
      writeFiles(repo, {
        'a.txt': numbered(300).replace('line 10\n', 'LINE 10\n').replace('line 100\n', 'LINE 100\n').replace('line 200\n', 'LINE 200\n'),
        'b.txt': 'B\n',
        'c.txt': 'C\n',
      }),
    );
    await recordTurn(fx.server.client, session, 't2', 'second', () => writeFiles(repo, { 'c.txt': 'CC\n' }));
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=keys&turn=t1`, { width: 1400, height: 700 });
    const a = page.locator('.rv-file[data-path="a.txt"]');
    await a.locator('.rl.hunk-row').first().waitFor();
    const reviewTop = (await page.locator('#review').boundingBox())!.y;
    const hunkOffset = async (n: number): Promise<number> => (await a.locator(`.rl.hunk-row[data-hunk="${n}"]`).boundingBox())!.y - reviewTop;
    const header = (await a.locator('.rv-header').boundingBox())!.height;
    // Each `n` brings the next hunk just under the file's sticky header; `p` goes back.
    for (const n of [0, 1, 2]) {
      await page.locator('body').press('n');
      await expect.poll(() => hunkOffset(n)).toBeCloseTo(header, 0);
    }
    await page.locator('body').press('p');
    await expect.poll(() => hunkOffset(1)).toBeCloseTo(header, 0);

    // `]` and `[` walk the turns.
    await page.locator('body').press(']');
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Turn: second');
    await page.locator('body').press('[');
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Turn: three hunks');

    // `?` lists the shortcuts; Escape closes the list.
    await page.locator('body').press('?');
    await page.locator('#help-dialog[open]').waitFor();
    expect(await page.locator('#help-dialog').textContent()).toContain('next / previous hunk');
    await page.keyboard.press('Escape');
    await page.locator('#help-dialog[open]').waitFor({ state: 'detached' });

    // Focus follows the selection: after j the ring is on the newly selected file.
    await page.locator('.row.file[data-path="a.txt"] .file-open').click();
    await page.keyboard.press('j');
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('b.txt');
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as ComfortGlobals).document.activeElement?.getAttribute('data-focus-key')))
      .toMatch(/^file:.*b\.txt$/);
    expect(errors).toEqual([]);
  }, 180_000);
});
