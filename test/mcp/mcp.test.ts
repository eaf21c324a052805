import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';
import { listServers } from '../../server/registry/index.js';
import { callTool, mcpAgent, servedWorkspace } from '../helpers/mcp-agent.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, writeFiles } from '../helpers/workspace.js';

// Each test has its own workspace, state directory and server: they run side by side. The first talks to the binary over
// stdio, as an agent does; the others to the same MCP server run in the test's process.
describe.concurrent('changeset-server mcp', () => {
  it('lets an agent list its turns, see a diff, revert one file of one turn and undo it', async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' });
    const stateDir = temp.make('state-');
    const { client, session } = await servedWorkspace(repo, stateDir, defer);
    await client.request('harness/turnStarted', { channel: session, turnId: 't1', message: 'change both files' }, { timeoutMs: 20_000 });
    writeFiles(repo, { 'a.txt': 'one\nTWO\nthree\n', 'b.txt': 'B\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });

    const mcp = await mcpAgent(repo, stateDir, defer);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'list_sessions',
      'list_turns',
      'show_changes',
      'show_file_diff',
      'revert',
      'restore_checkpoint',
      'undo',
      'redo',
      'list_comments',
      'resolve_comment',
      'who_wrote',
    ]);
    expect(tools.find((t) => t.name === 'revert')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });

    const turns = await callTool(mcp, 'list_turns');
    expect(turns.data['turns']).toEqual([expect.objectContaining({ number: 1, id: 't1', title: 'change both files', files: 2, added: 2, deleted: 2 })]);
    const changes = await callTool(mcp, 'show_changes', { turn: 1 });
    expect((changes.data['files'] as { path: string }[]).map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    const diff = await callTool(mcp, 'show_file_diff', { file: 'a.txt', turn: 'last' });
    expect(diff.data['diff']).toBe('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n');

    const dry = await callTool(mcp, 'revert', { turn: 1, file: 'a.txt', dry_run: true });
    expect(dry.data).toMatchObject({ dryRun: true, files: [{ path: 'a.txt', action: 'write' }] });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    const reverted = await callTool(mcp, 'revert', { turn: 1, file: 'a.txt' });
    expect(reverted.isError).toBe(false);
    expect(reverted.data).toMatchObject({ operationId: 'revert', turn: { index: 1, turnId: 't1' } });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('B\n');
    const undone = await callTool(mcp, 'undo');
    expect(undone.isError).toBe(false);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
  }, 120_000);

  it('restores to just before the second tool call of a turn, and lists the steps', async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a0\n', 'b.txt': 'b0\n' });
    const stateDir = temp.make('state-');
    const { client, session } = await servedWorkspace(repo, stateDir, defer);
    const edit = async (tool: string, files: Record<string, string>) => {
      await client.request('harness/beforeEdit', { channel: session, turnId: 't1', paths: Object.keys(files), tool }, { timeoutMs: 30_000 });
      writeFiles(repo, files);
    };
    await client.request('harness/turnStarted', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    await edit('Edit', { 'a.txt': 'a1\n' });
    await edit('Write', { 'b.txt': 'b2\n' });
    await edit('Edit', { 'a.txt': 'a3\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });

    const mcp = await mcpAgent(repo, stateDir, defer, { through: 'process' });
    const changes = await callTool(mcp, 'show_changes', { turn: 1 });
    expect((changes.data['steps'] as { tool: string }[]).map((s) => s.tool)).toEqual(['Edit', 'Write', 'Edit']);
    const restored = await callTool(mcp, 'restore_checkpoint', { turn: 1, step: 2 });
    expect(restored.isError).toBe(false);
    expect([readFileSync(join(repo, 'a.txt'), 'utf8'), readFileSync(join(repo, 'b.txt'), 'utf8')]).toEqual(['a1\n', 'b0\n']);
  }, 120_000);

  it('answers bad calls with a short error the model can act on, and keeps serving', async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    const { client, session } = await servedWorkspace(repo, stateDir, defer);
    await client.request('harness/turnStarted', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    writeFiles(repo, { 'a.txt': 'A\n' });
    await client.request('harness/turnEnded', { channel: session, turnId: 't1' }, { timeoutMs: 20_000 });
    const mcp = await mcpAgent(repo, stateDir, defer, { through: 'process' });
    expect(await callTool(mcp, 'revert', { turn: 7 })).toMatchObject({ isError: true, text: expect.stringContaining('has no turn 7') });
    expect(await callTool(mcp, 'revert', { lines: '2-3' })).toMatchObject({ isError: true, text: expect.stringContaining('"lines" needs "file"') });
    expect(await callTool(mcp, 'revert', { file: 'a.txt', lines: '3-1' })).toMatchObject({ isError: true, text: expect.stringContaining('"lines" must be') });
    expect(await callTool(mcp, 'show_file_diff', {})).toMatchObject({ isError: true, text: 'show_file_diff: "file" is required' });
    expect(await callTool(mcp, 'undo', { force: true })).toMatchObject({ isError: true, text: expect.stringContaining('unknown argument "force"') });
    expect(await callTool(mcp, 'undo')).toMatchObject({ isError: true, text: 'Nothing to undo.' });
    writeFiles(repo, { 'a.txt': 'edited again\n' });
    const conflict = await callTool(mcp, 'revert', {});
    expect(conflict.isError).toBe(true);
    expect(conflict.text).toContain('a.txt');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('edited again\n');
    expect((await callTool(mcp, 'list_sessions')).data['sessions']).toEqual([expect.objectContaining({ recording: true, turns: 1 })]);
  }, 120_000);

  it('starts a server for the folder when none runs, as the hook does', async ({ temp, defer, expect }) => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    const mcp = await mcpAgent(repo, stateDir, defer, { through: 'process' });
    const listed = await callTool(mcp, 'list_sessions');
    expect(listed.isError).toBe(false);
    const entries = await listServers(stateDir);
    defer(() => {
      for (const e of entries) process.kill(e.pid, 'SIGKILL');
    });
    expect(entries.map((e) => e.directories)).toEqual([[repo]]);
  }, 120_000);
});
