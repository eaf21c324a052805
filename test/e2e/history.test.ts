import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAutoTurns } from '../../server/auto-turns/index.js';
import { findServerFor } from '../../server/registry/index.js';
import { startServe, type ServeProcess } from '../cli/serve-process.js';
import { run } from '../helpers/cli-in-process.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { fixture as recordedEvent, stopServer, waitFor } from '../hook/hook-fixtures.js';
import { closePages, connectBrowser, openViewer, startViewerServer, viewerDir, type ViewerServer } from './viewer-harness.js';
import { nextEvent } from '../helpers/next-event.js';

const SESSION_ID = '3f1c2a9e-7b4d-4c1e-9a8f-0d2b6e5c4a71';

const fixture = (name: string, cwd: string): string => recordedEvent(name, SESSION_ID, cwd);

const LINES = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join('');

// Workspaces and state directories in memory when the system has room: the files, the watchers and the recorded
// turns are the same; what goes is the disk's round trip for each of the store's fsyncs and each file written.
useMemoryTempDir();

describe('history in the viewer', () => {
  const temp = new TempDirs();
  let browser: Browser;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    browser = await connectBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    if (browser) await closePages(browser);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    temp.cleanup();
  });

  // The hook and the CLI run in the test's process (`main()`, as the binary runs it); the server the hook starts is a process of its own.
  it('keeps a Claude Code session reviewable and revertable after SessionEnd, in the viewer and the CLI', async () => {
    const workspace = makeRepo(temp.make('cs-hook-ws-'), { 'hello.txt': 'hi\n', 'analysis.ipynb': '{"cells": []}\n' });
    const state = temp.make('cs-hook-state-');
    const hook = async (name: string): Promise<void> => {
      const result = await run(['hook', 'claude', '--state-dir', state, '--timeout', '30000'], { input: fixture(name, workspace), cwd: workspace });
      expect(result, name).toMatchObject({ code: 0, stdout: '', stderr: '' });
    };
    await hook('01-session-start.json');
    const entry = await waitFor(() => findServerFor(state, workspace), 'the server to register', 30_000);
    cleanups.push(() => stopServer(entry));
    await hook('02-user-prompt-submit.json');
    await hook('04-pre-tool-use-edit.json');
    writeFileSync(join(workspace, 'hello.txt'), 'hello, friend\n');
    await hook('05-pre-tool-use-write.json');
    writeFileSync(join(workspace, 'notes.txt'), 'one\n');
    await hook('07-stop.json');
    await hook('11-session-end.json');

    // The CLI still sees it, says it ended, and can dry-run and revert it.
    const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });
    const status = await cli('status');
    expect(status.stdout).toContain('Claude Code — Make hello.txt friendlier and add notes  (ended: kept for review)');
    const dry = await cli('revert', '--turn', '1', '--dry-run');
    expect(dry.stdout).toContain('would change 2 files');

    // The viewer lists it under past sessions, opens its turn, and reverts a file of it.
    const { page, errors } = await openViewer(browser, entry.viewer, undefined, { layout: 'file' });
    const item = page.locator(`[data-session="ahp-session:/${SESSION_ID}"]`);
    await item.waitFor();
    expect(await page.locator('#sessions .group').allTextContents()).toEqual(['Past sessions']);
    expect(await item.locator('.session-title').textContent()).toBe('Claude Code — Make hello.txt friendlier and add notes');
    expect(await item.locator('.meta').textContent()).toMatch(/ended.*1 turn · 2 files \+2 −1/);
    await item.click();
    const turn = page.locator('.turn-open').first();
    await turn.click();
    await page.locator('.row.file[data-path="notes.txt"] .file-open').click();
    await page.locator('.diff-header [data-operation="revert"]').click();
    await page.locator('#confirm-ok').click();
    // A turn's changeset is what the turn did, so the file stays listed; the timeline shows what the user did.
    await page.locator('[data-user-action="Reverted notes.txt (turn 1)"]').waitFor({ timeout: 60_000 });
    expect(() => readFileSync(join(workspace, 'notes.txt'))).toThrow();

    // And the CLI reverts the rest, naming the turn.
    const reverted = await cli('revert', '--turn', 'last');
    expect(reverted).toMatchObject({ code: 0, stdout: 'Reverted turn 1: hello.txt\n  hello.txt\n' });
    expect(readFileSync(join(workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect((await cli('status')).stdout).toContain('turns:       1');
    expect(errors).toEqual([]);
  }, 240_000);

  it('records a hunk the viewer reverts as the user action, not as an automatic turn', async () => {
    const server: ViewerServer = await startViewerServer(viewerDir());
    cleanups.push(() => server.stop());
    const repo = makeRepo(temp.make(), { 'a.txt': LINES });
    const session = await server.service.openWorkspace([repo]);
    const auto = startAutoTurns(server.service.sessions, session, { quietMs: 400 });
    cleanups.push(async () => auto.stop());
    const ended = nextEvent(auto.onTurnEnded).then((ended) => ended.turnId);
    writeFiles(repo, { 'a.txt': LINES.replace('line 3\n', 'line three\n').replace('line 25\n', 'line twenty-five\n') });
    const turnId = await ended;

    const { page, errors } = await openViewer(browser, server.viewerUrl, undefined, { layout: 'file' });
    await page.locator(`[data-turn="${turnId}"]`).click();
    await expect.poll(() => page.locator(`[data-turn="${turnId}"] .turn-message`).textContent()).toContain('Edited a.txt');
    await page.locator('.row.file[data-path="a.txt"] .file-open').click();
    await page.locator('tr.hunk-header [data-operation="revert"]').first().click();
    // Automatic turns look at the file events of the revert's write once the watcher reports them.
    const checked = nextEvent(auto.onChecked);
    await page.locator('#confirm-ok').click();
    await page.locator('[data-user-action="Reverted lines 1–6 of a.txt (turn 1)"]').waitFor({ timeout: 30_000 });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe(LINES.replace('line 25\n', 'line twenty-five\n'));
    // The server's own write is no change to the workspace: no turn starts.
    expect(await checked).toBe(false);
    await auto.idle();
    expect(session.turns).toHaveLength(1);
    expect(await page.locator('.turn-open').count()).toBe(1);
    expect(errors).toEqual([]);
  }, 120_000);

  it('reconnects an open viewer after a restart on the same port and token; a link without the token says how to get one', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const state = temp.make('state-');
    const args = [repo, '--state-dir', state, '--viewer-dir', viewerDir()];
    let serve: ServeProcess = await startServe(args);
    cleanups.push(() => serve.stop());
    const first = serve.ready;
    const { page, errors } = await openViewer(browser, first.viewer);
    await page.locator('#connection[data-state="open"]').waitFor();
    await page.locator(`[data-session="${first.sessions[0]}"]`).waitFor();

    expect(await serve.stop()).toBe(0);
    await page.locator('#connection[data-state="reconnecting"]').waitFor();
    serve = await startServe(args);
    expect(serve.ready).toMatchObject({ url: first.url, token: first.token, viewer: first.viewer, sessions: first.sessions });
    await page.locator('#connection[data-state="open"]').waitFor({ timeout: 30_000 });
    await page.locator(`[data-session="${first.sessions[0]}"]`).waitFor();

    const bare = await openViewer(browser, first.url.replace(/^ws:/, 'http:'));
    await bare.page.locator('.needs-link').waitFor();
    expect(await bare.page.locator('.needs-link').textContent()).toContain('changeset-server open');
    // While the server was down the browser logged its refused connection attempts; nothing else went wrong.
    expect(errors.filter((e) => !e.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
  }, 120_000);
});
