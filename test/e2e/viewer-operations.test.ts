import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// One server for the file: each test records a session of its own and opens the viewer on it.
const fx = useViewerFixture('file');

describe('viewer operations say what they will do', () => {
  it('confirms with the dry run (files, edits no turn made, conflicts), names turns and hunks, waits for a recording turn, and clears notices', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'ops', repo);
    await recordTurn(fx.server.client, session, 't1', 'Shout the words', () =>
      writeFiles(repo, { 'a.txt': 'ONE\ntwo\n', 'b.txt': 'B\n', 'new.txt': 'fresh\n' }),
    );
    // The user edits b.txt after the turn, outside any turn.
    writeFileSync(join(repo, 'b.txt'), 'B by hand\n');

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=ops&turn=t1`);
    await page.locator('.toolbar [data-operation="restore-checkpoint"]').waitFor();

    // Restore: the dialog names the turn and lists what changes, including the hand edit it overwrites.
    await page.locator('.toolbar [data-operation="restore-checkpoint"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    expect(await page.locator('#confirm-title').textContent()).toBe('Restore checkpoint turn 1 “Shout the words”?');
    const preview = page.locator('#confirm-preview');
    expect(await preview.locator('.preview-group').first().locator('h3').textContent()).toBe('Edits no turn made that will be overwritten (1)');
    expect(await preview.locator('.user-edited li').allTextContents()).toEqual([
      'b.txt — edited after turn 1, the last turn: overwritten, undo brings it back',
    ]);
    expect(await preview.textContent()).toContain('Files that change (3)');
    expect(await preview.textContent()).toContain('new.txt is deleted');
    // Server text shows `undo` as code, not with backticks.
    expect(await page.locator('#confirm-body').textContent()).not.toContain('`');
    expect(await page.locator('#confirm-body').textContent()).toContain('Undo brings them back.');
    await page.locator('#confirm-cancel').click();

    // Revert of the turn conflicts with the hand edit: the dialog says so and only Cancel is possible.
    await page.locator('.toolbar [data-operation="revert"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    expect(await page.locator('.preview-group.conflict li').allTextContents()).toEqual([expect.stringContaining('b.txt')]);
    expect(await page.locator('#confirm-ok').isDisabled()).toBe(true);
    await page.locator('#confirm-cancel').click();

    // A hunk's confirmation says which hunk of which file.
    await page.locator('.rv-file[data-path="a.txt"] .hunk-row [data-operation="revert"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    expect(await page.locator('#confirm-title').textContent()).toBe('Revert hunk 1 of a.txt?');
    expect(await page.locator('#confirm-preview').textContent()).toContain('a.txt changes');
    await page.locator('#confirm-ok').click();
    await expect.poll(() => page.locator('.notice.info').count(), { timeout: 30_000 }).toBe(1);
    // The next action clears the notice.
    await page.locator('.row.file[data-path="new.txt"] .file-open').click();
    await expect.poll(() => page.locator('.notice').count()).toBe(0);

    // Restore's message names the turn by number and title, not its id.
    await page.locator('.toolbar [data-operation="restore-checkpoint"]').click();
    await page.locator('#confirm-ok').click();
    await expect.poll(() => page.locator('.notice.info .notice-text').textContent(), { timeout: 30_000 }).toContain('the start of turn 1 “Shout the words”');

    // While a turn is recorded, operations are disabled and say why.
    await fx.server.client.request('harness/turnStarted', { channel: session, turnId: 't2', message: 'Busy agent' }, { timeoutMs: 60_000 });
    const revert = page.locator('.toolbar [data-operation="revert"]');
    await expect
      .poll(() => revert.getAttribute('data-disabled-reason'), { timeout: 30_000 })
      .toBe('Waiting for turn 2 “Busy agent” to finish recording; operations run once it ends.');
    expect(await revert.isDisabled()).toBe(true);
    await fx.server.client.request('harness/turnEnded', { channel: session, turnId: 't2' }, { timeoutMs: 120_000 });
    await expect.poll(() => revert.isDisabled(), { timeout: 30_000 }).toBe(false);
    expect(errors).toEqual([]);
  }, 180_000);

  it("disables the notice's Undo, with the reason, while a turn is recorded", async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\n' });
    const session = await createSession(fx.server.client, 'undo', repo);
    await recordTurn(fx.server.client, session, 't1', 'Shout', () => writeFiles(repo, { 'a.txt': 'ONE\n' }));
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=undo&turn=t1`);
    await page.locator('.rv-file[data-path="a.txt"] .hunk-row [data-operation="revert"]').click();
    await page.locator('#confirm-ok').click();
    const undo = page.locator('.notice [data-operation="undo"]');
    await undo.waitFor({ timeout: 30_000 });
    expect(await undo.isDisabled()).toBe(false);

    await fx.server.client.request('harness/turnStarted', { channel: session, turnId: 't2', message: 'Busy agent' }, { timeoutMs: 60_000 });
    await expect
      .poll(() => undo.getAttribute('data-disabled-reason'), { timeout: 30_000 })
      .toBe('Waiting for turn 2 “Busy agent” to finish recording; operations run once it ends.');
    expect(await undo.isDisabled()).toBe(true);
    expect(await undo.getAttribute('title')).toBe('Waiting for turn 2 “Busy agent” to finish recording; operations run once it ends.');

    await fx.server.client.request('harness/turnEnded', { channel: session, turnId: 't2' }, { timeoutMs: 120_000 });
    await expect.poll(() => undo.isDisabled(), { timeout: 30_000 }).toBe(false);
    // Once the turn ended, the same Undo puts back what the revert wrote.
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\n');
    await undo.click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await page.locator('#confirm-ok').click();
    await expect.poll(() => readFileSync(join(repo, 'a.txt'), 'utf8'), { timeout: 30_000 }).toBe('ONE\n');
    expect(errors).toEqual([]);
  }, 180_000);

  it('offers nothing more to show on a fully shown added file', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n' });
    const session = await createSession(fx.server.client, 'added', repo);
    await recordTurn(fx.server.client, session, 't1', 'add', () => writeFiles(repo, { 'fresh.txt': 'one\ntwo\nthree\n' }));
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=added&turn=t1&file=fresh.txt`, undefined, { layout: 'file' });
    await page.locator('table.diff tr.line.add').nth(2).waitFor();
    expect(await page.locator('button.expand').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
