/**
 * `changeset-server hook <agent> --comments` hands the session's open
 * review comments to the agent at its next prompt, in the agent's
 * documented way to add context (Claude Code's and Gemini CLI's
 * `hookSpecificOutput.additionalContext`; Cursor's `beforeSubmitPrompt`
 * has none, so it answers as without the flag). Off by default; a prompt
 * never fails for them, with the server away too.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import type { ReviewComment } from '../../protocol/extensions/comments.js';
import { openCommentsForAgent } from '../../server/client/comment-words.js';
import { run, startServe, type ServeProcess } from '../cli/serve-process.js';
import { TestClient } from '../helpers/client.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { fixture, hookInProcess } from './hook-fixtures.js';

const SESSION_ID = '8e2b4d6f-1a3c-4e5f-9b7d-2c4e6a8b0d13';

interface Agent {
  name: 'claude' | 'gemini' | 'cursor';
  /** The agent's session: each agent records its own, in its own workspace, on the one server of the file. */
  sessionId: string;
  prompt: string;
  stop: string;
  /** The answer to the prompt event without comments. */
  plain: string;
  /** The event name the context answer carries, when the agent can take context at its prompt. */
  contextEvent?: string;
}

const AGENTS: readonly Agent[] = [
  {
    name: 'claude',
    sessionId: '8e2b4d6f-1a3c-4e5f-9b7d-2c4e6a8b0d01',
    prompt: '02-user-prompt-submit.json',
    stop: '07-stop.json',
    plain: '',
    contextEvent: 'UserPromptSubmit',
  },
  {
    name: 'gemini',
    sessionId: '8e2b4d6f-1a3c-4e5f-9b7d-2c4e6a8b0d02',
    prompt: 'gemini/02-before-agent.json',
    stop: 'gemini/08-after-agent.json',
    plain: '{}\n',
    contextEvent: 'BeforeAgent',
  },
  {
    name: 'cursor',
    sessionId: '8e2b4d6f-1a3c-4e5f-9b7d-2c4e6a8b0d03',
    prompt: 'cursor/02-before-submit-prompt.json',
    stop: 'cursor/10-stop.json',
    plain: '{"continue":true}\n',
  },
];

const CONTEXT = [
  'The reviewer of your changes left 2 comments that are still open. Address them as part of this prompt when they apply:',
  '- Comment #1 on hello.txt line 1, written on turn 1, from Ada:',
  '  The code it points at:',
  '  | hello, friend',
  '  The comment:',
  '  > Greet the whole world',
  '  > and end with a full stop.',
  '- Comment #2 on turn 1 as a whole, from you:',
  '  The comment:',
  '  > Add a test',
  'When you have addressed a comment, say so with the resolve_comment tool of changeset-server (its number and a note of what you did); without that tool, say in your answer which comments you addressed.',
].join('\n');

describe.concurrent('agent hooks hand open review comments at the next prompt', { timeout: 120_000 }, () => {
  // One server records the three agents' workspaces (one each), with one state directory: the hook's logs say which
  // agent wrote each line.
  const files = new TempDirs();
  const workspaces = new Map<string, string>();
  let state: string;
  let serve: ServeProcess;
  beforeAll(async () => {
    for (const agent of AGENTS) workspaces.set(agent.name, makeRepo(files.make(`cs-hook-ws-${agent.name}-`), { 'hello.txt': 'hi\n' }));
    state = files.make('cs-hook-state-');
    serve = await startServe([...workspaces.values(), '--no-session', '--state-dir', state]);
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    files.cleanup();
  });

  for (const agent of AGENTS) {
    it(`${agent.name}: with --comments the prompt event ${agent.contextEvent ? 'adds them to the context' : 'answers as without (no way to add context)'}; without it, nothing extra`, async ({
      defer,
      expect,
    }) => {
      const workspace = workspaces.get(agent.name)!;
      // The events run in the test's process (`hookInProcess`, the same answer), but for the one whose answer hands the
      // comments to the agent, which goes through the binary.
      const hook = (name: string, ...flags: string[]) =>
        hookInProcess(['hook', agent.name, '--state-dir', state, ...flags], fixture(name, agent.sessionId, workspace));

      // A first turn, before any comment: nothing extra, with or without the flag.
      expect(await hook(agent.prompt, '--comments')).toEqual({ code: 0, stdout: agent.plain, stderr: '' });
      writeFileSync(join(workspace, 'hello.txt'), 'hello, friend\n');
      expect((await hook(agent.stop)).code).toBe(0);

      // The reviewer comments on the turn's line and on the whole turn.
      const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
      await client.initialize();
      defer(() => client.close());
      const channel = `ahp-session:/${agent.sessionId}`;
      const turnId = (await client.request<{ sessions: { turns: { turnId: string }[] }[] }>('harness/status', { channel })).sessions[0]!.turns[0]!.turnId;
      const changeset = expandChangesetUri(changesetUriTemplate(agent.sessionId, 'turn'), { turnId });
      await client.request('comments/add', {
        channel,
        anchor: { kind: 'lines', changeset, path: 'hello.txt', side: 'after', startLine: 1, endLine: 1 },
        body: 'Greet the whole world\nand end with a full stop.',
        author: 'Ada',
      });
      await client.request('comments/add', { channel, anchor: { kind: 'turn', turnId }, body: 'Add a test' });

      // Off by default: the next prompt's answer is what it always is.
      expect(await hook(agent.prompt)).toEqual({ code: 0, stdout: agent.plain, stderr: '' });
      expect((await hook(agent.stop)).code).toBe(0);

      const on = await run(['hook', agent.name, '--state-dir', state, '--comments'], {
        input: fixture(agent.prompt, agent.sessionId, workspace),
        cwd: workspace,
      });
      expect(on.code).toBe(0);
      expect(on.stderr).toBe('');
      if (agent.contextEvent) {
        expect(JSON.parse(on.stdout)).toEqual({ hookSpecificOutput: { hookEventName: agent.contextEvent, additionalContext: CONTEXT } });
        expect(on.stdout.endsWith('}\n')).toBe(true);
      } else {
        expect(on.stdout).toBe(agent.plain);
      }
      // The prompt still started its turn.
      const status = await client.request<{ sessions: { activeTurn?: unknown; turns: unknown[] }[] }>('harness/status', { channel });
      expect(status.sessions[0]!.turns).toHaveLength(3);
      expect(status.sessions[0]!.activeTurn).toBeDefined();
      const logged = readFileSync(join(state, 'logs', 'hook.log'), 'utf8')
        .split('\n')
        .filter((line) => line.includes(`] ${agent.name}: `));
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.join('\n')).not.toContain('error');
    });
  }

  it('never fails the prompt when no server can start: the answer is the plain one', async ({ temp, expect }) => {
    const state = temp.make('cs-hook-state-');
    const missing = join(temp.make(), 'does-not-exist');
    const results = await Promise.all(
      AGENTS.map(
        async (agent) =>
          [agent, await hookInProcess(['hook', agent.name, '--comments', '--state-dir', state], fixture(agent.prompt, SESSION_ID, missing))] as const,
      ),
    );
    for (const [agent, result] of results) expect(result, agent.name).toEqual({ code: 0, stdout: agent.plain, stderr: '' });
    expect(readFileSync(join(state, 'logs', 'hook.log'), 'utf8')).toMatch(/error: the server for .*does-not-exist (could not start|exited)/);
  });

  it('keeps the text handed over short: long comments are cut and the rest counted', ({ expect }) => {
    const comment = (id: number): ReviewComment => ({
      id: String(id),
      channel: 'ahp-session:/s',
      anchor: { kind: 'lines', changeset: 'c', path: `src/file-${id}.ts`, side: 'after', startLine: 3, endLine: 40 },
      turn: 2,
      body: 'x'.repeat(5000),
      author: 'you',
      createdAt: 0,
      state: 'open',
      code: Array.from({ length: 38 }, () => 'y'.repeat(500)),
      now: { path: `src/file-${id}.ts`, startLine: 3, endLine: 40 },
    });
    const text = openCommentsForAgent(Array.from({ length: 40 }, (_, i) => comment(i + 1)))!;
    expect(text.length).toBeLessThanOrEqual(8000);
    expect(text).toContain('- Comment #1 on src/file-1.ts lines 3–40, written on turn 2, from you:');
    expect(text).toContain('  | … 30 more lines');
    expect(text).toMatch(/- … and \d+ more open comments \(the list_comments tool of changeset-server, or "changeset-server comment list", shows them all\)\./);
    expect(text.endsWith('which comments you addressed.')).toBe(true);
    expect(openCommentsForAgent([{ ...comment(1), state: 'resolved' }])).toBeUndefined();
  });
});
