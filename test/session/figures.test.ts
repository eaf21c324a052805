/**
 * Every figure a client is given is what happened: a past session's end
 * time, an automatic turn's duration, a reverted hunk, and the note on a
 * file whose git filter the server does not run. A scripted client over a
 * real WebSocket reads them and compares them with what the test did.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  changesetUriTemplate,
  expandChangesetUri,
  ROOT_CHANNEL,
  type ChangesetState,
  type ChatState,
  type ListSessionsResult,
  type SessionState,
  type SessionSummary,
} from '../../protocol/index.js';
import type { ChangesetFileMeta } from '../../protocol/extensions/changeset-file.js';
import type { WorkspaceFileDiff } from '../../protocol/extensions/file-diff.js';
import type { TimelineMeta } from '../../protocol/extensions/timeline.js';
import { startAutoTurns } from '../../server/auto-turns/index.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { nextEvent } from '../helpers/next-event.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
const services: TestService[] = [];
afterEach(async () => {
  await Promise.allSettled(services.splice(0).map((s) => s.stop()));
  temp.cleanup();
});

async function service(): Promise<TestService> {
  const s = await startTestService();
  services.push(s);
  return s;
}

const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i + 1}`}\n`).join('');
const turnUri = (sessionId: string, turnId: string) => expandChangesetUri(changesetUriTemplate(sessionId, 'turn'), { turnId });
const pathOf = (f: { _meta?: unknown }) => (f._meta as ChangesetFileMeta).path;

describe('the figures a client is given', () => {
  it("a past session's end time is when it ended, after its start and its last turn; a harness turn lasts from its start to its end", async () => {
    const t = await service();
    const client = await t.client();
    const repo = makeRepo(temp.make('ws-'), { 'a.txt': 'a\n' });
    const session = await t.service.openWorkspace([repo]);
    await client.subscribe(session.chatUri);
    const asked = Date.now();
    await client.request('harness/turnStarted', { channel: session.uri, turnId: 't1', message: 'first' }, { timeoutMs: 60_000 });
    const started = Date.now();
    writeFiles(repo, { 'a.txt': 'b\n' });
    await new Promise((r) => setTimeout(r, 300));
    const ending = Date.now();
    await client.request('harness/turnEnded', { channel: session.uri, turnId: 't1' }, { timeoutMs: 120_000 });
    const endedTurn = Date.now();
    await expect.poll(() => client.state<ChatState>(session.chatUri)!.turns[0]?.duration).toBeDefined();
    const chatTurn = client.state<ChatState>(session.chatUri)!.turns[0]!;
    expect(Date.parse(chatTurn.startedAt!)).toBeGreaterThanOrEqual(asked);
    expect(Date.parse(chatTurn.startedAt!)).toBeLessThanOrEqual(started);
    expect(chatTurn.duration).toBeGreaterThanOrEqual(ending - started);
    expect(chatTurn.duration).toBeLessThanOrEqual(endedTurn - asked);
    // Long enough apart that the start and the end read differently to the second: a second after the start, exactly.
    const secondAfterStart = Date.parse(session.createdAt) + 1000;
    while (Date.now() <= secondAfterStart) await new Promise((r) => setTimeout(r, secondAfterStart + 1 - Date.now()));
    const before = Date.now();
    await t.service.sessions.dispose(session.uri);
    const after = Date.now();
    const listed = await client.request<ListSessionsResult>('listSessions', { channel: ROOT_CHANNEL });
    const summary = listed.items.find((s) => s.resource === session.uri)!;
    const endedAt = (summary._meta as { endedAt?: string }).endedAt!;
    expect(Date.parse(endedAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(endedAt)).toBeLessThanOrEqual(after);
    expect(summary.createdAt).toBe(session.createdAt);
    expect(Date.parse(endedAt) - Date.parse(summary.createdAt)).toBeGreaterThanOrEqual(1000);
    const turn = session.turns[0]!;
    expect(Date.parse(endedAt)).toBeGreaterThanOrEqual(Date.parse(turn.startedAt) + (turn.durationMs ?? 0));
  }, 90_000);

  it('a session list kept by the root notifications follows the session: its turn count, first prompt, title and end', async () => {
    const t = await service();
    const client = await t.client();
    const repo = makeRepo(temp.make('ws-'), { 'a.txt': 'a\n' });
    const uri = 'ahp-session:/listed';
    await client.request('createSession', { channel: uri, provider: 'claude-code', workingDirectory: pathToFileURL(repo).href });
    await client.waitForNotification<{ summary: SessionSummary }>('root/sessionAdded', (p) => p.summary.resource === uri);
    // A client's list entry: the summary it was given, with every change laid over it, as AHP says.
    const entry = (): SessionSummary => {
      let summary: SessionSummary | undefined;
      for (const m of client.received) {
        const params = m['params'] as { summary?: SessionSummary; session?: string; changes?: Partial<SessionSummary> };
        if (m['method'] === 'root/sessionAdded' && params.summary?.resource === uri) summary = params.summary;
        if (m['method'] === 'root/sessionSummaryChanged' && params.session === uri && summary) summary = { ...summary, ...params.changes };
      }
      return summary!;
    };
    await recordTurn(client, uri, 't1', () => writeFiles(repo, { 'a.txt': 'b\n' }), 'fix the login redirect');
    const session = t.service.sessions.get(uri)!;
    await expect.poll(() => (entry()._meta as { turnCount?: number } | undefined)?.turnCount).toBe(1);
    expect(entry()._meta).toMatchObject({ firstPrompt: 'fix the login redirect' });
    expect(entry().title).toBe(session.sessionState.title);
    expect(entry().title).toBe('Claude Code — fix the login redirect');
    const before = Date.now();
    await t.service.sessions.dispose(uri);
    await expect.poll(() => (entry()._meta as { endedAt?: string } | undefined)?.endedAt).toBeDefined();
    const endedAt = Date.parse((entry()._meta as { endedAt: string }).endedAt);
    expect(endedAt).toBeGreaterThanOrEqual(before);
    expect(endedAt).toBeLessThanOrEqual(Date.now());
  });

  it("an automatic turn's duration is its edit span: one save is one moment, edits apart last from the first to the last", async () => {
    const t = await service();
    const client = await t.client();
    const repo = makeRepo(temp.make('ws-'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const session = await t.service.sessions.create({ workingDirectories: [repo] });
    await client.subscribe(session.uri);
    await client.subscribe(session.chatUri);
    // What the client has of a turn, once it has it.
    const statsOf = async (turnId: string) => {
      await expect.poll(() => (client.state<SessionState>(session.uri)!._meta as unknown as TimelineMeta).turns[turnId]).toBeDefined();
      return (client.state<SessionState>(session.uri)!._meta as unknown as TimelineMeta).turns[turnId]!;
    };
    const chatTurn = async (turnId: string) => {
      await expect.poll(() => client.state<ChatState>(session.chatUri)!.turns.find((x) => x.id === turnId)?.duration).toBeDefined();
      return client.state<ChatState>(session.chatUri)!.turns.find((x) => x.id === turnId)!;
    };
    // One save needs no long quiet period to end its turn; two saves apart need one longer than the time between them.
    let auto = startAutoTurns(t.service.sessions, session, { quietMs: 500, ignoreDirs: [t.stateDir] });
    try {
      // One save: the watcher sees it as a few events milliseconds apart, which are no duration.
      let ended = nextEvent(auto.onTurnEnded);
      const saved = Date.now();
      writeFileSync(join(repo, 'a.txt'), 'a\nmore\n');
      const one = (await ended).turnId;
      const doneOne = Date.now();
      const statsOne = await statsOf(one);
      const chatOne = await chatTurn(one);
      expect(statsOne.editSpan!.from).toBe(statsOne.editSpan!.to);
      expect(Date.parse(statsOne.editSpan!.from)).toBeGreaterThanOrEqual(saved);
      expect(Date.parse(statsOne.editSpan!.from)).toBeLessThanOrEqual(doneOne);
      expect(chatOne.duration).toBe(0);
      auto.stop();
      await auto.idle();
      auto = startAutoTurns(t.service.sessions, session, { quietMs: 2500, ignoreDirs: [t.stateDir] });

      // Two saves 1.5 s apart: the turn lasts from the first change seen to the last, not the quiet period after.
      ended = nextEvent(auto.onTurnEnded);
      const first = Date.now();
      writeFileSync(join(repo, 'a.txt'), 'a\n');
      await new Promise((r) => setTimeout(r, 1500));
      const second = Date.now();
      writeFileSync(join(repo, 'b.txt'), 'B\n');
      const two = (await ended).turnId;
      const stats = await statsOf(two);
      const chat = await chatTurn(two);
      const from = Date.parse(stats.editSpan!.from);
      const to = Date.parse(stats.editSpan!.to);
      expect(from).toBeGreaterThanOrEqual(first);
      expect(from).toBeLessThan(second);
      expect(to).toBeGreaterThanOrEqual(second);
      expect(chat.duration).toBe(to - from);
      // The quiet period (2.5 s) that ended the turn is not part of it.
      expect(chat.duration).toBeLessThan(second - first + 1000);
    } finally {
      auto.stop();
      await auto.idle();
    }
  }, 90_000);

  it("a hunk a revert took back comes marked reverted in the turn's diff; the turn's other hunk does not", async () => {
    const t = await service();
    const client = await t.client();
    const repo = makeRepo(temp.make('ws-'), { 'a.txt': lines(30) });
    const session = await t.service.openWorkspace([repo]);
    await recordTurn(client, session.uri, 't1', () => writeFiles(repo, { 'a.txt': lines(30, { 2: 'first change', 25: 'second change' }) }), 'two hunks');
    const uri = turnUri(session.id, 't1');
    const turn = await subscribeReady(client, uri);
    const file = turn.files.find((f) => pathOf(f) === 'a.txt')!;
    const diffOf = () => client.request<WorkspaceFileDiff>('changesetFileDiff', { channel: uri, fileId: file.id });
    const before = await diffOf();
    if (before.kind !== 'text') throw new Error('a text diff was expected');
    expect(before.hunks.map((h) => h.reverted ?? false)).toEqual([false, false]);

    // Revert the first hunk as the viewer's button does (its new-side lines).
    const hunk = before.hunks[0]!;
    await client.request(
      'invokeChangesetOperation',
      {
        channel: uri,
        operationId: 'revert',
        target: {
          kind: 'range',
          resource: file.edit.after!.uri,
          side: 'after',
          range: { start: { line: hunk.newStart - 1, character: 0 }, end: { line: hunk.newStart + hunk.newLines - 2, character: 0 } },
        },
      },
      { timeoutMs: 20_000 },
    );
    expect(git(repo, ['diff', '--numstat'])).toBe('1\t1\ta.txt');
    const after = await diffOf();
    if (after.kind !== 'text') throw new Error('a text diff was expected');
    // The turn still shows what it did; the hunk today's file no longer holds says so.
    expect(after.hunks.map((h) => h.lines)).toEqual(before.hunks.map((h) => h.lines));
    expect(after.hunks.map((h) => h.reverted ?? false)).toEqual([true, false]);

    // Edited back in by hand: the hunk is today's again.
    writeFiles(repo, { 'a.txt': lines(30, { 2: 'first change', 25: 'second change' }) });
    const again = await diffOf();
    if (again.kind !== 'text') throw new Error('a text diff was expected');
    expect(again.hunks.map((h) => h.reverted ?? false)).toEqual([false, false]);
  });

  it('a file whose configured git filter the server does not run says so on its changeset entry; other files do not', async () => {
    const t = await service();
    const client = await t.client();
    const repo = temp.make('ws-');
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['config', 'filter.upper.clean', 'tr a-z A-Z']);
    git(repo, ['config', 'filter.upper.smudge', 'cat']);
    writeFiles(repo, { '.gitattributes': '*.up filter=upper\n', 'notes.up': 'hello\n', 'plain.txt': 'plain\n' });
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'initial']);
    // What git stores for the file is the filter's output.
    expect(git(repo, ['show', 'HEAD:notes.up'])).toBe('HELLO');
    const session = await t.service.openWorkspace([repo]);
    await recordTurn(client, session.uri, 't1', () => writeFiles(repo, { 'notes.up': 'hello\nworld\n', 'plain.txt': 'plain\nmore\n' }), 'edit both');
    const turn = await subscribeReady(client, turnUri(session.id, 't1'));
    const meta = (path: string) => turn.files.find((f) => pathOf(f) === path)!._meta as unknown as ChangesetFileMeta;
    expect(meta('notes.up').filterNotRun).toBe('upper');
    expect(meta('plain.txt').filterNotRun).toBeUndefined();
    // The file is shown as saved: the index's filtered version before, the bytes on disk after.
    const session_ = await subscribeReady(client, expandChangesetUri(changesetUriTemplate(session.id, 'session'), {}));
    expect((session_.files.find((f) => pathOf(f) === 'notes.up')!._meta as unknown as ChangesetFileMeta).filterNotRun).toBe('upper');
    expect(client.state<ChangesetState>(turnUri(session.id, 't1'))!.files).toHaveLength(2);
  });
});
