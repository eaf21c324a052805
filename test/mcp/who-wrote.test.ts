/**
 * An agent asks who wrote lines before it changes them: `who_wrote` answers
 * in sentences — the turn with its prompt and the tool call, the user by
 * hand, the commit from before recording — with a summary, and refuses
 * plainly what it cannot answer.
 */
import { resolve } from 'node:path';
import { describe } from 'vitest';
import { callTool, mcpAgent, servedWorkspace } from '../helpers/mcp-agent.js';
import { protocolWords } from '../helpers/protocol-words.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';

describe('changeset-server mcp: who_wrote', () => {
  it("names each range's author in words: a turn and its tool call, the user by hand, a commit before recording", async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'src/app.ts': 'const a = 1;\nconst b = 2;\nconst c = 3;\n', 'notes.md': '# notes\n' });
    const stateDir = temp.make('state-');
    const { client, session } = await servedWorkspace(repo, stateDir, defer);
    // Turn 1: one Edit tool call rewrites line 2.
    await client.request('harness/turnStarted', { channel: session, turnId: 't1', message: 'Double b' }, { timeoutMs: 20_000 });
    await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: ['src/app.ts'], tool: 'Edit' }, { timeoutMs: 20_000 });
    writeFiles(repo, { 'src/app.ts': 'const a = 1;\nconst b = 4;\nconst c = 3;\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    // The user rewrites line 3 by hand; turn 2 changes another file.
    writeFiles(repo, { 'src/app.ts': 'const a = 1;\nconst b = 4;\nconst c = 9; // mine\n' });
    await client.request('harness/turnStarted', { channel: session, turnId: 't2', message: 'Write notes' }, { timeoutMs: 20_000 });
    writeFiles(repo, { 'notes.md': '# notes\nmore\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't2' }, { timeoutMs: 20_000 });

    // The MCP server runs in the test's process (test/mcp/mcp.test.ts talks to the binary over stdio).
    const mcp = await mcpAgent(repo, stateDir, defer, { through: 'process' });
    const call = (name: string, args: Record<string, unknown> = {}) => callTool(mcp, name, args);
    const { tools } = await mcp.listTools();
    expect(tools.find((t) => t.name === 'who_wrote')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });

    const whole = await call('who_wrote', { file: 'src/app.ts' });
    expect(whole.isError).toBe(false);
    expect(whole.data).toEqual({
      file: 'src/app.ts',
      summary: 'src/app.ts, lines 1–3 of 3: 1 line by turns of the session, 1 line by the user by hand, 1 line from before recording began.',
      ranges: [
        {
          lines: '1',
          author: expect.stringMatching(/^already there before recording began: commit [0-9a-f]{7} "initial" by .+, \d{1,2} [A-Z][a-z]{2}( \d{4})?$/),
        },
        { lines: '2', author: expect.stringMatching(/^turn 1 \("Double b"\), in step 1 \(Edit\), \d{1,2} [A-Z][a-z]{2}( \d{4})? \d\d:\d\d UTC$/) },
        { lines: '3', author: 'the user, by hand between turns 1 and 2 (no turn made this edit)' },
      ],
      turns: [{ turn: 'turn 1', prompt: 'Double b', at: expect.any(String) }],
    });
    expect(protocolWords(whole.text)).toEqual([]);
    expect(whole.text).not.toMatch(/ahp-|_meta|\bt1\b/);

    const part = await call('who_wrote', { file: resolve(repo, 'src/app.ts'), lines: '3' });
    expect(part.data).toMatchObject({ summary: 'src/app.ts, line 3 of 3: 1 line by the user by hand.', ranges: [{ lines: '3' }], turns: [] });

    expect(await call('who_wrote', { file: 'src/app.ts', lines: 'the end' })).toMatchObject({
      isError: true,
      text: expect.stringContaining('"lines" must be "A-B" or "A"'),
    });
    expect(await call('who_wrote', { file: 'src/app.ts', lines: '7-9' })).toMatchObject({
      isError: true,
      text: expect.stringContaining('src/app.ts has only 3 lines'),
    });
    expect(await call('who_wrote', { file: 'gone.ts' })).toMatchObject({ isError: true, text: expect.stringContaining('gone.ts does not exist') });
    const outside = await call('who_wrote', { file: resolve(temp.make(), 'x.ts') });
    expect(outside).toMatchObject({ isError: true, text: expect.stringContaining('is not in a folder the session') });
    expect(protocolWords(outside.text)).toEqual([]);
    expect(await call('who_wrote', {})).toMatchObject({ isError: true, text: 'who_wrote: "file" is required' });
  }, 120_000);
});
