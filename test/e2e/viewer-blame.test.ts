import { describe, expect, it } from 'vitest';
import { recordBlameScene } from './doc-scenes.js';
import { openViewer, useViewerFixture } from './viewer-harness.js';

/** What the page's globals give the test's callbacks (the tests compile without the DOM's types). */
interface PageGlobals {
  getComputedStyle(el: unknown): { backgroundColor: string };
}

const fx = useViewerFixture();

describe("the viewer's blame gutter", () => {
  it('colours each line by who wrote it, says who on hover, opens the turn on a click, and marks the files of All files too', async () => {
    // src/greet.ts: committed before recording; turn 1 rewrites line 3, you line 7, turn 2 appends lines 9–12.
    await recordBlameScene(fx);
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=blame&view=session&file=src/greet.ts`, undefined, { layout: 'file' });
    const toggle = page.locator('.diff-header .blame-toggle');
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    // Nothing is asked or drawn until blame is turned on.
    expect(await page.locator('.blame-mark, .blame-legend').count()).toBe(0);
    await toggle.click();
    await page.locator('td.num[data-line="R12"] .blame-mark').waitFor();
    expect(await page.locator('.diff-header .blame-toggle').getAttribute('aria-pressed')).toBe('true');

    const marks = await page.locator('td.num[data-line^="R"] .blame-mark').evaluateAll((els) =>
      els.map((el) => ({
        line: el.parentElement?.getAttribute('data-line'),
        who: el.getAttribute('data-blame'),
        kind: [...el.classList].find((c) => c !== 'blame-mark'),
        colour: (globalThis as unknown as PageGlobals).getComputedStyle(el).backgroundColor,
      })),
    );
    const before = { who: expect.stringMatching(/^before recording · [0-9a-f]{7} /), kind: 'blame-before-recording' };
    const turn1 = { who: 'turn 1 · step 1 Edit', kind: 'blame-turn' };
    const you = { who: 'you, between turns 1 and 2', kind: 'blame-user' };
    const turn2 = { who: 'turn 2 · step 1 Write', kind: 'blame-turn' };
    expect(marks.map(({ line, who, kind }) => ({ line, who, kind }))).toEqual(
      [before, before, turn1, before, before, before, you, before, turn2, turn2, turn2, turn2].map((m, i) => ({ line: `R${i + 1}`, ...m })),
    );
    // A colour per author: the two turns, you, and before recording all differ; lines of one author share one.
    const colour = (line: number) => marks[line - 1]!.colour;
    expect(new Set([colour(1), colour(3), colour(7), colour(9)]).size).toBe(4);
    expect([colour(2), colour(8), colour(12)]).toEqual([colour(1), colour(1), colour(9)]);

    const three = page.locator('td.num[data-line="R3"] .blame-mark');
    expect(await three.getAttribute('title')).toMatch(/^Turn 1 · step 1 \(Edit\)\n“Make greet friendlier”\nStarted .+\nClick to open turn 1\.$/);
    expect(await three.getAttribute('aria-label')).toBe('Line 3: turn 1 · step 1 Edit. Open turn 1');
    expect(await page.locator('td.num[data-line="R7"] .blame-mark').getAttribute('title')).toMatch(/^You, by hand between turns 1 and 2: an edit no turn made/);
    expect(await page.locator('td.num[data-line="R1"] .blame-mark').getAttribute('title')).toMatch(
      /^There before recording began\nCommit [0-9a-f]{7} “initial” by .+/,
    );
    expect(await page.locator('.blame-legend li').allTextContents()).toEqual([
      'Turn 1 “Make greet friendlier”',
      'Turn 2 “Add a shout helper”',
      'You, between turns 1 and 2',
      expect.stringMatching(/^Before recording: [0-9a-f]{7} /),
    ]);

    await three.hover();
    await three.click();
    await page.waitForURL(/[?&]turn=t1\b/);

    // All files, on turn 1's view: the file as turn 1 left it (its diff shows lines 1–6).
    await page.locator('[data-layout="all"]').click();
    const section = page.locator('.rv-file[data-path="src/greet.ts"]');
    await section.locator('.num[data-line="R6"] .blame-mark').waitFor();
    expect(await section.locator('.blame-toggle').getAttribute('aria-pressed')).toBe('true');
    const who = (line: number) => section.locator(`.num[data-line="R${line}"] .blame-mark`).getAttribute('data-blame');
    expect(await who(3)).toBe('turn 1 · step 1 Edit');
    expect(await who(6)).toMatch(/^before recording · /);
    expect(await section.locator('.blame-mark').count()).toBe(6);
    expect(errors).toEqual([]);
  }, 60_000);
});
