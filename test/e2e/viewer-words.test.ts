import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { protocolWords } from '../helpers/protocol-words.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, followLink, openViewer, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

/** Ids as the server makes them (26 characters of Crockford's base32), so that one shown raw is caught. */
const SESSION_ID = '01M8T9WRDS0000000000000SES';
const TURN_ONE = '01M8T9WRDS0000000000000TN1';
const TURN_TWO = '01M8T9WRDS0000000000000TN2';

/** What a person reads on the page now: its text, and every title, label, placeholder and reason a pointer or a screen reader gives. */
function readable(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const out = [document.body.innerText];
    for (const el of document.querySelectorAll('[title], [aria-label], [placeholder], [data-disabled-reason]')) {
      for (const name of ['title', 'aria-label', 'placeholder', 'data-disabled-reason']) {
        const value = el.getAttribute(name);
        if (value) out.push(value);
      }
    }
    return out;
  })()`) as Promise<string[]>;
}

describe('the words the viewer shows', () => {
  it('labels, tooltips, dialogs and notices speak in turn numbers and file names over a review with steps, a hand edit, operations and undo', async () => {
    const { client } = fx.server;
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' });
    const session = await createSession(client, SESSION_ID, repo);
    // Turn 1 with two tool calls (steps), turn 2 with one file, then a hand edit after the last turn.
    await client.request('harness/turnStarted', { channel: session, turnId: TURN_ONE, message: 'Rework a.txt' }, { timeoutMs: 60_000 });
    await client.request('harness/beforeEdit', { channel: session, turnId: TURN_ONE, paths: ['a.txt'], tool: 'Edit' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'a.txt': 'one\nTWO\nthree\n' });
    await client.request('harness/beforeEdit', { channel: session, turnId: TURN_ONE, paths: ['c.txt'], tool: 'Write' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'c.txt': 'new\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: TURN_ONE }, { timeoutMs: 120_000 });
    await client.request('harness/turnStarted', { channel: session, turnId: TURN_TWO, message: 'Touch b' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'b.txt': 'b\nmore\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: TURN_TWO }, { timeoutMs: 120_000 });
    writeFileSync(join(repo, 'b.txt'), 'b\nmore\nby hand\n');

    const seen: { where: string; text: string }[] = [];
    const look = async (where: string): Promise<void> => {
      for (const text of await readable(page)) seen.push({ where, text });
    };

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=${SESSION_ID}&turn=${TURN_ONE}`);
    const toolbarRestore = page.locator('.toolbar [data-operation="restore-checkpoint"]');
    await toolbarRestore.waitFor();
    await page.locator('#turn-extras .steps').waitFor();
    await page.locator('#turn-extras .steps summary').click();
    await look('turn 1');

    // The restore's dialog, then the revert's, which conflicts with the hand edit.
    await toolbarRestore.click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await look('restore dialog');
    await page.locator('#confirm-cancel').click();
    // A step's "Restore to here" dialog.
    await page.locator('#turn-extras .step[data-step="2"] [data-operation="restore-checkpoint"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await look('restore to a step dialog');
    await page.locator('#confirm-cancel').click();

    // Turn 2: the revert conflicts with the hand edit.
    // The other views are reached in the page (as back / forward reaches them), without loading it again.
    await followLink(page, `?session=${SESSION_ID}&turn=${TURN_TWO}`);
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Turn: Touch b');
    await page.locator('.toolbar [data-operation="revert"]').waitFor();
    await look('turn 2');
    await page.locator('.toolbar [data-operation="revert"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await look('conflicting revert dialog');
    await page.locator('#confirm-cancel').click();

    // Turn 1: revert a hunk, read the notice, undo it from the notice.
    await followLink(page, `?session=${SESSION_ID}&turn=${TURN_ONE}`);
    await expect.poll(() => page.locator('#changeset-title').textContent()).toBe('Turn: Rework a.txt');
    await page.locator('.rv-file[data-path="a.txt"] .hunk-row [data-operation="revert"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await look('hunk revert dialog');
    await page.locator('#confirm-ok').click();
    await page.locator('.notice.info').waitFor({ timeout: 30_000 });
    await look('after the hunk revert');
    await page.locator('.notice [data-operation="undo"]').click();
    await page.locator('#confirm-dialog[open]').waitFor();
    await look('undo dialog');
    await page.locator('#confirm-ok').click();
    await expect.poll(async () => (await page.locator('.notice .notice-text').textContent()) ?? '', { timeout: 30_000 }).toMatch(/^Undid/);
    await look('after undo');

    // The whole restore, and the timeline with the user's own actions.
    await toolbarRestore.click();
    await page.locator('#confirm-ok').click();
    await expect.poll(async () => (await page.locator('.notice .notice-text').textContent()) ?? '', { timeout: 30_000 }).toContain('turn 1');
    await look('after the restore');
    await followLink(page, `?session=${SESSION_ID}`);
    await page.locator('.chip[data-change-kind="session"][aria-pressed="true"]').waitFor();
    await page.locator('.toolbar').waitFor();
    await look('the session');

    expect(seen.length).toBeGreaterThan(50);
    // What was read includes the Restore button's tooltip, a dialog and a notice.
    const all = seen.map((s) => s.text).join('\n');
    expect(all).toContain('to its state just before that tool call');
    expect(all).toContain('Undo brings them back.');
    expect(all).toMatch(/Undid/);
    const found = seen.flatMap(({ where, text }) => protocolWords(text).map((p) => ({ ...p, where, text: p.text.slice(0, 400) })));
    expect(found).toEqual([]);
    expect(errors).toEqual([]);
  }, 240_000);
});
