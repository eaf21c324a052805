/**
 * Commits on the timeline: once the user commits, the row of each turn
 * whose lines the commit added says "committed in a1b2c3d", the commit's
 * message on hover — live, without a reload.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { git, makeRepo } from '../helpers/workspace.js';
import { openViewer, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

describe('commits on the timeline', () => {
  it("says on a turn's row which commit its lines landed in", async () => {
    const repo = makeRepo(fx.temp.make(), { 'parser.ts': 'one\n' });
    const client = fx.server.client;
    await client.request('createSession', { channel: 'ahp-session:/commits', workingDirectory: pathToFileURL(repo).href, provider: 'claude-code' });
    const call = (method: string, params: Record<string, unknown> = {}) =>
      client.request(method, { channel: 'ahp-session:/commits', turnId: 't1', ...params }, { timeoutMs: 60_000 });
    await call('harness/turnStarted', { message: 'count the lines' });
    await call('harness/beforeEdit', { paths: ['parser.ts'], tool: 'Edit' });
    appendFileSync(join(repo, 'parser.ts'), 'count()\n');
    await call('harness/turnEnded');

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=commits&turn=t1`);
    const row = page.locator('#turns li.turn').filter({ has: page.locator('[data-turn="t1"]') });
    await expect.poll(() => row.locator('.turn-message').allTextContents()).toEqual(['1. count the lines']);
    expect(await row.locator('.turn-commits').count()).toBe(0);
    git(repo, ['commit', '-q', '-am', 'Fix parser']);
    const head = git(repo, ['rev-parse', 'HEAD']);
    await expect.poll(() => row.locator('.turn-commits').allTextContents(), { timeout: 20_000 }).toEqual([` · committed in ${head.slice(0, 7)}`]);
    expect(await row.locator('.turn-commit').getAttribute('title')).toBe('Fix parser');
    expect(errors).toEqual([]);
  }, 60_000);
});
