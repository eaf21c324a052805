import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, followLink, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// Workspaces and state directories in memory when the system has room: the files, the watchers and the recorded
// turns are the same; what goes is the disk's round trip for each of the store's fsyncs and each file written.
useMemoryTempDir();
// One server for the file: each test records a session of its own and opens the viewer on it by name.
const fx = useViewerFixture('file');

const SHOTS = process.env['HABITS_SHOTS'];

/** Runs a function written for the page (the test project has no DOM types) with one JSON argument. */
function inPage<T>(page: Page, fn: string, arg: unknown = null): Promise<T> {
  return page.evaluate(`(${fn})(${JSON.stringify(arg)})`) as Promise<T>;
}

/** The ranges of a search highlight: their text and the kind of line they are on. */
const MARKS = `(name) => {
  const hl = CSS.highlights.get(name);
  if (!hl) return [];
  return [...hl].map((r) => {
    const cell = r.startContainer.parentElement.closest('.code');
    return { text: r.toString(), kind: ['add', 'del', 'context'].find((k) => cell.classList.contains(k)), table: !!cell.closest('table'), wrapped: !cell.previousElementSibling.hasAttribute('data-line') };
  });
}`;

interface Mark {
  text: string;
  kind: string;
  table: boolean;
  /** On a later row of a line wrapped over several (its number is on the first). */
  wrapped: boolean;
}

const marks = (page: Page, name = 'search-match'): Promise<Mark[]> => inPage<Mark[]>(page, MARKS, name);
const kindsOf = async (page: Page): Promise<string[]> => [...new Set((await marks(page)).map((m) => m.kind))].sort();

describe('the habits of a review tool', () => {
  it('searches the diffs: counts matches in added, removed and context lines, walks them, marks them in both layouts and themes', async () => {
    const before = ['const alpha = 1;', '// needle in context', 'const beta = 2;', "const old = 'Needle removed';", 'const gamma = 3;'];
    const after = [
      'const alpha = 1;',
      '// needle in context',
      'const beta = 2;',
      "const fresh = 'needle added';",
      'const gamma = 3;',
      "const delta = 'NEEDLE twice needle';",
    ];
    const repo = makeRepo(fx.temp.make(), { 'src/a.ts': `${before.join('\n')}\n`, 'c.txt': 'plain\n' });
    const session = await createSession(fx.server.client, 'find', repo);
    await recordTurn(fx.server.client, session, 't1', 'needles', () =>
      writeFiles(repo, {
        'src/a.ts': `${after.join('\n')}\n`,
        'src/b.ts': "export const b = 'needle';\n",
        'c.txt': `plain text\n${'wide '.repeat(60)}zebra\n`,
      }),
    );
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=find&turn=t1`);
    await page.locator('.rv-file[data-path="src/a.ts"] .rl.add').first().waitFor();

    // `f` goes to the search; the text is found whatever its case, in every kind of line, in both files.
    await page.locator('#review').focus();
    await page.keyboard.press('f');
    await expect.poll(() => page.evaluate('document.activeElement.id')).toBe('diff-search');
    await page.keyboard.type('needle');
    const count = page.locator('#search-count');
    await expect.poll(() => count.textContent()).toBe('6 matches in 2 files');
    await expect.poll(() => kindsOf(page)).toEqual(['add', 'context', 'del']);
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/search-light.png` });

    // Which lines are searched, and case.
    await page.locator('.search-kind input[data-kind="context"]').uncheck();
    await expect.poll(() => count.textContent()).toBe('5 matches in 2 files');
    await expect.poll(() => kindsOf(page)).toEqual(['add', 'del']);
    await page.locator('.search-kind input[data-kind="context"]').check();
    await page.locator('#search-case').check();
    await expect.poll(() => count.textContent()).toBe('4 matches in 2 files');
    await page.locator('#search-case').uncheck();
    await expect.poll(() => count.textContent()).toBe('6 matches in 2 files');

    // Enter / Shift+Enter walk the matches, round the end; the current one is marked apart.
    await page.locator('#diff-search').focus();
    const seen: string[] = [];
    for (let i = 1; i <= 6; i++) {
      await page.keyboard.press('Enter');
      await expect.poll(() => count.textContent()).toBe(`${i} of 6 matches in 2 files`);
      await expect.poll(async () => (await marks(page, 'search-current')).length).toBeGreaterThan(0);
      const [current] = await marks(page, 'search-current');
      expect(current!.text.toLowerCase()).toBe('needle');
      seen.push(current!.kind);
    }
    expect([...new Set(seen)].sort()).toEqual(['add', 'context', 'del']);
    await page.keyboard.press('Enter');
    await expect.poll(() => count.textContent()).toBe('1 of 6 matches in 2 files');
    await page.keyboard.press('Shift+Enter');
    await expect.poll(() => count.textContent()).toBe('6 of 6 matches in 2 files');
    // The buttons, and `.` / `,` away from the field, do the same.
    await page.locator('#search-prev').click();
    await expect.poll(() => count.textContent()).toBe('5 of 6 matches in 2 files');
    await page.locator('#review').focus();
    await page.keyboard.press('.');
    await expect.poll(() => count.textContent()).toBe('6 of 6 matches in 2 files');
    await page.keyboard.press(',');
    await expect.poll(() => count.textContent()).toBe('5 of 6 matches in 2 files');

    // Side by side: still marked, the context line on both sides.
    await page.locator('.view-switch button', { hasText: 'Side by side' }).click();
    await page.locator('.rv-file[data-path="src/a.ts"] .rl.pair').first().waitFor();
    await expect.poll(() => kindsOf(page)).toEqual(['add', 'context', 'del']);

    // One file at a time, dark: the selected file's table is marked, and the walk moves between files.
    await page.locator('#theme').selectOption('dark');
    await page.locator('[data-layout="file"]').click();
    await page.locator('table.diff').waitFor();
    await expect.poll(async () => (await marks(page)).some((m) => m.table)).toBe(true);
    const dark = await inPage<string>(
      page,
      `() => getComputedStyle(document.querySelector('table.diff td.code'), '::highlight(search-match)').backgroundColor`,
    );
    expect(dark).toBe('rgb(158, 106, 3)');
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('.');
      await expect.poll(async () => (await marks(page, 'search-current')).filter((m) => m.table).length).toBeGreaterThan(0);
    }
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/search-dark-file.png` });
    // A match on the part of a long line that wraps onto a later row of the review page is marked there.
    await page.locator('[data-layout="all"]').click();
    await page.locator('#diff-search').fill('zebra');
    await expect.poll(() => count.textContent()).toBe('1 match in 1 file');
    await page.locator('#diff-search').press('Enter');
    await expect.poll(async () => (await marks(page, 'search-current')).map((m) => [m.text, m.kind, m.wrapped])).toEqual([['zebra', 'add', true]]);
    // Escape in the field clears the search and its marks.
    await page.locator('#diff-search').focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => count.textContent()).toBe('');
    expect(await marks(page)).toEqual([]);
    expect(errors).toEqual([]);
  }, 180_000);

  it('folds twelve actions of the user in a row into one row that opens to list them, and the turns stay in view', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'tl', repo);
    await recordTurn(fx.server.client, session, 't1', 'Edit a', () => writeFiles(repo, { 'a.txt': 'a by turn 1\n' }));
    // Twelve of the user's own actions: the turn reverted and the revert undone, six times over.
    for (let i = 0; i < 6; i++) {
      await fx.server.client.request('invokeChangesetOperation', { channel: 'ahp-changeset:/tl/turn/t1', operationId: 'revert' }, { timeoutMs: 60_000 });
      await fx.server.client.request('invokeChangesetOperation', { channel: 'ahp-changeset:/tl/session', operationId: 'undo' }, { timeoutMs: 60_000 });
    }
    await recordTurn(fx.server.client, session, 't2', 'Edit b', () => writeFiles(repo, { 'b.txt': 'b by turn 2\n' }));

    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=tl`);
    const group = page.locator('#turns li.user-action-group');
    await group.waitFor();
    expect(await group.locator('.turn-message').textContent()).toMatch(/You: 12 actions$/);
    expect(await group.locator('.meta').textContent()).toMatch(/^you \S.*–\S/);
    expect(await page.locator('#turns li.user-action').count()).toBe(0);
    // Newest first: turn 2, what the user did, turn 1, all on screen.
    expect(await page.locator('#turns > li').evaluateAll((items) => items.map((li) => li.getAttribute('class')))).toEqual([
      'turn',
      'user-action-group',
      'turn',
    ]);
    const height = page.viewportSize()!.height;
    for (const turn of ['t1', 't2']) {
      const box = (await page.locator(`[data-turn="${turn}"]`).boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(height);
    }
    // Opened, it lists the twelve; closed again, one row.
    await group.locator('.user-action-toggle').click();
    await expect.poll(() => page.locator('#turns li.user-action').count()).toBe(12);
    expect(await group.locator('.user-action-toggle').getAttribute('aria-expanded')).toBe('true');
    expect(await page.locator('#turns li.user-action').first().getAttribute('data-user-action')).toMatch(/^Undid/);
    await group.locator('.user-action-toggle').click();
    await expect.poll(() => page.locator('#turns li.user-action').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 180_000);

  it('marks a linked added, removed or context line with a bar, an outline and a tint, and scrolls it into view, in both layouts and themes', async () => {
    const before = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
    const after = [...before];
    after.splice(8, 1); // line 9 removed
    after.splice(6, 0, 'new six', 'new seven'); // added as lines 6 and 7
    after.splice(2, 1); // line 3 removed
    const big = Array.from({ length: 150 }, (_, i) => `big ${i}`).join('\n');
    const repo = makeRepo(fx.temp.make(), { 'src/a.txt': `${before.join('\n')}\n` });
    const session = await createSession(fx.server.client, 'links', repo);
    await recordTurn(fx.server.client, session, 't1', 'Lines', () => writeFiles(repo, { 'src/a.txt': `${after.join('\n')}\n`, 'big.txt': `${big}\n` }));
    const link = '?session=links&turn=t1&file=src/a.txt';
    // The first link is loaded; the page then follows the others in the document it has, as back / forward does.
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&${link.slice(1)}&line=R5`);

    /** The linked line's cells against an unmarked line's of the same kind, and whether the linked row is on screen. */
    const compare = (link: string, other: string) =>
      inPage<{ kind: string; differs: string[]; inView: boolean }>(
        page,
        `([link, other]) => {
          const rowOf = (l) => document.querySelector('.num[data-line="' + l + '"]').closest('.rl, tr');
          const row = rowOf(link);
          const plain = rowOf(other);
          if (!row.classList.contains('linked') || plain.classList.contains('linked')) return { kind: 'not linked', differs: [], inView: false };
          const side = link[0] === 'L' ? 0 : 1;
          const codes = (r) => [...r.children].filter((c) => c.classList.contains('code'));
          const code = (r) => (r.classList.contains('pair') || r.parentElement.closest('table.split') ? codes(r)[side] : codes(r)[0]);
          const differs = [];
          for (const [name, a, b] of [
            ['row', row, plain],
            ['code', code(row), code(plain)],
            ['number', row.firstElementChild, plain.firstElementChild],
          ]) {
            const sa = getComputedStyle(a);
            const sb = getComputedStyle(b);
            for (const p of ['backgroundImage', 'boxShadow', 'outlineStyle']) if (sa[p] !== sb[p]) differs.push(name + ' ' + p);
          }
          const kind = ['add', 'del', 'context'].find((k) => code(row).classList.contains(k));
          const pane = (document.getElementById('review') ?? document.getElementById('diff')).getBoundingClientRect();
          const box = row.getBoundingClientRect();
          return { kind, differs, inView: box.top >= pane.top && box.bottom <= pane.bottom };
        }`,
        [link, other],
      );
    const check = async (link: string, other: string, kind: string): Promise<void> => {
      await expect.poll(async () => (await compare(link, other)).kind).toBe(kind);
      const shown = await compare(link, other);
      expect(shown.inView).toBe(true);
      expect(shown.differs).toEqual(expect.arrayContaining(['code backgroundImage', 'number boxShadow']));
    };
    /** Whether the diffs are side by side now (`s` picks it, `u` goes back to unified). */
    let sideBySide = false;
    /**
     * Opens the link to a line from the top of the diffs (the page drawn there first, so the link has to scroll to its
     * line), then shows the diffs side by side or unified as asked.
     */
    const open = async (line: string, split: boolean, pair: string): Promise<void> => {
      await inPage(
        page,
        `async () => {
          (document.getElementById('review') ?? document.getElementById('diff')).scrollTop = 0;
          await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        }`,
      );
      await followLink(page, `${link}&line=${line}`);
      if (split !== sideBySide) {
        await page.locator(`:is(.rl, tr) .num[data-line="${line}"]`).first().waitFor();
        await page.keyboard.press(split ? 's' : 'u');
        sideBySide = split;
      }
      if (pair) await page.locator(pair).first().waitFor();
    };
    // A context line, then an added and a removed one, in the review page's unified layout (the file is below a long one).
    await check('R5', 'R4', 'context');
    await open('R6', false, '');
    await check('R6', 'R7', 'add');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/link-add.png` });
    await open('L3', false, '');
    await check('L3', 'L9', 'del');
    // Side by side, dark.
    await page.locator('#theme').selectOption('dark');
    await open('R6', true, '.rl.pair');
    await check('R6', 'R7', 'add');
    await open('L3', true, '.rl.pair');
    await check('L3', 'L9', 'del');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/link-del-dark-split.png` });
    // One file at a time, side by side and unified.
    await page.locator('[data-layout="file"]').click();
    await open('L3', true, 'table.diff.split');
    await check('L3', 'L9', 'del');
    await open('R6', false, 'table.diff.unified');
    await check('R6', 'R7', 'add');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/link-add-dark-file.png` });
    expect(errors).toEqual([]);
  }, 180_000);

  it("gives a file's path the room in its header: the name stays whole, labels do not overlap, at 1280 and 800 pixels, in both layouts", async () => {
    const path = 'src/utils/engine-config.ts';
    const repo = makeRepo(fx.temp.make(), { [path]: 'export const a = 1;\n', 'b.txt': 'b\n' });
    const session = await createSession(fx.server.client, 'hdr', repo);
    await recordTurn(fx.server.client, session, 't1', 'Edit', () => writeFiles(repo, { [path]: 'export const a = 2;\n', 'b.txt': 'B\n' }));
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=hdr&view=session&file=${path}`, { width: 1280, height: 800 });
    // Viewed here and not in Uncommitted Changes: the header says so and offers to untick.
    const file = page.locator(`.rv-file[data-path="${path}"]`);
    await file.locator('.rv-viewed').check();
    await file.locator('.viewed-elsewhere').waitFor();
    expect(await file.locator('.viewed-elsewhere .badge').getAttribute('title')).toMatch(/^Not viewed in Uncommitted Changes\. /);

    /** Boxes of a header's parts: those that overlap, those past its edge, and whether the file name shows whole. */
    const MEASURE = `(selector) => {
      const header = document.querySelector(selector);
      const outer = header.getBoundingClientRect();
      const parts = [...header.children].filter((el) => el.getBoundingClientRect().width > 0);
      const name = (el) => el.className || el.tagName;
      const overlaps = [];
      const outside = [];
      parts.forEach((a, i) => {
        const ra = a.getBoundingClientRect();
        if (ra.right > outer.right + 0.5 || ra.left < outer.left - 0.5) outside.push(name(a));
        parts.slice(i + 1).forEach((b) => {
          const rb = b.getBoundingClientRect();
          if (ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5 && ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5) overlaps.push(name(a) + ' / ' + name(b));
        });
        // No part's own content runs past its box (a label written over its neighbour).
        if (a.scrollWidth > a.clientWidth + 1 && getComputedStyle(a).overflow === 'visible') overlaps.push(name(a) + ' spills');
      });
      const label = header.querySelector('.path-name, .path');
      const holder = label.closest('.rv-path, h3').getBoundingClientRect();
      const box = label.getBoundingClientRect();
      const whole = box.left >= holder.left - 0.5 && box.right <= holder.right + 0.5 && box.right <= outer.right + 0.5 && label.scrollWidth <= label.clientWidth + 1;
      return { overlaps, outside, whole, text: label.textContent };
    }`;
    const measure = (selector: string) => inPage<{ overlaps: string[]; outside: string[]; whole: boolean; text: string }>(page, MEASURE, selector);
    const fits = async (selector: string, text: string): Promise<void> => {
      await expect.poll(async () => (await measure(selector)).whole).toBe(true);
      expect(await measure(selector)).toEqual({ overlaps: [], outside: [], whole: true, text });
    };
    const header = `.rv-file[data-path="${path}"] .rv-header`;
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/header-1280.png` });
    if (SHOTS) console.log(JSON.stringify(await measure(header)));
    await fits(header, 'engine-config.ts');
    // At 800 pixels, with the sessions put away to make room for the diff.
    await page.setViewportSize({ width: 800, height: 800 });
    await page.locator('.pane-toggles button', { hasText: 'Sessions' }).click();
    if (SHOTS) console.log(JSON.stringify(await measure(header)));
    await fits(header, 'engine-config.ts');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/header-800.png` });
    // The whole path is the tooltip.
    expect(await file.locator('.rv-path').getAttribute('title')).toBe(path);

    await page.locator('[data-layout="file"]').click();
    await page.locator(`.row.file[data-path="${path}"] .file-open`).click();
    await page.locator('.diff-header .viewed-elsewhere').waitFor();
    await fits('.diff-header', path);
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/header-file-800.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
    await fits('.diff-header', path);
    expect(errors).toEqual([]);
  }, 180_000);

  it('searches what is loaded of a changeset of 520 files, says so, and loads the rest when asked; the walk reaches the last file', async () => {
    const names = Array.from({ length: 520 }, (_, i) => `f/file${String(i).padStart(3, '0')}.txt`);
    const repo = makeRepo(fx.temp.make(), Object.fromEntries(names.map((n) => [n, 'plain\n'])));
    const session = await createSession(fx.server.client, 'many', repo);
    await recordTurn(fx.server.client, session, 't1', 'Everywhere', () =>
      writeFiles(repo, Object.fromEntries(names.map((n, i) => [n, `plain\nneedle ${i}\n`]))),
    );
    const { page, errors } = await openViewer(fx.browser, `${fx.server.viewerUrl}&session=many&turn=t1`);
    await page.locator('.rv-file .rl.add').first().waitFor();
    await page.locator('#diff-search').fill('needle');
    const count = page.locator('#search-count');
    // Only the diffs the page fetched are searched; the rest wait for the reader's word.
    await expect.poll(() => count.textContent()).toMatch(/^\d+ matches? in \d+ files? · \d+ of 520 files searched$/);
    const more = page.locator('#search-all');
    expect(await more.textContent()).toMatch(/^Search the other \d+ files$/);
    await more.click();
    // 520 requests, four at a time: on a loaded machine (load 45) more than a minute.
    await expect.poll(() => count.textContent(), { timeout: 120_000 }).toBe('520 matches in 520 files');
    expect(await more.isHidden()).toBe(true);
    // Back from the first match round to the last file's.
    await page.locator('#diff-search').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => count.textContent()).toBe('1 of 520 matches in 520 files');
    await page.keyboard.press('Shift+Enter');
    await expect.poll(() => count.textContent()).toBe('520 of 520 matches in 520 files');
    const last = page.locator('.rv-file[data-path="f/file519.txt"]');
    await last.locator('.rl.add').first().waitFor();
    await expect.poll(async () => (await marks(page, 'search-current')).map((m) => m.text)).toEqual(['needle']);
    expect(await page.locator('.row.file.selected').getAttribute('data-path')).toBe('f/file519.txt');
    expect(errors).toEqual([]);
  }, 180_000);
});
