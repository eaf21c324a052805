import { describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

describe('viewer "Viewed" across views', () => {
  it('says where a file is ticked in another view and matches it; marks all (or all shown) viewed', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const session = await createSession(fx.server.client, 'viewed', repo);
    await recordTurn(fx.server.client, session, 't1', 'Touch three', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n', 'c.txt': 'C\n' }));
    // a.txt is ticked in the session view (by another client).
    const sessionUri = 'ahp-changeset:/viewed/session';
    await fx.server.client.subscribe(sessionUri);
    await expect.poll(() => fx.server.client.state<ChangesetState>(sessionUri)?.files.length, { timeout: 30_000 }).toBe(3);
    const fileA = fx.server.client.state<ChangesetState>(sessionUri)!.files.find((f) => f.id.endsWith('/a.txt'))!.id;
    fx.server.client.dispatch(sessionUri, { type: 'changeset/filesReviewChanged', files: [fileA], reviewed: true });

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=viewed&turn=t1`);
    const note = page.locator('.rv-file[data-path="a.txt"] .viewed-elsewhere');
    await expect.poll(() => note.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Viewed in Session Changes');
    expect(await note.getAttribute('title')).toContain('Each view keeps its own "Viewed" ticks');
    expect(await page.locator('.rv-file[data-path="b.txt"] .viewed-elsewhere').count()).toBe(0);
    await note.locator('button').click();
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('1 / 3 viewed');
    // Matched with the session view; the repository's uncommitted view keeps its own ticks and now differs.
    await expect.poll(() => note.locator('.badge').textContent()).toBe('Not viewed in Uncommitted Changes');

    // With a filter, "mark all" ticks only what is shown.
    await page.locator('#file-filter').fill('b.txt');
    await expect.poll(() => page.locator('#mark-all-viewed').textContent()).toBe('Mark 1 shown viewed');
    await page.locator('#mark-all-viewed').click();
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('2 / 3 viewed');
    await page.locator('#file-filter').fill('');
    await page.locator('#mark-all-viewed').click();
    await expect.poll(() => page.locator('#review-progress').textContent()).toBe('3 / 3 viewed');
    expect(await page.locator('#mark-all-viewed').isDisabled()).toBe(true);
    // Now the session view differs for b.txt and c.txt, and says so from its side.
    await page.locator('.chip[data-change-kind="session"]').click();
    await expect
      .poll(() => page.locator('.rv-file[data-path="b.txt"] .viewed-elsewhere .badge').textContent(), { timeout: 30_000 })
      .toMatch(/^Viewed in the view of turn 1 “Touch three”$/);
    expect(errors).toEqual([]);
  }, 180_000);
});
