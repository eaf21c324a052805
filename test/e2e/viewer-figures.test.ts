/**
 * What the viewer shows is what happened: a past session's start and end
 * times, an automatic turn's time and edit span, an imported session's
 * title and counts, a hunk a revert took back, and the note on a file whose
 * git filter the server does not run. Each figure is compared with the
 * recorded one, read over the wire, and with what the test did.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { chatUri, ROOT_CHANNEL, type ChatState, type ListSessionsResult, type SessionState, type SessionSummary } from '../../protocol/index.js';
import type { TimelineMeta } from '../../protocol/extensions/timeline.js';
import { startAutoTurns } from '../../server/auto-turns/index.js';
import { importMirror } from '../../server/mirror/import.js';
import { nextEvent } from '../helpers/next-event.js';
import { cloneAtStart, numstat, recordMirroredSession } from '../helpers/mirrored-session.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { git, makeRepo, writeFiles } from '../helpers/workspace.js';
import { createSession, openViewer, recordTurn, useViewerFixture } from './viewer-harness.js';

// Workspaces and state directories in memory when the system has room: the files, the watchers and the recorded
// turns are the same; what goes is the disk's round trip for each of the store's fsyncs and each file written.
useMemoryTempDir();
// The pages run in UTC with British English, so the test knows how times read.
const fx = useViewerFixture('test', { clock: { locale: 'en-GB', timezoneId: 'UTC' } });

/** Times as the page shows them: "14:03:27". */
const TIME = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', hour: '2-digit', minute: '2-digit', second: '2-digit' });
const shown = (iso: string) => TIME.format(new Date(iso));

/** Opens the viewer, collecting page errors. */
const openPage = (url: string, layout?: 'all' | 'file') => openViewer(fx.browser, url, undefined, layout ? { layout } : {});

async function summaryOf(uri: string): Promise<SessionSummary> {
  const list = await fx.server.client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
  return list.items.find((s) => s.resource === uri)!;
}

const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i + 1}`}\n`).join('');

describe('the figures the viewer shows', () => {
  it('a past session reads when it started and when it ended; a session recording reads only when it started', async () => {
    const client = fx.server.client;
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n' });
    const past = await createSession(client, 'past', repo);
    await recordTurn(client, past, 't1', 'Work', () => writeFiles(repo, { 'a.txt': 'b\n' }));
    // Ended a second after it started by the clock, which the test moves on, so the two times read differently.
    const startedAt = (await summaryOf(past)).createdAt;
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    vi.setSystemTime(Math.max(Date.now(), Date.parse(startedAt) + 1000));
    await fx.server.service.sessions.dispose(past);
    const liveRepo = makeRepo(fx.temp.make(), { 'b.txt': 'b\n' });
    const live = await createSession(client, 'live', liveRepo);
    const ended = await summaryOf(past);
    const endedAt = (ended._meta as { endedAt: string }).endedAt;

    const { page, errors } = await openPage(fx.server.viewerUrl);
    const item = page.locator(`[data-session="${past}"] .meta`);
    await item.waitFor();
    expect(await item.locator('time.started').textContent()).toBe(shown(ended.createdAt));
    expect(await item.locator('time.ended').textContent()).toBe(shown(endedAt));
    expect(shown(endedAt)).not.toBe(shown(ended.createdAt));
    expect(await item.textContent()).toBe(`${shown(ended.createdAt)} · ended ${shown(endedAt)} · 1 turn · 1 file +1 −1`);
    const recording = page.locator(`[data-session="${live}"] .meta`);
    expect(await recording.locator('time.started').textContent()).toBe(shown((await summaryOf(live)).createdAt));
    expect(await recording.locator('time.ended').count()).toBe(0);

    // The past session's turn reads its start and its duration, as recorded.
    await client.subscribe(chatUri('past'));
    const turn = client.state<ChatState>(chatUri('past'))!.turns[0]!;
    await item.click();
    const turnMeta = page.locator('[data-turn="t1"] .meta');
    await turnMeta.waitFor();
    expect(await turnMeta.locator('time.turn-time').textContent()).toBe(shown(turn.startedAt!));
    expect(await turnMeta.locator('.turn-duration').getAttribute('data-ms')).toBe(String(turn.duration));

    // A session that records a turn and ends while the page is open reads so without a reload.
    expect(await recording.textContent()).toContain('0 turns');
    await recordTurn(client, live, 'l1', 'Live work', () => writeFiles(liveRepo, { 'b.txt': 'B\n' }));
    await expect.poll(() => recording.textContent()).toContain('1 turn ·');
    await fx.server.service.sessions.dispose(live);
    const liveEnded = (await summaryOf(live))._meta as { endedAt: string };
    await expect.poll(() => page.locator(`[data-session="${live}"] .meta time.ended`).textContent()).toBe(shown(liveEnded.endedAt));
    expect(errors).toEqual([]);
  }, 120_000);

  it('an automatic turn reads when its first change was seen, and for edits apart, how long from the first to the last; one save has no duration', async () => {
    const repo = makeRepo(fx.temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const session = await fx.server.service.sessions.create({ workingDirectories: [repo], id: 'auto' });
    // The quiet period that ends a turn is real time; the edits' times are read from the clock, which the test moves on.
    const auto = startAutoTurns(fx.server.service.sessions, session, { quietMs: 1000, ignoreDirs: [fx.server.service.stateDir] });
    let one: string;
    let two: string;
    let first: number;
    let second: number;
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    try {
      let ended = nextEvent(auto.onTurnEnded);
      writeFileSync(join(repo, 'a.txt'), 'a\nmore\n');
      one = (await ended).turnId;
      ended = nextEvent(auto.onTurnEnded);
      first = Date.now();
      writeFileSync(join(repo, 'a.txt'), 'a\n');
      // Seen (the turn starts from it): the second edit comes a second and a half later by the clock.
      while (!(await nextEvent(auto.onChecked)));
      vi.setSystemTime(Date.now() + 1500);
      second = Date.now();
      writeFileSync(join(repo, 'b.txt'), 'B\n');
      two = (await ended).turnId;
    } finally {
      vi.useRealTimers();
      auto.stop();
      await auto.idle();
    }
    const client = fx.server.client;
    await client.subscribe(session.uri);
    await client.subscribe(session.chatUri);
    const stats = (client.state<SessionState>(session.uri)!._meta as unknown as TimelineMeta).turns;
    const chat = client.state<ChatState>(session.chatUri)!;
    const spanOne = stats[one]!.editSpan!;
    const spanTwo = stats[two]!.editSpan!;
    const ms = Date.parse(spanTwo.to) - Date.parse(spanTwo.from);
    expect(chat.turns.find((t) => t.id === one)!.duration).toBe(0);
    expect(chat.turns.find((t) => t.id === two)!.duration).toBe(ms);
    expect(Date.parse(spanTwo.from)).toBeGreaterThanOrEqual(first);
    expect(Date.parse(spanTwo.from)).toBeLessThan(second);
    expect(Date.parse(spanTwo.to)).toBeGreaterThanOrEqual(second);

    const { page, errors } = await openPage(`${fx.server.viewerUrl}&session=auto`);
    const turnMeta = (id: string) => page.locator(`[data-turn="${id}"] .meta`);
    await turnMeta(two).waitFor();
    expect(await turnMeta(one).locator('time.turn-time').textContent()).toBe(shown(spanOne.from));
    expect(await turnMeta(one).locator('.turn-duration').count()).toBe(0);
    expect(await turnMeta(two).locator('time.turn-time').textContent()).toBe(shown(spanTwo.from));
    expect(await turnMeta(two).locator('.turn-duration').textContent()).toBe(` · edits over ${(ms / 1000).toFixed(1)} s`);
    expect(await turnMeta(one).textContent()).not.toContain('ms');
    expect(errors).toEqual([]);
  }, 120_000);

  it("an imported session is listed with the original's title and its own counts, as git diff --numstat gives them", async () => {
    const mirrored = await recordMirroredSession(fx.temp, { 'a.txt': 'a\nb\nc\n', 'gone.txt': 'x\ny\n' }, [
      { id: 't1', message: 'first prompt', edit: (repo) => writeFiles(repo, { 'a.txt': 'a\nB\nc\nd\ne\n', 'new.txt': '1\n2\n3\n4\n' }) },
      { id: 't2', message: 'second prompt', edit: (repo) => rmSync(join(repo, 'gone.txt')) },
    ]);
    const checkout = cloneAtStart(fx.temp, mirrored);
    try {
      await importMirror({ url: mirrored.url, stateDir: fx.server.service.stateDir, workspaceDir: checkout, env: mirrored.env });
    } finally {
      await mirrored.stop();
    }
    // A new session over the same checkout is listed beside the imported one.
    await createSession(fx.server.client, 'fresh', checkout);
    await fx.server.service.openHistory([checkout]);
    const expected = numstat(mirrored.repo, mirrored.start, 'HEAD');
    const uri = mirrored.original.resource;

    const { page, errors } = await openPage(fx.server.viewerUrl);
    const item = page.locator(`[data-session="${uri}"]`);
    await item.waitFor();
    expect(await item.locator('.session-title').textContent()).toBe(mirrored.original.title);
    await expect.poll(() => item.locator('.counts').textContent()).toBe(` · ${expected.files} files +${expected.additions} −${expected.deletions}`);
    expect(await page.locator(`[data-session="ahp-session:/fresh"] .session-title`).textContent()).not.toBe(mirrored.original.title);
    expect(errors).toEqual([]);
  }, 180_000);

  it('a hunk a revert took back is shown marked reverted, without a Revert button, in both layouts; the other hunk keeps its button', async () => {
    const client = fx.server.client;
    const repo = makeRepo(fx.temp.make(), { 'a.txt': lines(30) });
    await createSession(client, 'hunks', repo);
    await recordTurn(client, 'ahp-session:/hunks', 't1', 'Two hunks', () =>
      writeFiles(repo, { 'a.txt': lines(30, { 2: 'first change', 25: 'second change' }) }),
    );

    const { page, errors } = await openPage(`${fx.server.viewerUrl}&session=hunks&turn=t1&file=a.txt`, 'file');
    const headers = page.locator('tr.hunk-header');
    await expect.poll(() => headers.count()).toBe(2);
    expect(await headers.locator('[data-operation="revert"]').count()).toBe(2);
    await headers.nth(0).locator('[data-operation="revert"]').click();
    await page.locator('#confirm-dialog').waitFor({ state: 'visible' });
    await page.locator('#confirm-ok').click();
    await page.locator('[data-user-action^="Reverted lines"]').waitFor();
    // The file holds the first hunk's old lines again, as git sees it.
    await expect.poll(() => git(repo, ['diff', '--numstat'])).toBe('1\t1\ta.txt');
    await expect.poll(() => headers.nth(0).locator('.badge.reverted').count()).toBe(1);
    expect(await headers.nth(0).locator('[data-operation="revert"]').count()).toBe(0);
    expect(await headers.nth(1).locator('[data-operation="revert"]').count()).toBe(1);
    expect(await headers.count()).toBe(2);

    // The review page (every file on one page) says the same.
    await page.locator('[data-layout="all"]').click();
    const rows = page.locator('.rl.hunk-row');
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(() => rows.nth(0).locator('.badge.reverted').count()).toBe(1);
    expect(await rows.nth(0).locator('[data-operation="revert"]').count()).toBe(0);
    expect(await rows.nth(1).locator('[data-operation="revert"]').count()).toBe(1);
    expect(errors).toEqual([]);
  }, 120_000);

  it('a file whose configured git filter the server does not run says so in plain words, in both layouts', async () => {
    const client = fx.server.client;
    const repo = fx.temp.make('ws-');
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    git(repo, ['config', 'filter.upper.smudge', 'cat']);
    writeFiles(repo, { '.gitattributes': '*.up filter=upper\n', 'notes.up': 'hello\n', 'plain.txt': 'plain\n' });
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'initial']);
    await createSession(client, 'filters', repo);
    await recordTurn(client, 'ahp-session:/filters', 't1', 'Edit', () => writeFiles(repo, { 'notes.up': 'hello\nworld\n', 'plain.txt': 'plain\nmore\n' }));
    const note = 'git runs the “upper” filter on this file; this server does not, so it is shown as saved.';

    const { page, errors } = await openPage(`${fx.server.viewerUrl}&session=filters&turn=t1&file=notes.up`, 'file');
    await expect.poll(() => page.locator('.file-note').textContent()).toBe(note);
    await page.locator('.row.file[data-path="plain.txt"] .file-open').click();
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('plain.txt');
    expect(await page.locator('.file-note').count()).toBe(0);

    // Every file on one page, from the first: the note on its file, none on the other.
    await page.locator('.row.file[data-path="notes.up"] .file-open').click();
    await expect.poll(() => page.locator('#diff-title .path').textContent()).toBe('notes.up');
    await page.locator('[data-layout="all"]').click();
    await expect.poll(() => page.locator('.rl.note-row', { hasText: 'filter' }).allTextContents()).toEqual([note]);
    await page.locator('.rv-file[data-path="plain.txt"] .rl.add').first().waitFor();
    expect(await page.locator('.rv-file[data-path="plain.txt"] .rl.note-row').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
