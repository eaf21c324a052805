import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/cli-in-process.js';
import { TestClient } from '../helpers/client.js';
import { protocolWords, proseOf, type WordProblem } from '../helpers/protocol-words.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { BIN, startServe, stopRegistered, type ServeProcess } from './serve-process.js';

/**
 * Every message a person reads from the command line (its text, and the
 * prose of its --json answers) and an agent reads from the MCP tools (their
 * answers' prose and their errors), collected over a realistic session —
 * turns with steps, a hand edit, dry runs, operations, undo, mistakes made
 * on purpose — and none may speak the protocol. The commands run in the
 * test's process (test/helpers/cli-in-process.ts), the MCP server as a
 * process of its own.
 */
describe('the words people and agents read', () => {
  const temp = new TempDirs();
  let serve: ServeProcess;
  let workspace: string;
  let state: string;
  let harness: TestClient;
  const sessionIds = new Set<string>();
  const said: { where: string; text: string }[] = [];

  const cli = (...args: string[]) => run([...args, '--state-dir', state], { cwd: workspace });

  /** Runs a command in text and in --json, keeping everything it says. */
  async function both(...args: string[]): Promise<void> {
    const text = await cli(...args);
    said.push({ where: args.join(' '), text: `${text.stdout}\n${text.stderr}` });
    const json = await cli(...args, '--json');
    const where = `${args.join(' ')} --json`;
    said.push({ where, text: json.stderr });
    for (const line of json.stdout.split('\n').filter(Boolean)) {
      for (const prose of proseOf(JSON.parse(line) as unknown)) said.push({ where, text: prose });
    }
  }

  beforeAll(async () => {
    workspace = makeRepo(temp.make('cs-words-ws-'), { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n', 'notes.md': '# notes\n' });
    state = temp.make('cs-words-state-');
    serve = await startServe([workspace, '--state-dir', state]);
    const session = serve.ready.sessions[0]!;
    sessionIds.add(session.replace('ahp-session:/', ''));
    harness = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    await harness.initialize();
    // Turn 1, as an agent's hook records it: two tool calls (steps), the server picks the turn id.
    const { turnId } = await harness.request<{ turnId: string }>('harness/turnStarted', { channel: session, message: 'Rework a.txt' }, { timeoutMs: 30_000 });
    await harness.request('harness/beforeEdit', { channel: session, turnId, paths: ['a.txt'], tool: 'Edit' }, { timeoutMs: 30_000 });
    writeFileSync(join(workspace, 'a.txt'), 'one\nTWO\nthree\n');
    await harness.request('harness/beforeEdit', { channel: session, turnId, paths: ['c.txt'], tool: 'Write' }, { timeoutMs: 30_000 });
    writeFileSync(join(workspace, 'c.txt'), 'new\n');
    await harness.request('harness/turnEnded', { channel: session, turnId }, { timeoutMs: 60_000 });
    // Turn 2 from the shell.
    expect((await cli('turn', 'start', '--message', 'Touch b')).code).toBe(0);
    writeFileSync(join(workspace, 'b.txt'), 'b\nmore\n');
    said.push({ where: 'turn end', text: JSON.stringify(await cli('turn', 'end')) });
    // A hand edit after the last turn.
    writeFileSync(join(workspace, 'notes.md'), '# notes\nby hand\n');
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
    await serve?.stop('SIGKILL');
    await stopRegistered(state);
    temp.cleanup();
  });

  function problems(): (WordProblem & { where: string })[] {
    return said.flatMap(({ where, text }) => protocolWords(text, sessionIds).map((p) => ({ ...p, where })));
  }

  it('the checker flags the words people were shown before', () => {
    const seen = [
      '_meta.step: turn "01M8RTC1ZJ4S9Q8W2A1B3C4D5E" has no step 5 (it has none)',
      'Undid restore-checkpoint: put back 6 files',
      'Restored 5 files to the start of turn "01M8RT3Y4Q1W2E3R4T5Y6V7X8Z"',
      '{"status":65}',
      '1 turns, 1 files',
      'session: ahp-session:/01M8T46DSY4X7W3CNR5161QKE4',
      'start one with "changeset-server serve" (or "npm start")',
    ];
    for (const text of seen) expect(protocolWords(text), text).not.toEqual([]);
    expect(protocolWords('turn 1 has no step 5 (it recorded no steps)')).toEqual([]);
  });

  it('the command line speaks in turn numbers and file names, text and --json alike', async () => {
    await both('status');
    await both('sessions');
    await both('revert', '--turn', '2', '--dry-run');
    await both('revert', '--turn', '1', '--file', 'a.txt', '--lines', '2', '--dry-run');
    await both('restore', '--turn', '1', '--dry-run');
    await both('restore', '--turn', '1', '--step', '2', '--dry-run');
    await both('discard', '--file', 'notes.md', '--dry-run');
    // Mistakes, on purpose.
    await both('restore', '--turn', '1', '--step', '5');
    await both('restore', '--turn', '2', '--step', '1');
    await both('revert', '--turn', '9');
    await both('revert', '--turn', 'nope');
    await both('revert', '--turn', '1', '--file', 'missing.txt');
    await both('revert', '--turn', '1', '--file', 'a.txt', '--lines', '40-41');
    await both('discard');
    await both('turn', 'end');
    await both('status', '--bogus');
    await both('forget', '--session', 'x');
    // Operations and their undo, each said in words.
    await both('revert', '--turn', '2');
    await both('undo', '--dry-run');
    await both('undo');
    await both('restore', '--turn', '1');
    await both('undo');
    await both('redo', '--dry-run');
    // The turn start prints its id on stdout for scripts (TURN=$(...)); what it tells the person is on stderr.
    const started = await cli('turn', 'start', '--message', 'Third');
    said.push({ where: 'turn start (stderr)', text: started.stderr });
    expect(started.stderr).toBe('Started turn 3.\n');
    await both('revert', '--turn', '3');
    await both('status');
    said.push({ where: 'turn end', text: JSON.stringify(await cli('turn', 'end', '--state', 'cancelled')) });
    await both('forget', [...sessionIds][0]!, '--dry-run');
    await both('forget', [...sessionIds][0]!);
    await both('open');
    // Stopped: sessions and status read the store and say so.
    said.push({ where: 'stop', text: JSON.stringify(await cli('stop')) });
    await both('sessions');
    await both('status');
    said.push({ where: 'stop', text: JSON.stringify(await cli('stop')) });
    await both('revert', '--turn', '1', '--url', 'ws://127.0.0.1:9');

    expect(said.length).toBeGreaterThan(80);
    expect(problems()).toEqual([]);
  }, 240_000);

  it("the MCP tools' answers and errors speak in turn numbers and name the tools, not the command line", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [resolve(BIN), 'mcp', '--state-dir', state],
      cwd: workspace,
      stderr: 'ignore',
    });
    const mcp = new Client({ name: 'words-test', version: '1.0.0' });
    await mcp.connect(transport);
    try {
      const texts: { where: string; text: string }[] = [];
      const call = async (name: string, args: Record<string, unknown> = {}): Promise<void> => {
        const result = (await mcp.callTool({ name, arguments: args })) as {
          content: { text: string }[];
          structuredContent?: unknown;
          isError?: boolean;
        };
        const where = `${name} ${JSON.stringify(args)}`;
        if (result.isError) for (const c of result.content) texts.push({ where, text: c.text });
        for (const prose of proseOf(result.structuredContent)) texts.push({ where, text: prose });
      };
      const { tools } = await mcp.listTools();
      for (const tool of tools) texts.push({ where: `${tool.name} description`, text: tool.description ?? '' });
      await call('list_sessions');
      await call('list_turns');
      await call('show_changes', { turn: 1 });
      await call('show_file_diff', { file: 'a.txt', turn: 1 });
      await call('revert', { turn: 2, dry_run: true });
      await call('revert', { turn: 2 });
      await call('undo', { dry_run: true });
      await call('undo');
      await call('restore_checkpoint', { turn: 1, step: 1, dry_run: true });
      // Mistakes, on purpose.
      await call('restore_checkpoint', { turn: 1, step: 5 });
      await call('revert', { turn: 9 });
      await call('revert', { turn: 'nope' });
      await call('show_file_diff', { file: 'missing.txt', turn: 1 });
      await call('revert', { turn: 1, file: 'a.txt', lines: '40-41' });
      await call('list_turns', { session: 'nope' });
      await call('redo');
      expect(texts.length).toBeGreaterThan(15);
      const found = texts.flatMap(({ where, text }) => protocolWords(text, sessionIds).map((p) => ({ ...p, where })));
      expect(found).toEqual([]);
      // An agent is sent to its own tools, never to the command line.
      expect(texts.filter((t) => /changeset-server (status|sessions|turn end)/.test(t.text))).toEqual([]);
      expect(texts.find((t) => t.where.startsWith('revert {"turn":9}'))?.text).toContain('list_turns');
      expect(texts.find((t) => t.where.startsWith('revert {"turn":1,"file":"a.txt","lines":"40-41"}'))?.text).toBe(
        '"lines" 40-41: a.txt has 3 lines after the turn',
      );
    } finally {
      await mcp.close();
    }
  }, 180_000);
});
