import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture();

const TS_BEFORE = ['// Greets people.', 'export function greet(name: string): string {', "  return 'Hello, ' + name;", '}', ''].join('\n');
const TS_AFTER = TS_BEFORE.replace("'Hello, ' + name", "'Hi, ' + name");

describe('viewer syntax highlighting', () => {
  it('highlights code in both layouts and the one-file view, keeps changed words marked, and loads grammars on demand', async () => {
    const repo = makeRepo(fx.temp.make(), { 'src/greet.ts': TS_BEFORE, 'notes.txt': 'plain words\n' });
    const session = await createSession(fx.server.client, 'hl', repo);
    await recordTurn(fx.server.client, session, 't1', 'greet shorter', () =>
      writeFiles(repo, { 'src/greet.ts': TS_AFTER, 'notes.txt': 'plain words, more\n', 'tool.py': 'def run():\n    return 1\n' }),
    );

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=hl&turn=t1`);
    const chunks: { url: string; type: string | undefined; csp: string | undefined }[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/chunks/'))
        chunks.push({ url: response.url(), type: response.headers()['content-type'], csp: response.headers()['content-security-policy'] });
    });
    const ts = page.locator('.rv-file[data-path="src/greet.ts"]');
    await ts.locator('.hljs-keyword', { hasText: 'return' }).first().waitFor();
    expect(await ts.locator('.hljs-comment').first().textContent()).toBe('// Greets people.');
    // Word marks split a string token into pieces; together they are the whole string.
    const strings = (await ts.locator('.hljs-string').allTextContents()).join('');
    expect(strings).toContain("'Hello, '");
    expect(strings).toContain("'Hi, '");
    // Changed words stay marked on top of the colours.
    expect((await ts.locator('ins.word').allTextContents()).join('')).toContain('Hi');
    expect((await ts.locator('del.word').allTextContents()).join('')).toContain('Hello');
    await page.locator('.rv-file[data-path="tool.py"] .hljs-keyword', { hasText: 'def' }).waitFor();
    // Plain text stays plain.
    await page.locator('.rv-file[data-path="notes.txt"] .rl.add').waitFor();
    expect(await page.locator('.rv-file[data-path="notes.txt"] [class^="hljs-"]').count()).toBe(0);

    // Side by side.
    await page.locator('body').press('s');
    await ts.locator('.rl.pair .hljs-keyword', { hasText: 'return' }).first().waitFor();
    expect((await ts.locator('.rl.pair ins.word').allTextContents()).join('')).toContain('Hi');

    // The one-file view.
    await page.locator('[data-layout="file"]').click();
    await page.locator('.row.file[data-path="src/greet.ts"] .file-open').click();
    await page.locator('table.diff .hljs-keyword', { hasText: 'return' }).first().waitFor();
    expect((await page.locator('table.diff ins.word').allTextContents()).join('')).toContain('Hi');

    // Each grammar is a chunk of its own, fetched when a file needs it, served as JavaScript under the page's CSP.
    await expect.poll(() => chunks.length).toBeGreaterThan(0);
    const grammars = chunks.map((c) => c.url.replace(/.*\/chunks\//, '').replace(/-[A-Z0-9]+\.js$/, ''));
    expect(grammars).toEqual(expect.arrayContaining(['typescript', 'python']));
    expect(grammars).not.toContain('rust');
    for (const c of chunks) {
      expect(c.type).toBe('text/javascript; charset=utf-8');
      expect(c.csp).toContain("script-src 'self'");
    }
    expect(errors).toEqual([]);
  }, 180_000);
});
