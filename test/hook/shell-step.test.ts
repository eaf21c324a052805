import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';
import type { LineAuthor, ProvenanceResult } from '../../protocol/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import { TestClient } from '../helpers/client.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, type TempDirs } from '../helpers/workspace.js';
import { run, startServe } from '../cli/serve-process.js';

const SESSION_ID = '8d2e4f60-1b3c-4d5e-9f70-a1b2c3d4e5f6';
const CHANNEL = `ahp-session:/${SESSION_ID}`;

/** Each line's author in words: `turn 1 step 2 (Bash)`, `user during turn 1`, `user between turns after 1`, `before recording`. */
function perLine(result: ProvenanceResult): string[] {
  const out: string[] = [];
  for (const r of result.ranges) {
    for (let line = r.startLine; line <= r.endLine; line++) out.push(words(result.authors[r.author]!));
  }
  return out;
}

function words(author: LineAuthor): string {
  switch (author.kind) {
    case 'turn':
      return `turn ${author.turn}${author.step !== undefined ? ` step ${author.step}` : ''}${author.tool ? ` (${author.tool})` : ''}`;
    case 'user':
      return author.when === 'during-turn' ? `user during turn ${author.turn}` : `user between turns after ${author.turn ?? 'none'}`;
    case 'before-recording':
      return 'before recording';
    case 'mixed':
      return 'mixed';
  }
}

// Each test has its own workspace, state directory and server: they run side by side.
describe.concurrent('a shell command run by the agent', { timeout: 120_000 }, () => {
  /** A workspace with a running server, the hook of `agent` as the agent runs it, and a client to ask who wrote what. */
  async function recording(agent: string, temp: TempDirs, defer: (cleanup: () => unknown) => void) {
    const workspace = makeRepo(temp.make('cs-shell-ws-'), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const state = temp.make('cs-shell-state-');
    const serve = await startServe([workspace, '--no-session', '--state-dir', state]);
    defer(() => serve.stop());
    const hook = async (event: Record<string, unknown>): Promise<string> => {
      const result = await run(['hook', agent, '--state-dir', state], { input: JSON.stringify(event), cwd: workspace });
      if (result.code !== 0 || result.stderr !== '') throw new Error(`hook ${agent} ${String(event['hook_event_name'])}: ${JSON.stringify(result)}`);
      return result.stdout;
    };
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    defer(() => client.close());
    await client.initialize();
    const blame = async (path: string) => perLine(await client.request<ProvenanceResult>('provenance/lines', { session: CHANNEL, path }));
    const steps = async () => {
      const status = await client.request<StatusResult>('harness/status', { channel: CHANNEL });
      return status.sessions[0]!.turns.map((t) => t.steps?.map((s) => [s.tool, s.paths]));
    };
    return { workspace, state, hook, blame, steps };
  }

  it("puts a Claude Code Bash command's edits down to its step, and a file the Edit before it did not name to the user", async ({ temp, defer, expect }) => {
    const { workspace, hook, blame, steps } = await recording('claude', temp, defer);
    const event = (name: string, fields: Record<string, unknown> = {}) => ({ session_id: SESSION_ID, cwd: workspace, hook_event_name: name, ...fields });
    const tool = (name: string, input: Record<string, unknown>) => event('PreToolUse', { tool_name: name, tool_input: input });

    await hook(event('UserPromptSubmit', { prompt: 'Tidy a.txt and regenerate b.txt' }));
    await hook(tool('Edit', { file_path: join(workspace, 'a.txt'), old_string: 'a', new_string: 'A' }));
    writeFileSync(join(workspace, 'a.txt'), 'A\n');
    // The user saves c.txt while the Edit, which names a.txt only, runs.
    writeFileSync(join(workspace, 'c.txt'), 'c\nmine\n');
    await hook(tool('Bash', { command: 'node gen.js > b.txt', description: 'Regenerate b.txt' }));
    writeFileSync(join(workspace, 'b.txt'), 'b\ngenerated\n');
    await hook(event('Stop'));

    expect(await steps()).toEqual([
      [
        ['Edit', ['a.txt']],
        ['Bash', []],
      ],
    ]);
    expect(await blame('b.txt')).toEqual(['before recording', 'turn 1 step 2 (Bash)']);
    expect(await blame('a.txt')).toEqual(['turn 1 step 1 (Edit)']);
    expect(await blame('c.txt')).toEqual(['before recording', 'user during turn 1']);

    // A shell command with no turn being recorded records nothing: what it writes is the user's, between turns.
    await hook(tool('Bash', { command: 'echo more >> b.txt' }));
    writeFileSync(join(workspace, 'b.txt'), 'b\ngenerated\nmore\n');
    expect(await steps()).toHaveLength(1);
    expect(await blame('b.txt')).toEqual(['before recording', 'turn 1 step 2 (Bash)', 'user between turns after 1']);
  });

  it("puts a Gemini CLI shell command's edits down to its step", async ({ temp, defer, expect }) => {
    const { workspace, hook, blame, steps } = await recording('gemini', temp, defer);
    const event = (name: string, fields: Record<string, unknown> = {}) => ({
      session_id: SESSION_ID,
      cwd: workspace,
      hook_event_name: name,
      timestamp: new Date().toISOString(),
      ...fields,
    });
    expect(await hook(event('BeforeAgent', { prompt: 'Regenerate b.txt' }))).toBe('{}\n');
    expect(await hook(event('BeforeTool', { tool_name: 'run_shell_command', tool_input: { command: 'node gen.js > b.txt' } }))).toBe('{}\n');
    writeFileSync(join(workspace, 'b.txt'), 'b\ngenerated\n');
    await hook(event('AfterAgent', { prompt: 'Regenerate b.txt', prompt_response: 'Done.' }));

    expect(await steps()).toEqual([[['run_shell_command', []]]]);
    expect(await blame('b.txt')).toEqual(['before recording', 'turn 1 step 1 (run_shell_command)']);
  });

  it("puts a Cursor shell command's edits down to its step, and grants it nothing", async ({ temp, defer, expect }) => {
    const { workspace, hook, blame, steps } = await recording('cursor', temp, defer);
    const event = (name: string, fields: Record<string, unknown> = {}) => ({
      conversation_id: SESSION_ID,
      generation_id: 'g1',
      hook_event_name: name,
      workspace_roots: [workspace],
      ...fields,
    });
    expect(await hook(event('beforeSubmitPrompt', { prompt: 'Regenerate b.txt', attachments: [] }))).toBe('{"continue":true}\n');
    // No permission in the answer: the approvals the user configured for shell commands apply.
    expect(await hook(event('beforeShellExecution', { command: 'node gen.js > b.txt', cwd: workspace }))).toBe('{}\n');
    writeFileSync(join(workspace, 'b.txt'), 'b\ngenerated\n');
    expect(await hook(event('stop', { status: 'completed', loop_count: 0 }))).toBe('{}\n');

    expect(await steps()).toEqual([[['Shell', []]]]);
    expect(await blame('b.txt')).toEqual(['before recording', 'turn 1 step 1 (Shell)']);
  });
});
