import { describe, expect, it } from 'vitest';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, useViewerFixture } from './viewer-harness.js';

/** What the page's globals give the test's callbacks (the tests compile without the DOM's types). */
interface PageGlobals {
  getComputedStyle(el: unknown): { backgroundColor: string };
}

const fx = useViewerFixture();

describe("the viewer's blame gutter", () => {
  it('colours each line by who wrote it, says who on hover, and opens the turn on a click', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'one\ntwo\nthree\nfour\n' });
    const client = fx.server.client;
    const session = await createSession(client, 'blame', repo);
    // Turn 1: one Edit tool call rewrites line 1.
    await client.request('harness/turnStarted', { channel: session, turnId: 't1', message: 'Shout the first line' }, { timeoutMs: 60_000 });
    await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: ['a.txt'], tool: 'Edit' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'a.txt': 'ONE\ntwo\nthree\nfour\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 60_000 });
    // By hand between the turns; then turn 2 appends a line.
    writeFiles(repo, { 'a.txt': 'ONE\ntwo\nthree by hand\nfour\n' });
    await client.request('harness/turnStarted', { channel: session, turnId: 't2', message: 'Add five' }, { timeoutMs: 60_000 });
    writeFiles(repo, { 'a.txt': 'ONE\ntwo\nthree by hand\nfour\nfive\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't2' }, { timeoutMs: 60_000 });

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=blame&view=session&file=a.txt`, undefined, { layout: 'file' });
    const toggle = page.locator('.diff-header .blame-toggle');
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    // Nothing is asked until blame is turned on.
    expect(await page.locator('.blame-mark, .blame-legend').count()).toBe(0);
    await toggle.click();
    await page.locator('td.num[data-line="R5"] .blame-mark').waitFor();
    expect(await page.locator('.diff-header .blame-toggle').getAttribute('aria-pressed')).toBe('true');

    const marks = await page.locator('td.num[data-line^="R"] .blame-mark').evaluateAll((els) =>
      els.map((el) => ({
        line: el.parentElement?.getAttribute('data-line'),
        who: el.getAttribute('data-blame'),
        kind: [...el.classList].find((c) => c !== 'blame-mark'),
        colour: (globalThis as unknown as PageGlobals).getComputedStyle(el).backgroundColor,
      })),
    );
    expect(marks.map(({ line, who, kind }) => ({ line, who, kind }))).toEqual([
      { line: 'R1', who: 'turn 1 · step 1 Edit', kind: 'blame-turn' },
      { line: 'R2', who: expect.stringMatching(/^before recording · [0-9a-f]{7} /), kind: 'blame-before-recording' },
      { line: 'R3', who: 'you, between turns 1 and 2', kind: 'blame-user' },
      { line: 'R4', who: expect.stringMatching(/^before recording · /), kind: 'blame-before-recording' },
      { line: 'R5', who: 'turn 2', kind: 'blame-turn' },
    ]);
    // A colour per author: the two turns, you, and before recording all differ; the two old lines share one.
    const colour = (line: string) => marks.find((m) => m.line === line)!.colour;
    expect(new Set([colour('R1'), colour('R2'), colour('R3'), colour('R5')]).size).toBe(4);
    expect(colour('R4')).toBe(colour('R2'));

    const first = page.locator('td.num[data-line="R1"] .blame-mark');
    expect(await first.getAttribute('title')).toMatch(/^Turn 1 · step 1 \(Edit\)\n“Shout the first line”\nStarted .+\nClick to open turn 1\.$/);
    expect(await first.getAttribute('aria-label')).toBe('Line 1: turn 1 · step 1 Edit. Open turn 1');
    expect(await page.locator('td.num[data-line="R3"] .blame-mark').getAttribute('title')).toMatch(/^You, by hand between turns 1 and 2: an edit no turn made/);
    expect(await page.locator('.blame-legend li').allTextContents()).toEqual([
      'Turn 1 “Shout the first line”',
      'Turn 2 “Add five”',
      'You, between turns 1 and 2',
      expect.stringMatching(/^Before recording: [0-9a-f]{7} /),
    ]);

    await first.hover();
    await first.click();
    await page.waitForURL(/[?&]turn=t1\b/);
    expect(errors).toEqual([]);
  }, 60_000);
});
