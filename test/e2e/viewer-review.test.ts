import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { colourOf, openThemeReview, showReviewTop } from './doc-scenes.js';
import { createSession, openViewer, recordTurn, useViewerFixture, type PageGlobals } from './viewer-harness.js';

// Workspaces and state directories in memory when the system has room: the files, the watchers and the recorded
// turns are the same; what goes is the disk's round trip for each of the store's fsyncs and each file written.
useMemoryTempDir();
const fx = useViewerFixture();

const numbered = (n: number, prefix: string): string => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

describe('viewer review page', () => {
  it('shows every file on one page with sticky headers, collapses viewed files, filters, and keeps the one-file mode', async () => {
    const repo = makeRepo(fx.temp.make(), {
      'src/long.txt': numbered(200, 'line'),
      'src/util/math.ts': 'export const add = 1;\n',
      'old.txt': 'obsolete\n',
      'README.md': '# Demo\n',
    });
    const session = await createSession(fx.server.client, 'review', repo);
    await recordTurn(fx.server.client, session, 't1', 'many changes', () => {
      writeFiles(repo, {
        'src/long.txt': numbered(200, 'line').replace('line 20\n', 'LINE 20\n').replace('line 120\n', 'LINE 120\n'),
        'src/util/math.ts': 'export const add = 2;\n',
        'docs/new.md': numbered(60, 'new'),
      });
      rmSync(join(repo, 'old.txt'));
    });

    const { page, errors } = await openViewer(fx.browser, fx.server.viewerUrl);
    await page.locator('[data-turn="t1"]').click();
    // Files follow in list order (only those on screen are in the page); the first file is selected.
    await expect.poll(() => page.locator('.rv-file').evaluateAll((s) => s.map((e) => e.getAttribute('data-path')))).toEqual(['old.txt', 'docs/new.md']);
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('old.txt');
    await page.locator('#review').evaluate((el) => {
      el.scrollTop = 1500;
    });
    await page.locator('.rv-file[data-path="src/long.txt"] .rl.hunk-row').nth(1).waitFor();
    expect(await page.locator('.rv-file[data-path="src/long.txt"] .rl.del .code').allTextContents()).toEqual(['−line 20', '−line 120']);
    // An added file shows whole, with nothing more to expand.
    expect(await page.locator('.rv-file[data-path="docs/new.md"] .expand').count()).toBe(0);

    // Picking a file scrolls it to the top; its header sticks while its lines scroll under it.
    await page.locator('.row.file[data-path="src/long.txt"] .file-open').click();
    const top = async (selector: string): Promise<number> => (await page.locator(selector).boundingBox())!.y;
    await expect.poll(async () => Math.abs((await top('.rv-file[data-path="src/long.txt"] .rv-header')) - (await top('#review')))).toBeLessThan(2);
    await page.locator('#review').evaluate((el) => {
      el.scrollTop += 300;
    });
    await expect.poll(async () => Math.abs((await top('.rv-file[data-path="src/long.txt"] .rv-header')) - (await top('#review')))).toBeLessThan(2);
    await expect.poll(() => page.locator('.row.file.selected').getAttribute('data-path')).toBe('src/long.txt');

    // Ticking "Viewed" collapses the file to its header; its toggle opens it again.
    const long = page.locator('.rv-file[data-path="src/long.txt"]');
    await long.locator('.rv-viewed').check();
    await expect.poll(() => long.getAttribute('class')).toContain('collapsed');
    // The class and the rows change in separate frames on a busy machine.
    await expect.poll(() => long.locator('.rl').count()).toBe(0);
    await long.locator('.rv-toggle').click();
    await long.locator('.rl.hunk-row').first().waitFor();

    // The filter narrows the list and the page: path substring, change kind, review state.
    await page.locator('#file-filter').fill('util');
    await expect.poll(() => page.locator('.rv-file').count()).toBe(1);
    await expect.poll(() => page.locator('#files .row.file').count()).toBe(1);
    await expect.poll(() => page.locator('#filter-count').textContent()).toBe('1 of 4 files');
    // A one-line file shown whole offers nothing more to expand.
    await page.locator('.rv-file[data-path="src/util/math.ts"] .rl.add').waitFor();
    expect(await page.locator('.rv-file[data-path="src/util/math.ts"] .expand').count()).toBe(0);
    await page.locator('#file-filter').fill('');
    await page.locator('#filter-kind').selectOption('added');
    await expect.poll(() => page.locator('.rv-file').evaluateAll((s) => s.map((e) => e.getAttribute('data-path')))).toEqual(['docs/new.md']);
    await page.locator('#filter-kind').selectOption('');
    await page.locator('#filter-reviewed').selectOption('viewed');
    await expect.poll(() => page.locator('.rv-file').evaluateAll((s) => s.map((e) => e.getAttribute('data-path')))).toEqual(['src/long.txt']);
    await page.locator('#filter-reviewed').selectOption('any');

    // Another changeset starts at its top.
    await page.locator('#review').evaluate((el) => {
      el.scrollTop = 600;
    });
    await page.locator('.chip[data-change-kind="session"]').click();
    await expect.poll(() => page.locator('.chip[data-change-kind="session"]').getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.locator('#review').evaluate((el) => el.scrollTop)).toBe(0);

    // The one-file mode is kept (and remembered).
    await page.locator('[data-layout="file"]').click();
    await page.locator('table.diff').waitFor();
    await page.reload();
    await page.locator('table.diff').waitFor();
    await expect.poll(() => page.locator('[data-layout="file"]').getAttribute('aria-pressed')).toBe('true');
    expect(errors).toEqual([]);
  }, 180_000);

  it('colours code for the theme chosen, light or dark', async () => {
    const { page, errors } = await openThemeReview(fx);
    const keyword = page.locator('.rv-file[data-path="src/server.ts"] .hljs-keyword').first();
    // The linked file is at the top, its header where the page starts, with the diffs above it loaded.
    await expect
      .poll(async () =>
        Math.abs((await page.locator('.rv-file[data-path="src/server.ts"] .rv-header').boundingBox())!.y - (await page.locator('#review').boundingBox())!.y),
      )
      .toBeLessThan(2);
    // The screenshots show the page from its top.
    await showReviewTop(page);
    const colour = () => colourOf(keyword);
    const light = await colour();
    await page.locator('#theme').selectOption('dark');
    await expect.poll(colour).not.toBe(light);
    expect(errors).toEqual([]);
  }, 180_000);

  it('wraps long lines onto rows of their own, whole and unclipped, unified and side by side', async () => {
    const long = 'export const message = ' + Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ') + ';';
    const unbroken = 'x'.repeat(300);
    const tabbed = '\t\t' + 'value\t'.repeat(40);
    const wide = '漢字かな'.repeat(40) + '😀'.repeat(10);
    const lines = ['short', long, unbroken, tabbed, wide, 'end'];
    const repo = makeRepo(fx.temp.make(), { 'wide.ts': 'short\nold\nend\n' });
    const session = await createSession(fx.server.client, 'wrap', repo);
    await recordTurn(fx.server.client, session, 't1', 'long lines', () => writeFiles(repo, { 'wide.ts': lines.join('\n') + '\n' }));
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=wrap&turn=t1`);
    const file = page.locator('.rv-file[data-path="wide.ts"]');
    await file.locator('.rl.add').first().waitFor();

    /** Each new-side line shown, its text joined from its rows; and whether any row is taller than a line or any code cell cut. */
    const shown = (): Promise<{ lines: Record<string, string>; clipped: number; tall: number; numbered: number }> =>
      file.evaluate((section) => {
        const lines: Record<string, string> = {};
        let current = '';
        let clipped = 0;
        let tall = 0;
        let numbered = 0;
        for (const row of section.querySelectorAll('.rl')) {
          if ((row as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height > 20.5) tall++;
          // The new side: the last code cell of a row, not a removed line's.
          const cells = row.querySelectorAll('.code');
          const code = cells[cells.length - 1];
          if (!code || code.classList.contains('del') || code.classList.contains('empty')) continue;
          const box = code as unknown as { scrollWidth: number; clientWidth: number };
          if (box.scrollWidth > box.clientWidth + 1) clipped++;
          const nums = row.querySelectorAll('.num[data-line^="R"]');
          const number = nums[nums.length - 1]?.getAttribute('data-line');
          if (number) {
            numbered++;
            current = number;
            lines[current] = '';
          }
          if (current) lines[current] += (code.textContent ?? '').slice(1);
        }
        return { lines, clipped, tall, numbered };
      });

    const check = async (): Promise<void> => {
      await expect.poll(async () => (await shown()).lines['R6']).toBe('end');
      const { lines: got, clipped, tall, numbered } = await shown();
      // Every line whole, in order, each numbered once; no row taller than a line and no code cut at the edge.
      expect(Object.values(got)).toEqual(lines);
      expect(numbered).toBe(lines.length);
      expect(clipped).toBe(0);
      expect(tall).toBe(0);
    };
    await check();
    // The long lines took more rows than lines: one per part.
    expect(await file.locator('.rl.add.wrapped').count()).toBeGreaterThan(8);

    await page.locator('.view-switch button', { hasText: 'Side by side' }).click();
    await file.locator('.rl.pair').first().waitFor();
    await check();

    // A line after wrapped ones is still linked to its own row.
    await file.locator('.num[data-line="R6"]').click();
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).location.search)).toContain('line=R6');
    await expect.poll(() => file.locator('.rl.linked .num[data-line="R6"]').count()).toBe(1);
    expect(errors).toEqual([]);
  }, 120_000);

  it('keeps a click on a line number when the page redraws while the mouse button is down', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': numbered(10, 'line') });
    const session = await createSession(fx.server.client, 'press', repo);
    await recordTurn(fx.server.client, session, 't1', 'one line', () => writeFiles(repo, { 'a.txt': numbered(10, 'line').replace('line 5\n', 'LINE 5\n') }));
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=press&turn=t1`);
    const number = page.locator('.rv-file[data-path="a.txt"] .num[data-line="R5"]');
    // Where the number is (read again when the row was redrawn between finding it and measuring it).
    let box = await number.boundingBox();
    await expect.poll(async () => (box = await number.boundingBox())).not.toBeNull();

    // The button goes down on the line number; before it comes up, the page is told to redraw its rows (as a resize or
    // the reader's wheel tells it) and a frame passes. Redrawn then, the row pressed would be replaced and the click lost.
    const { x, y, width, height } = box!;
    await page.mouse.move(x + width / 2, y + height / 2);
    await page.mouse.down();
    await page.evaluate(async () => {
      const g = globalThis as unknown as {
        document: { getElementById(id: string): { dispatchEvent(event: unknown): boolean } | null };
        Event: new (type: string) => unknown;
        requestAnimationFrame(callback: () => void): number;
      };
      g.document.getElementById('review')!.dispatchEvent(new g.Event('scroll'));
      await new Promise<void>((r) => g.requestAnimationFrame(() => g.requestAnimationFrame(() => r())));
    });
    await page.mouse.up();
    await expect.poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).location.search)).toContain('line=R5');
    await expect.poll(() => page.locator('.rv-file[data-path="a.txt"] .rl.linked .num[data-line="R5"]').count()).toBe(1);
    expect(errors).toEqual([]);
  }, 120_000);

  it('lands a linked file at the top when its first frame is drawn before the diffs arrive, and keeps it there as they do', async () => {
    const before: Record<string, string> = {};
    const after: Record<string, string> = {};
    // Above the linked file, files whose diffs take more rows than estimated (two changes far apart, with the gaps between).
    for (let i = 0; i < 3; i++) {
      before[`src/a${i}.ts`] = numbered(40, `export const a${i} =`);
      after[`src/a${i}.ts`] = before[`src/a${i}.ts`]!.replace(`a${i} = 5\n`, `a${i} = five\n`).replace(`a${i} = 35\n`, `a${i} = thirty-five\n`);
    }
    before['src/z.ts'] = numbered(12, 'export const z =');
    after['src/z.ts'] = before['src/z.ts'].replace('z = 6\n', 'z = six\n');
    const repo = makeRepo(fx.temp.make(), before);
    const session = await createSession(fx.server.client, 'late', repo);
    await recordTurn(fx.server.client, session, 't1', 'late diffs', () => writeFiles(repo, after));
    // The linked file's diff reaches the page 300 ms late and the others 1.5 s late: the first frame (which waits at
    // most 100 ms for its diffs) is drawn with estimated heights, and the files above change height long after.
    const late = `(() => {
      window.lateDiffs = { asked: 0, answered: 0, linked: false, nudged: false };
      const diffIds = new Map();
      const send = WebSocket.prototype.send;
      WebSocket.prototype.send = function (data) {
        if (typeof data === 'string' && data.includes('"changesetFileDiff"')) {
          const { id, params } = JSON.parse(data);
          diffIds.set(id, params.fileId);
          window.lateDiffs.asked++;
        }
        return send.call(this, data);
      };
      const listen = WebSocket.prototype.addEventListener;
      WebSocket.prototype.addEventListener = function (type, listener, options) {
        if (type !== 'message') return listen.call(this, type, listener, options);
        return listen.call(this, type, (event) => {
          let id;
          try {
            id = JSON.parse(event.data).id;
          } catch {}
          // Until the first diff is asked for, the page reports a scroll just before each message (as a resize or the
          // reader's wheel does on a busy machine): the review page draws what it had before it draws what came.
          const review = document.getElementById('review');
          if (window.lateDiffs.asked === 0 && review) {
            window.lateDiffs.nudged = true;
            review.dispatchEvent(new Event('scroll'));
          }
          if (!diffIds.has(id)) return listener.call(this, event);
          const linked = diffIds.get(id).endsWith('/src/z.ts');
          setTimeout(() => {
            listener.call(this, event);
            window.lateDiffs.answered++;
            if (linked) window.lateDiffs.linked = true;
          }, linked ? 300 : 1500);
        }, options);
      };
    })();`;
    type Late = { asked: number; answered: number; linked: boolean; nudged: boolean };
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=late&turn=t1&file=src/z.ts`, undefined, { initScript: late });
    const lateDiffs = (): Promise<Late> => page.evaluate(() => (globalThis as unknown as { lateDiffs: Late }).lateDiffs);
    const frames = (): Promise<void> =>
      page.evaluate(
        () =>
          new Promise<void>((r) =>
            (globalThis as unknown as PageGlobals).requestAnimationFrame(() => (globalThis as unknown as PageGlobals).requestAnimationFrame(() => r())),
          ),
      );
    /** How far the linked file's header is from the top of the page (null when it is not drawn), measured in one go (the page redraws its sections). */
    const offset = (): Promise<number | null> =>
      page.evaluate(() => {
        type Box = { getBoundingClientRect(): { top: number } };
        const { document } = globalThis as unknown as { document: { querySelector(s: string): Box | null } };
        const header = document.querySelector('.rv-file[data-path="src/z.ts"] .rv-header');
        return header ? Math.abs(header.getBoundingClientRect().top - document.querySelector('#review')!.getBoundingClientRect().top) : null;
      });

    // The linked file's diff has arrived, those above it not yet: its header is where the page starts.
    await expect.poll(async () => (await lateDiffs()).linked).toBe(true);
    await frames();
    expect(await lateDiffs()).toMatchObject({ nudged: true });
    expect(await offset()).toBeLessThan(2);
    await page.locator('.rv-file[data-path="src/z.ts"] .rl.add').first().waitFor();
    // Every diff asked for has arrived (any asked for above the linked file changed its height): the linked file stayed where the link put it.
    await expect
      .poll(async () => {
        const { asked, answered } = await lateDiffs();
        return asked === answered;
      })
      .toBe(true);
    await frames();
    expect(await offset()).toBeLessThan(2);
    expect(errors).toEqual([]);
  }, 120_000);

  it('asks for the first screen of diffs the moment the changeset arrives, before drawing a file, and for a linked file first', async () => {
    const repo = makeRepo(fx.temp.make(), { 'README.md': '# r\n' });
    const session = await createSession(fx.server.client, 'first', repo);
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/f${String(i).padStart(2, '0')}.ts`] = numbered(30, `export const v${i} =`);
    await recordTurn(fx.server.client, session, 't1', 'forty files', () => writeFiles(repo, files));
    // Each diff request the page sends, with whether the review page had drawn a file then (the file list beside it may
    // be drawn first on a loaded machine: what matters is the diffs' round trip overlapping the review page's first frame).
    const watch = `(() => {
      window.diffSends = [];
      const send = WebSocket.prototype.send;
      WebSocket.prototype.send = function (data) {
        if (typeof data === 'string' && data.includes('"changesetFileDiff"')) window.diffSends.push({ fileId: JSON.parse(data).params.fileId, drawn: document.querySelector('.rv-file') !== null });
        return send.call(this, data);
      };
    })();`;
    type Sends = { fileId: string; drawn: boolean }[];
    const sends = (page: import('playwright-core').Page): Promise<Sends> => page.evaluate(() => (globalThis as unknown as { diffSends: Sends }).diffSends);

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=first&turn=t1`, undefined, { initScript: watch });
    await page.locator('.rv-file[data-path="src/f00.ts"] .rl.add').first().waitFor();
    const first = await sends(page);
    expect(first[0]).toEqual({ fileId: expect.stringMatching(/src\/f00\.ts$/), drawn: false });

    // A link to a file further down, opened in the same tab, asks for that file's diff first.
    await page.goto(`${fx.server.viewerUrl}&session=first&turn=t1&file=src/f30.ts`);
    await page.locator('.rv-file[data-path="src/f30.ts"] .rl.add').first().waitFor();
    expect((await sends(page))[0]).toEqual({ fileId: expect.stringMatching(/src\/f30\.ts$/), drawn: false });
    expect(errors).toEqual([]);
  }, 120_000);
});
