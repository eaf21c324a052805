import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// One server for the file: each test records a session of its own and opens the viewer on it.
const fx = useViewerFixture('file');

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const BEFORE = `${LINES.join('\n')}\n`;
const AFTER = `${LINES.map((l, i) => (i === 9 ? 'line ten, edited' : l)).join('\n')}\n`;

describe('web viewer operations', () => {
  it('reverts a hunk from the live session changeset, the file leaves the list, and undo brings it back', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': BEFORE, 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'ops', repo);
    await recordTurn(fx.server.client, session, 't1', 'edit two files', () => writeFiles(repo, { 'a.txt': AFTER, 'b.txt': 'B\n' }));

    const sessionChangeset = 'ahp-changeset:/ops/session';
    await fx.server.client.subscribe(sessionChangeset);
    await expect.poll(() => fx.server.client.state<ChangesetState>(sessionChangeset)?.status, { timeout: 30_000 }).toBe('ready');
    const operations = fx.server.client.state<ChangesetState>(sessionChangeset)?.operations ?? [];
    // The session changeset offers hunk-scoped revert and undo.
    expect(operations.find((op) => op.id === 'revert')?.scopes).toContain('range');
    expect(operations.map((op) => op.id)).toContain('undo');

    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl, undefined, { layout: 'file' });
    await page.locator('.chip[data-change-kind="session"][aria-pressed="true"]').waitFor();
    // The changeset-scoped operations are toolbar buttons.
    await page.locator('.toolbar [data-operation="revert"]').waitFor();
    await page.locator('.toolbar [data-operation="undo"]').waitFor();

    await page.locator('.row.file[data-path="a.txt"] .file-open').click();
    const hunkRevert = page.locator('tr.hunk-header [data-operation="revert"]');
    await hunkRevert.first().waitFor();
    expect(await hunkRevert.count()).toBe(1);
    await hunkRevert.click();
    // The operation's confirmation text is asked for first.
    const dialog = page.locator('#confirm-dialog');
    await dialog.waitFor({ state: 'visible' });
    // The body fills in as the dry run answers.
    await expect.poll(() => page.locator('#confirm-body').textContent()).toContain('Undo brings it back');
    await page.locator('#confirm-ok').click();

    await page.locator('.row.file[data-path="a.txt"]').waitFor({ state: 'detached', timeout: 60_000 });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe(BEFORE);
    expect(await page.locator('.row.file[data-path="b.txt"]').count()).toBe(1);
    await expect.poll(() => page.locator('.notice.info').count(), { timeout: 30_000 }).toBe(1);

    // Undo is offered right next to the result.
    await page.locator('.notice [data-operation="undo"]').click();
    await dialog.waitFor({ state: 'visible' });
    await page.locator('#confirm-ok').click();
    await page.locator('.row.file[data-path="a.txt"]').waitFor({ timeout: 60_000 });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe(AFTER);
    expect(errors).toEqual([]);
  }, 240_000);

  it('reverts a whole file from its per-file button, and cancelling the confirmation does nothing', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': BEFORE, 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'ops2', repo);
    await recordTurn(fx.server.client, session, 't1', 'edit', () => writeFiles(repo, { 'a.txt': AFTER, 'b.txt': 'B\n' }));
    await fx.server.client.subscribe('ahp-changeset:/ops2/session');
    await expect.poll(() => fx.server.client.state<ChangesetState>('ahp-changeset:/ops2/session')?.status, { timeout: 30_000 }).toBe('ready');
    const operations = fx.server.client.state<ChangesetState>('ahp-changeset:/ops2/session')?.operations ?? [];
    expect(operations.find((op) => op.id === 'revert')?.scopes).toContain('resource');

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=ops2&view=session`, undefined, { layout: 'file' });
    await page.locator('.row.file[data-path="b.txt"] .file-open').click();
    const fileRevert = page.locator('.diff-header [data-operation="revert"]');
    await fileRevert.click();
    await page.locator('#confirm-cancel').click();
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('B\n');
    await fileRevert.click();
    await page.locator('#confirm-ok').click();
    await page.locator('.row.file[data-path="b.txt"]').waitFor({ state: 'detached', timeout: 60_000 });
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b\n');
    // The selection moves on to the remaining file.
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('a.txt');
    expect(errors).toEqual([]);
  }, 240_000);
});
