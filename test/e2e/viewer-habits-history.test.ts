import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// One server for the file: each test records a session of its own and opens the viewer on it.
const fx = useViewerFixture('file');

describe('viewer: redo, a file’s history, changed since you viewed', () => {
  it('offers Redo after an Undo, with the same dialog, and it takes the undo back', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\n' });
    const session = await createSession(fx.server.client, 'redo', repo);
    await recordTurn(fx.server.client, session, 't1', 'Shout', () => writeFiles(repo, { 'a.txt': 'ONE\n' }));
    const read = () => readFileSync(join(repo, 'a.txt'), 'utf8');
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=redo&turn=t1`);
    await page.locator('.rv-file[data-path="a.txt"] .hunk-row [data-operation="revert"]').click();
    await page.locator('#confirm-ok').click();
    await expect.poll(read, { timeout: 30_000 }).toBe('one\n');
    await page.locator('.notice [data-operation="undo"]').click();
    await page.locator('#confirm-ok').click();
    await expect.poll(read, { timeout: 30_000 }).toBe('ONE\n');

    // The undo's notice offers Redo; its dialog previews what it writes, as every operation's does.
    const redo = page.locator('.notice [data-operation="redo"]');
    await redo.waitFor({ timeout: 30_000 });
    await redo.click();
    await page.locator('#confirm-dialog[open]').waitFor();
    expect(await page.locator('#confirm-title').textContent()).toBe('Redo the last undo?');
    await expect.poll(() => page.locator('#confirm-body').textContent()).toContain('a.txt');
    await page.locator('#confirm-ok').click();
    await expect.poll(read, { timeout: 30_000 }).toBe('one\n');
    await expect
      .poll(() => page.locator('.notice .notice-text').textContent(), { timeout: 30_000 })
      .toBe('Redid the revert of turn 1 “Shout”: put back 1 file');
    // Nothing more to redo: the notice of the redo offers Undo, not Redo.
    expect(await page.locator('.notice [data-operation="redo"]').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 180_000);

  it('shows a file’s history, version after version, and what changed since it was ticked "Viewed"', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\n', 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'habits', repo);
    const client = fx.server.client;
    await client.request('harness/turnStarted', { channel: session, turnId: 't1', message: 'Grow' });
    await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: ['a.txt'], tool: 'Edit' });
    writeFiles(repo, { 'a.txt': 'one\ntwo\n', 'b.txt': 'B\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 120_000 });

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=habits&turn=t1`);
    await page.locator('.chip[data-change-kind="session"]').click();
    const a = page.locator('.rv-file[data-path="a.txt"]');
    await a.locator('.rv-viewed').waitFor({ timeout: 30_000 });
    await a.locator('.rv-viewed').check();
    await expect.poll(() => a.locator('.rv-viewed').isChecked()).toBe(true);
    expect(await a.locator('.changed-since-viewed').count()).toBe(0);

    // A later turn changes the viewed file: the tick goes, and the header says it changed since.
    await recordTurn(client, session, 't2', 'Grow more', () => writeFiles(repo, { 'a.txt': 'one\ntwo\nthree\n' }));
    const badge = a.locator('.changed-since-viewed');
    await badge.waitFor({ timeout: 30_000 });
    expect(await a.locator('.rv-viewed').isChecked()).toBe(false);
    expect(await page.locator('.rv-file[data-path="b.txt"] .changed-since-viewed').count()).toBe(0);
    await badge.click();
    const dialog = page.locator('#history-dialog[open]');
    await dialog.waitFor();
    expect(await page.locator('#history-title').textContent()).toBe('Changes to a.txt since you viewed it');
    await expect.poll(() => dialog.locator('.history-line.add').allTextContents(), { timeout: 30_000 }).toEqual(['3+ three']);
    expect(await dialog.locator('.history-line.del').count()).toBe(0);
    await page.locator('#history-close').click();

    // The file's history: turn 1's step, then turn 2, each against the version before.
    await a.locator('.file-history-button').click();
    await dialog.waitFor();
    expect(await page.locator('#history-title').textContent()).toBe('History of a.txt');
    const headings = dialog.locator('.history-heading');
    await expect.poll(() => headings.count(), { timeout: 30_000 }).toBe(2);
    expect(await headings.nth(0).textContent()).toMatch(/^Turn 1, step 1 \(Edit\) · .+ · modified \+1 −0$/);
    expect(await headings.nth(1).textContent()).toMatch(/^Turn 2 · .+ · modified \+1 −0$/);
    const entries = dialog.locator('.history-entry');
    await expect.poll(() => entries.nth(1).locator('.history-line.add').allTextContents(), { timeout: 30_000 }).toEqual(['3+ three']);
    expect(await entries.nth(0).locator('.history-line.add').allTextContents()).toEqual(['2+ two']);
    await page.locator('#history-close').click();

    // Ticked again, the badge goes.
    await a.locator('.rv-viewed').check();
    await expect.poll(() => badge.count()).toBe(0);
    expect(errors).toEqual([]);
  }, 180_000);
});
