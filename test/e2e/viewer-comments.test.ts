/**
 * The review comment loop end to end, as a reviewer and Claude Code live
 * it: the agent's turns come through its hooks; the reviewer writes a
 * comment on a line in the viewer (Chromium); it is kept in the store and
 * shown again after the server restarts; the hook hands it to the agent at
 * its next prompt; a later turn that inserts lines above moves it, one that
 * deletes its lines marks it outdated with the code it pointed at; the agent
 * resolves it through its MCP tool and the open viewer shows it resolved
 * without a reload.
 *
 * The agent's side runs as Claude Code runs it where that is what the reviewer
 * depends on: `serve` and its restart, and the prompt hook that hands the
 * comments over (its stdout is what the agent reads), are processes of their
 * own; the other hook events run the same hook command in the test's process
 * (`hookInProcess`), and the agent's MCP client talks to the same MCP server
 * `mcp` serves, in the test's process (`mcpAgent`): the same answers without
 * starting Node again (the hook and MCP tests cover the binaries' stdio).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReviewComment } from '../../protocol/extensions/comments.js';
import { run, startServe, type ServeProcess } from '../cli/serve-process.js';
import { TestClient } from '../helpers/client.js';
import { mcpAgent } from '../helpers/mcp-agent.js';
import { fixture, hookInProcess } from '../hook/hook-fixtures.js';
import { makeRepo } from '../helpers/workspace.js';
import { openViewer, useViewerFixture } from './viewer-harness.js';

const fx = useViewerFixture('none');

const SESSION_ID = '5c1e9a7b-3d2f-4a6e-8b0c-7d9f1e3a5b24';
const CHANNEL = `ahp-session:/${SESSION_ID}`;

const lines = (n: number, at: Record<number, string> = {}): string => Array.from({ length: n }, (_, i) => `${at[i + 1] ?? `line ${i + 1}`}\n`).join('');

describe('review comments: the loop from the viewer to the agent and back', () => {
  it('a comment written in the viewer survives a restart, reaches the agent, follows its lines, goes outdated and shows resolved by the agent live', {
    timeout: 240_000,
  }, async () => {
    const workspace = makeRepo(fx.temp.make('cs-comments-ws-'), { 'src/app.ts': lines(12) });
    const state = fx.temp.make('cs-comments-state-');
    const servers: ServeProcess[] = [];
    const serve = async (): Promise<ServeProcess> => {
      const s = await startServe([workspace, '--no-session', '--port', '0', '--state-dir', state]);
      servers.push(s);
      return s;
    };
    const hookArgs = (flags: string[]) => ['hook', 'claude', '--state-dir', state, ...flags];
    /** One hook event as Claude Code sends it, through the binary. */
    const hook = (name: string, ...flags: string[]) => run(hookArgs(flags), { input: fixture(name, SESSION_ID, workspace), cwd: workspace });
    /** The same event through the same command in the test's process. */
    const hookHere = (name: string, ...flags: string[]) => hookInProcess(hookArgs(flags), fixture(name, SESSION_ID, workspace));
    const turn = async (content: string): Promise<void> => {
      expect((await hookHere('02-user-prompt-submit.json')).code).toBe(0);
      writeFileSync(join(workspace, 'src/app.ts'), content);
      expect((await hookHere('07-stop.json')).code).toBe(0);
    };
    const cleanups: (() => unknown)[] = [];
    try {
      let server = await serve();
      await turn(lines(12, { 5: 'const a = 1;', 6: 'const b = 2;' }));

      // The reviewer comments on line 6 from its line number's "+".
      const { page, errors } = await openViewer(fx.browser, server.ready.viewer);
      const file = page.locator('section.rv-file[data-path="src/app.ts"]');
      const row6 = file.locator('.rl').filter({ has: page.locator('[data-line="R6"]') });
      await row6.hover();
      await row6.locator('.add-comment[data-comment-line="R6"]').click();
      const box = page.getByRole('textbox', { name: 'Comment on line 6 of src/app.ts' });
      await expect.poll(() => box.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
      await box.fill('Name b after what it counts');
      await box.press('Control+Enter');
      const comment = file.locator('.comment');
      await expect.poll(() => comment.count()).toBe(1);
      await expect.poll(() => comment.locator('.comment-body').textContent()).toBe('Name b after what it counts');
      await expect.poll(() => comment.getAttribute('aria-label')).toBe('Comment by you on line 6');
      await expect.poll(() => file.locator('.comment-count').textContent()).toBe('1 comment');
      await expect.poll(() => page.locator('#open-comments').textContent()).toBe('1 open comment');
      // Under its line: the row before the comment is line 6.
      expect(await comment.evaluate((el) => el.previousElementSibling?.querySelector('[data-line="R6"]') !== null)).toBe(true);

      // The server has it.
      const listed = async (s: ServeProcess): Promise<ReviewComment[]> => {
        // What the server keeps, not the shape of its handshake (the protocol tests check that): no schema check.
        const client = await TestClient.connect(s.ready.url, { token: s.ready.token!, check: null });
        try {
          await client.initialize();
          return (await client.request<{ comments: ReviewComment[] }>('comments/list', { channel: CHANNEL, state: 'all' })).comments;
        } finally {
          client.close();
        }
      };
      expect(await listed(server)).toMatchObject([
        { id: '1', body: 'Name b after what it counts', state: 'open', anchor: { kind: 'lines', path: 'src/app.ts', side: 'after', startLine: 6, endLine: 6 } },
      ]);

      // After a restart on the same state, the viewer shows it again.
      await server.stop('SIGTERM');
      server = await serve();
      await page.goto(server.ready.viewer);
      await expect.poll(() => comment.locator('.comment-body').textContent()).toBe('Name b after what it counts');

      // The hook hands it to the agent at its next prompt.
      const prompt = await hook('02-user-prompt-submit.json', '--comments');
      expect(prompt.code).toBe(0);
      const context = (JSON.parse(prompt.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
      expect(context).toContain('Comment #1 on src/app.ts line 6');
      expect(context).toContain('> Name b after what it counts');
      // That turn inserts two lines above: the comment moves with its line, live.
      writeFileSync(join(workspace, 'src/app.ts'), `// one\n// two\n${lines(12, { 5: 'const a = 1;', 6: 'const b = 2;' })}`);
      expect((await hookHere('07-stop.json')).code).toBe(0);
      await expect.poll(() => comment.getAttribute('aria-label')).toBe('Comment by you on line 8');
      expect(await comment.evaluate((el) => el.previousElementSibling?.querySelector('[data-line="R8"]') !== null)).toBe(true);

      // A turn deleting the lines: the comment is outdated, with the code it was written on.
      await turn(`// one\n// two\n${lines(12)}`.replace('line 5\nline 6\n', ''));
      await expect.poll(() => comment.locator('.comment-badge.outdated').textContent()).toBe('outdated');
      await expect.poll(() => comment.locator('.comment-code').textContent()).toBe('const b = 2;');

      // The agent resolves it through its MCP tool: the open viewer shows it resolved, without a reload.
      const mcp = await mcpAgent(workspace, state, (cleanup) => cleanups.push(cleanup), { through: 'process' });
      const result = (await mcp.callTool({ name: 'resolve_comment', arguments: { comment: '#1', note: 'Renamed it to count' } })) as { isError?: boolean };
      expect(result.isError ?? false).toBe(false);
      await expect.poll(() => comment.locator('.comment-badge.resolved').textContent()).toBe('resolved');
      await expect.poll(() => comment.locator('.comment-resolution').textContent()).toBe('Resolved by the agent: Renamed it to count');
      await expect.poll(() => comment.getByRole('button', { name: 'Reopen' }).isVisible()).toBe(true);
      await expect.poll(() => file.locator('.comment-count').count()).toBe(0);
      await expect.poll(() => page.locator('#open-comments').count()).toBe(0);
      // Side by side: a comment on an added line sits under its pair of lines.
      await page.locator('body').press('s');
      await expect.poll(() => page.locator('.rv-body.split').count()).toBeGreaterThan(0);
      const pair1 = file.locator('.rl.pair').filter({ has: page.locator('[data-line="R1"]') });
      await pair1.hover();
      await pair1.locator('.add-comment[data-comment-line="R1"]').click();
      const box1 = page.getByRole('textbox', { name: 'Comment on line 1 of src/app.ts' });
      await box1.fill('Say what these are for');
      await box1.press('Control+Enter');
      const second = file.locator('.comment.open');
      await expect.poll(() => second.getAttribute('aria-label')).toBe('Comment by you on line 1');
      expect(await second.evaluate((el) => el.previousElementSibling?.querySelector('[data-line="R1"]') !== null)).toBe(true);
      expect(await listed(server)).toMatchObject([
        { id: '1', state: 'resolved' },
        { id: '2', state: 'open', anchor: { startLine: 1, endLine: 1 } },
      ]);
      await second.getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => second.count()).toBe(0);
      // No open comment left for the next prompt.
      expect((await hookHere('02-user-prompt-submit.json', '--comments')).stdout).toBe('');
      // Only the page's tries to reconnect while the server was restarting.
      expect(errors.filter((e) => !e.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup();
      for (const s of servers) await s.stop('SIGKILL');
    }
  });
});
