import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import type { LineAuthor, ProvenanceResult } from '../../protocol/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import { TestClient } from '../helpers/client.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { run, startServe, type ServeProcess } from '../cli/serve-process.js';
import { hookInProcess } from './hook-fixtures.js';

/** Each agent's session, in its own workspace. */
const SESSION_IDS = {
  claude: '8d2e4f60-1b3c-4d5e-9f70-a1b2c3d4e5f1',
  gemini: '8d2e4f60-1b3c-4d5e-9f70-a1b2c3d4e5f2',
  cursor: '8d2e4f60-1b3c-4d5e-9f70-a1b2c3d4e5f3',
} as const;
type Agent = keyof typeof SESSION_IDS;

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

// Each agent's test has its own workspace and session, recorded by the one server of the file: they run side by side.
describe.concurrent('a shell command run by the agent', { timeout: 120_000 }, () => {
  const files = new TempDirs();
  const workspaces = new Map<Agent, string>();
  let state: string;
  let serve: ServeProcess;
  beforeAll(async () => {
    for (const agent of Object.keys(SESSION_IDS) as Agent[]) {
      workspaces.set(agent, makeRepo(files.make(`cs-shell-ws-${agent}-`), { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }));
    }
    state = files.make('cs-shell-state-');
    serve = await startServe([...workspaces.values(), '--no-session', '--state-dir', state]);
  });
  afterAll(async () => {
    await serve?.stop();
    files.cleanup();
  });

  /**
   * The workspace of `agent` with its server running, the hook of `agent` (the shell command's event through the binary
   * as the agent runs it, the others in the test's process: the same answer), and a client to ask who wrote what.
   */
  async function recording(agent: Agent, defer: (cleanup: () => unknown) => void) {
    const workspace = workspaces.get(agent)!;
    const channel = `ahp-session:/${SESSION_IDS[agent]}`;
    const hook = async (event: Record<string, unknown>, through: 'binary' | 'process' = 'process'): Promise<string> => {
      const args = ['hook', agent, '--state-dir', state];
      const input = JSON.stringify(event);
      const result = through === 'binary' ? await run(args, { input, cwd: workspace }) : await hookInProcess(args, input);
      if (result.code !== 0 || result.stderr !== '') throw new Error(`hook ${agent} ${String(event['hook_event_name'])}: ${JSON.stringify(result)}`);
      return result.stdout;
    };
    const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
    defer(() => client.close());
    await client.initialize();
    const blame = async (path: string) => perLine(await client.request<ProvenanceResult>('provenance/lines', { session: channel, path }));
    const steps = async () => {
      const status = await client.request<StatusResult>('harness/status', { channel });
      return status.sessions[0]!.turns.map((t) => t.steps?.map((s) => [s.tool, s.paths]));
    };
    return { workspace, hook, blame, steps };
  }

  it("puts a Claude Code Bash command's edits down to its step, and a file the Edit before it did not name to the user", async ({ defer, expect }) => {
    const { workspace, hook, blame, steps } = await recording('claude', defer);
    const event = (name: string, fields: Record<string, unknown> = {}) => ({
      session_id: SESSION_IDS.claude,
      cwd: workspace,
      hook_event_name: name,
      ...fields,
    });
    const tool = (name: string, input: Record<string, unknown>) => event('PreToolUse', { tool_name: name, tool_input: input });

    await hook(event('UserPromptSubmit', { prompt: 'Tidy a.txt and regenerate b.txt' }));
    await hook(tool('Edit', { file_path: join(workspace, 'a.txt'), old_string: 'a', new_string: 'A' }));
    writeFileSync(join(workspace, 'a.txt'), 'A\n');
    // The user saves c.txt while the Edit, which names a.txt only, runs.
    writeFileSync(join(workspace, 'c.txt'), 'c\nmine\n');
    await hook(tool('Bash', { command: 'node gen.js > b.txt', description: 'Regenerate b.txt' }), 'binary');
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

  it("puts a Gemini CLI shell command's edits down to its step", async ({ defer, expect }) => {
    const { workspace, hook, blame, steps } = await recording('gemini', defer);
    const event = (name: string, fields: Record<string, unknown> = {}) => ({
      session_id: SESSION_IDS.gemini,
      cwd: workspace,
      hook_event_name: name,
      timestamp: new Date().toISOString(),
      ...fields,
    });
    expect(await hook(event('BeforeAgent', { prompt: 'Regenerate b.txt' }))).toBe('{}\n');
    expect(await hook(event('BeforeTool', { tool_name: 'run_shell_command', tool_input: { command: 'node gen.js > b.txt' } }), 'binary')).toBe('{}\n');
    writeFileSync(join(workspace, 'b.txt'), 'b\ngenerated\n');
    await hook(event('AfterAgent', { prompt: 'Regenerate b.txt', prompt_response: 'Done.' }));

    expect(await steps()).toEqual([[['run_shell_command', []]]]);
    expect(await blame('b.txt')).toEqual(['before recording', 'turn 1 step 1 (run_shell_command)']);
  });

  it("puts a Cursor shell command's edits down to its step, and grants it nothing", async ({ defer, expect }) => {
    const { workspace, hook, blame, steps } = await recording('cursor', defer);
    const event = (name: string, fields: Record<string, unknown> = {}) => ({
      conversation_id: SESSION_IDS.cursor,
      generation_id: 'g1',
      hook_event_name: name,
      workspace_roots: [workspace],
      ...fields,
    });
    expect(await hook(event('beforeSubmitPrompt', { prompt: 'Regenerate b.txt', attachments: [] }))).toBe('{"continue":true}\n');
    // No permission in the answer: the approvals the user configured for shell commands apply.
    expect(await hook(event('beforeShellExecution', { command: 'node gen.js > b.txt', cwd: workspace }), 'binary')).toBe('{}\n');
    writeFileSync(join(workspace, 'b.txt'), 'b\ngenerated\n');
    expect(await hook(event('stop', { status: 'completed', loop_count: 0 }))).toBe('{}\n');

    expect(await steps()).toEqual([[['Shell', []]]]);
    expect(await blame('b.txt')).toEqual(['before recording', 'turn 1 step 1 (Shell)']);
  });
});
