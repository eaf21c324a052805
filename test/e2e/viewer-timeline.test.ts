import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture, type PageGlobals } from './viewer-harness.js';

const fx = useViewerFixture();

describe('viewer timeline', () => {
  it("expands a turn's steps, opens one, restores to before it, shows presented files, the user's own actions and past sessions", async () => {
    const client = fx.server.client;
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n' });
    writeFileSync(join(repo, 'report.md'), '# Audit\n\nAll good.\n');
    const session = await createSession(client, 'steps', repo);
    await client.request('harness/turnStarted', { channel: session, turnId: 't1', message: 'Two steps' }, { timeoutMs: 60_000 });
    await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: ['a.txt'], tool: 'Edit' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'a.txt': 'A\n' });
    await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: ['b.txt'], tool: 'Write' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'b.txt': 'b\n' });
    await client.request(
      'harness/presentFiles',
      { channel: session, turnId: 't1', files: [{ path: 'report.md', description: 'What the audit found' }] },
      { timeoutMs: 60_000 },
    );
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 120_000 });
    // An earlier session that has ended stays browsable.
    const oldRepo = makeRepo(fx.temp.make(), { 'old.txt': 'old\n' });
    const old = await createSession(client, 'earlier', oldRepo);
    await recordTurn(client, old, 'o1', 'Old work', () => writeFiles(oldRepo, { 'old.txt': 'OLD\n' }));
    await client.request('harness/sessionEnded', { channel: old }, { timeoutMs: 60_000 });

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=steps&turn=t1`);
    const steps = page.locator('#turn-extras .steps');
    await expect.poll(() => steps.locator('summary').textContent(), { timeout: 30_000 }).toBe('2 tool calls in turn 1 “Two steps”');
    await steps.locator('summary').click();
    expect(await steps.locator('[data-step] .step-open').allTextContents()).toEqual(['1. Edit · a.txt', '2. Write · b.txt']);

    // A step opens on its own, in the address too.
    await steps.locator('[data-step="2"] .step-open').click();
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Turn 1, step 2');
    await expect.poll(() => page.locator('#files .row.file').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')))).toEqual(['b.txt']);
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).location.search)).toBe('?session=steps&turn=t1&step=2&file=b.txt');
    await page.reload();
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Turn 1, step 2');
    await expect.poll(() => page.locator('#turn-extras [data-step="2"] .step-open').getAttribute('aria-current')).toBe('true');

    // Presented files are listed on their turn and readable.
    await page.locator('[data-presented="report.md"]').click();
    await expect.poll(() => page.locator('#presented-content').textContent()).toContain('All good.');
    expect(await page.locator('#presented-description').textContent()).toBe('What the audit found');
    await page.locator('#presented-close').click();

    // Restore to before step 2: the dry run shows b.txt going away; the message names the step and the turn.
    await page.locator('#turn-extras [data-step="2"] [data-operation="restore-checkpoint"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    expect(await page.locator('#confirm-title').textContent()).toBe('Restore checkpoint to before step 2 (Write) of turn 1 “Two steps”?');
    expect(await page.locator('#confirm-preview').textContent()).toContain('b.txt is deleted');
    await page.locator('#confirm-ok').click();
    await expect.poll(() => page.locator('.notice.info .notice-text').textContent(), { timeout: 30_000 }).toContain('turn 1 “Two steps”');
    // The restore is the user's own action, listed apart from the agent's turns.
    const action = page.locator('#turns li.user-action');
    await action.first().waitFor({ timeout: 30_000 });
    expect(await action.first().locator('.badge.you').count()).toBe(1);
    expect(await page.locator('#turns li.turn').count()).toBe(1);

    // The ended session is under "Past sessions", and opens for review.
    await page.locator('[data-session="ahp-session:/earlier"]').click();
    await page.locator('.rv-file[data-path="old.txt"] .rl.add').waitFor({ timeout: 30_000 });
    expect(await page.locator('#sessions li.group').allTextContents()).toEqual(['Recording', 'Past sessions']);
    expect(errors).toEqual([]);
  }, 180_000);
});
