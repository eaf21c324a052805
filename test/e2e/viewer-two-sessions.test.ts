/**
 * Two agents in one folder, in the viewer: a turn's row in the timeline says
 * which turn of the other session changed its files at the same time.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../helpers/workspace.js';
import { openViewer, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

describe('two sessions recording one folder', () => {
  it('says on the turn row which turn of the other session also changed its files', async () => {
    const repo = makeRepo(fx.temp.make(), { 'notes.md': '# notes\n' });
    const client = fx.server.client;
    for (const id of ['window-a', 'window-b']) {
      await client.request('createSession', { channel: `ahp-session:/${id}`, workingDirectory: pathToFileURL(repo).href, provider: 'claude-code' });
    }
    const call = (id: string, method: string, params: Record<string, unknown> = {}) =>
      client.request(method, { channel: `ahp-session:/${id}`, turnId: `${id}-1`, ...params }, { timeoutMs: 60_000 });
    await call('window-a', 'harness/turnStarted', { message: 'write the notes' });
    await call('window-b', 'harness/turnStarted', { message: 'fix the typos' });
    await call('window-a', 'harness/beforeEdit', { paths: ['notes.md'], tool: 'Bash' });
    appendFileSync(join(repo, 'notes.md'), 'from window a\n');
    await call('window-b', 'harness/beforeEdit', { paths: ['notes.md'], tool: 'Bash' });
    appendFileSync(join(repo, 'notes.md'), 'from window b\n');
    await call('window-a', 'harness/turnEnded');
    await call('window-b', 'harness/turnEnded');

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=window-a&turn=window-a-1`);
    const row = page.locator('#turns li.turn').filter({ has: page.locator('[data-turn="window-a-1"]') });
    await expect.poll(() => row.locator('.turn-also').allTextContents()).toEqual(['Also changed by “Claude Code — fix the typos” (turn 1): notes.md']);
    expect(errors).toEqual([]);
  }, 30_000);
});
