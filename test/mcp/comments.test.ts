/**
 * The reviewer's comments reach the agent through its MCP tools: it lists
 * the open ones (file, lines now, the code, the comment, the turn, outdated
 * or not) and marks one addressed with a note, which the reviewer then
 * sees as resolved by the agent.
 */
import { describe } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import type { ReviewComment } from '../../protocol/extensions/comments.js';
import { callTool, mcpAgent, servedWorkspace } from '../helpers/mcp-agent.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';

const lines = (n: number, at: Record<number, string> = {}): string => Array.from({ length: n }, (_, i) => `${at[i + 1] ?? `line ${i + 1}`}\n`).join('');

describe('changeset-server mcp: review comments', () => {
  it('lists the open comments with where their lines are now, and marks one addressed by the agent with its note', async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'src/app.ts': lines(20) });
    const stateDir = temp.make('state-');
    const { client, session } = await servedWorkspace(repo, stateDir, defer);
    const turn = async (turnId: string, files: Record<string, string>) => {
      await client.request('harness/turnStarted', { channel: session, turnId, message: `turn ${turnId}` }, { timeoutMs: 20_000 });
      writeFiles(repo, files);
      await client.request('harness/turnEnded', { channel: session, turnId }, { timeoutMs: 20_000 });
    };
    await turn('t1', { 'src/app.ts': lines(20, { 5: 'const a = 1;', 6: 'const b = 2;', 18: 'x()' }) });
    const changeset = expandChangesetUri(changesetUriTemplate(session.slice('ahp-session:/'.length), 'turn'), { turnId: 't1' });
    const onLines = (startLine: number, endLine: number) => ({ kind: 'lines', changeset, path: 'src/app.ts', side: 'after', startLine, endLine });
    await client.request('comments/add', { channel: session, anchor: onLines(5, 6), body: 'Name these better', author: 'Ada' });
    await client.request('comments/add', { channel: session, anchor: onLines(18, 18), body: 'Why call x here?' });
    await client.request('comments/add', { channel: session, anchor: { kind: 'turn', turnId: 't1' }, body: 'Add a test' });
    // A later turn inserts two lines above the first comment's lines (they move) and rewrites the second's (outdated).
    await turn('t2', { 'src/app.ts': `// one\n// two\n${lines(20, { 5: 'const a = 1;', 6: 'const b = 2;', 18: 'y()' })}` });

    // The MCP server runs in the test's process (test/mcp/mcp.test.ts talks to the binary over stdio).
    const mcp = await mcpAgent(repo, stateDir, defer, { through: 'process' });
    const call = (name: string, args: Record<string, unknown> = {}) => callTool(mcp, name, args);

    const { tools } = await mcp.listTools();
    expect(tools.find((t) => t.name === 'list_comments')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tools.find((t) => t.name === 'resolve_comment')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });

    const listed = await call('list_comments');
    expect(listed.isError).toBe(false);
    expect(listed.data['summary']).toBe('3 open review comments.');
    expect(listed.data['comments']).toEqual([
      {
        number: 1,
        on: 'src/app.ts lines 7–8, written on turn 1 at lines 5–6',
        file: 'src/app.ts',
        lines: '7-8',
        turn: 1,
        outdated: false,
        code: 'const a = 1;\nconst b = 2;',
        comment: 'Name these better',
        author: 'Ada',
        state: 'open',
      },
      {
        number: 2,
        on: 'src/app.ts line 18 as turn 1 left it, outdated: those lines have since been removed or rewritten',
        file: 'src/app.ts',
        turn: 1,
        outdated: true,
        code: 'x()',
        comment: 'Why call x here?',
        author: 'you',
        state: 'open',
      },
      { number: 3, on: 'turn 1 as a whole', turn: 1, comment: 'Add a test', author: 'you', state: 'open' },
    ]);
    // Nothing a model reads names the protocol.
    expect(listed.text).not.toMatch(/_meta|ahp-|changeset:|channel/);
    expect((await call('list_comments', { file: 'src/app.ts' })).data['comments']).toHaveLength(2);
    expect((await call('list_comments', { file: 'other.ts' })).data['summary']).toBe('No open review comments on other.ts.');

    const resolved = await call('resolve_comment', { comment: '#1', note: 'Renamed them to width and height' });
    expect(resolved.isError).toBe(false);
    expect(resolved.data).toMatchObject({
      summary: 'Comment #1 is marked addressed by you.',
      comment: { number: 1, state: 'resolved', resolvedBy: 'the agent', note: 'Renamed them to width and height' },
    });
    // The reviewer sees it resolved by the agent, with the note; the open list no longer has it.
    const all = await client.request<{ comments: ReviewComment[] }>('comments/list', { channel: session, state: 'all' });
    expect(all.comments.find((c) => c.id === '1')).toMatchObject({ state: 'resolved', resolution: { by: 'agent', note: 'Renamed them to width and height' } });
    expect(((await call('list_comments')).data['comments'] as { number: number }[]).map((c) => c.number)).toEqual([2, 3]);
    expect((await call('list_comments', { state: 'all' })).data['summary']).toBe('3 review comments (2 open).');

    expect(await call('resolve_comment', { comment: 'the first', note: 'done' })).toMatchObject({
      isError: true,
      text: expect.stringContaining('"comment" must be a comment\'s number'),
    });
    expect(await call('resolve_comment', { comment: 2, note: '  ' })).toMatchObject({
      isError: true,
      text: expect.stringContaining('"note" must say what you did'),
    });
    expect(await call('resolve_comment', { comment: 2 })).toMatchObject({ isError: true, text: 'resolve_comment: "note" is required' });
    const missing = await call('resolve_comment', { comment: 9, note: 'done' });
    expect(missing.isError).toBe(true);
    expect(missing.text).not.toMatch(/_meta|ahp-|-32\d\d\d/);
  }, 120_000);
});
