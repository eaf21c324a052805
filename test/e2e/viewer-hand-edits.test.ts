import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// One server for the file: each test records a session of its own and opens the viewer on it.
const fx = useViewerFixture('file');

describe("the viewer's operation dialogs name edits no turn made", () => {
  it('restore of turn 1 names a file edited by hand between turn 1 and turn 2, and when', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const session = await createSession(fx.server.client, 'hand', repo);
    await recordTurn(fx.server.client, session, 't1', 'Edit a', () => writeFiles(repo, { 'a.txt': 'a by turn 1\n' }));
    writeFiles(repo, { 'b.txt': 'b by hand\n' });
    await recordTurn(fx.server.client, session, 't2', 'Edit c', () => writeFiles(repo, { 'c.txt': 'c by turn 2\n' }));

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=hand&turn=t1`);
    await page.locator('.toolbar [data-operation="restore-checkpoint"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    const edited = page.locator('#confirm-preview .user-edited');
    expect(await edited.locator('h3').textContent()).toBe('Edits no turn made that will be overwritten (1)');
    expect(await edited.locator('li').allTextContents()).toEqual(['b.txt — edited between turn 1 and turn 2: overwritten, undo brings it back']);
    await page.locator('#confirm-cancel').click();
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b by hand\n');
    expect(errors).toEqual([]);
  }, 120_000);

  it("an ended session's revert lists only its own files and names the later change to one of them as kept", async () => {
    const lines = (edit: Record<number, string>) => Array.from({ length: 20 }, (_, i) => `${edit[i] ?? `line ${i}`}\n`).join('');
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': lines({}) });
    const session = await createSession(fx.server.client, 'over', repo);
    await recordTurn(fx.server.client, session, 't1', 'Edit both', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': lines({ 1: 'by the turn' }) }));
    await fx.server.service.sessions.get(session)!.end();
    writeFiles(repo, { 'NEW.txt': 'made later\n', 'b.txt': lines({ 1: 'by the turn', 18: 'by hand later' }) });

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=over&view=session`);
    await page.locator('.toolbar [data-operation="revert"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    const preview = page.locator('#confirm-preview');
    expect(await preview.textContent()).toContain('Files that change (2)');
    expect(await preview.textContent()).not.toContain('NEW.txt');
    const edited = preview.locator('.user-edited');
    expect(await edited.locator('h3').textContent()).toBe('Edits no turn made (1)');
    expect(await edited.locator('li').allTextContents()).toEqual(['b.txt — changed since the session ended: kept, the revert merges around it']);
    await page.locator('#confirm-cancel').click();
    expect(errors).toEqual([]);
  }, 120_000);
});
