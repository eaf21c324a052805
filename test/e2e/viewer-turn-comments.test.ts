/**
 * Review comments the viewer does not draw in a file's diff of the "All
 * files" layout: a comment on a whole turn, written from the turn's row in
 * the timeline and resolved there, and a line comment written in the "One
 * file" layout. Each is kept by the server as written.
 */
import { describe, expect, it } from 'vitest';
import type { ReviewComment } from '../../protocol/extensions/comments.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

const lines = (n: number, at: Record<number, string> = {}): string => Array.from({ length: n }, (_, i) => `${at[i + 1] ?? `line ${i + 1}`}\n`).join('');

describe('review comments on a whole turn and in the one-file layout', () => {
  it('writes and resolves a comment on turn 2 from the timeline, and a line comment in the one-file layout', async () => {
    const repo = makeRepo(fx.temp.make(), { 'src/app.ts': lines(8) });
    const session = await createSession(fx.server.client, 'tc', repo);
    await recordTurn(fx.server.client, session, 't1', 'first pass', () => writeFiles(repo, { 'src/app.ts': lines(8, { 3: 'const a = 1;' }) }));
    await recordTurn(fx.server.client, session, 't2', 'second pass', () =>
      writeFiles(repo, { 'src/app.ts': lines(8, { 3: 'const a = 1;', 6: 'const b = 2;' }) }),
    );
    const listed = async (): Promise<ReviewComment[]> =>
      (await fx.server.client.request<{ comments: ReviewComment[] }>('comments/list', { channel: session, state: 'all' })).comments;

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=tc&turn=t2`);

    // A comment on the whole of turn 2, from its row in the timeline.
    await page.getByRole('button', { name: 'Comment on turn 2' }).click();
    const box = page.getByRole('textbox', { name: 'Comment on turn 2' });
    await expect.poll(() => box.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await box.fill('Split this turn into smaller steps');
    await box.press('Control+Enter');
    const onTurn = page.getByRole('group', { name: 'Comments on turn 2' }).getByRole('article');
    await expect.poll(() => onTurn.getAttribute('aria-label')).toBe('Comment by you on turn 2');
    await expect.poll(() => onTurn.locator('.comment-body').textContent()).toBe('Split this turn into smaller steps');
    await expect.poll(() => onTurn.locator('.comment-author').textContent()).toBe('you');
    await expect.poll(() => page.locator('#open-comments').textContent()).toBe('1 open comment');
    expect(await listed()).toMatchObject([{ body: 'Split this turn into smaller steps', state: 'open', turn: 2, anchor: { kind: 'turn', turnId: 't2' } }]);

    // Resolved in the page: the server has it resolved, the toolbar counts none open.
    await onTurn.getByRole('button', { name: 'Resolve' }).click();
    await expect.poll(() => onTurn.locator('.comment-badge.resolved').textContent()).toBe('resolved');
    await expect.poll(() => onTurn.getByRole('button', { name: 'Reopen' }).isVisible()).toBe(true);
    await expect.poll(() => page.locator('#open-comments').count()).toBe(0);
    expect(await listed()).toMatchObject([{ state: 'resolved', anchor: { kind: 'turn' } }]);

    // The one-file layout: the "+" beside line 6, the same box, the comment under its line.
    await page.locator('[data-layout="file"]').click();
    await page.locator('.row.file[data-path="src/app.ts"] .file-open').click();
    const row6 = page.locator('table.diff tr').filter({ has: page.locator('td.num[data-line="R6"]') });
    await row6.hover();
    await row6.locator('.add-comment[data-comment-line="R6"]').click();
    const lineBox = page.getByRole('textbox', { name: 'Comment on line 6 of src/app.ts' });
    await expect.poll(() => lineBox.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await lineBox.fill('Name b after what it counts');
    await lineBox.press('Control+Enter');
    const onLine = page.locator('table.diff .comment');
    await expect.poll(() => onLine.getAttribute('aria-label')).toBe('Comment by you on line 6');
    await expect.poll(() => onLine.locator('.comment-body').textContent()).toBe('Name b after what it counts');
    // Under its line: the row before the comment's row is line 6.
    expect(await onLine.evaluate((el) => el.closest('tr')?.previousElementSibling?.querySelector('[data-line="R6"]') !== null)).toBe(true);
    await expect.poll(() => page.locator('#open-comments').textContent()).toBe('1 open comment');
    expect((await listed())[1]).toMatchObject({
      body: 'Name b after what it counts',
      state: 'open',
      turn: 2,
      anchor: { kind: 'lines', path: 'src/app.ts', side: 'after', startLine: 6, endLine: 6 },
    });
    expect(errors).toEqual([]);
  }, 60_000);
});
