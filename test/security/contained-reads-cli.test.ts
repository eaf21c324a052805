import { execFileSync } from 'node:child_process';
import { rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe } from 'vitest';
import { findServerFor } from '../../server/registry/index.js';
import { workspaceLayout } from '../../server/store/index.js';
import { BIN, run, startServe } from '../cli/serve-process.js';
import { TestClient } from '../helpers/client.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, type TempDirs, writeFiles } from '../helpers/workspace.js';
import { stopServer, waitFor } from '../hook/hook-fixtures.js';

const SECRET = 'cli-outside-secret-e04b77';
const PERMISSION_DENIED = -32009;
const SESSION_ID = '6d0c5c2e-27b1-4f0e-9d55-3a7e8c41b2f9';

/** A workspace whose ignored `ignored/config.txt` an agent is about to edit, and a directory outside holding a secret of the same name. */
function workspaceAndOutside(temp: TempDirs): { repo: string; outside: string; state: string } {
  const repo = makeRepo(temp.make('cs-cli-read-repo-'), { '.gitignore': 'ignored\n', 'a.txt': 'a\n' });
  writeFiles(repo, { 'ignored/config.txt': 'inside config\n' });
  const outside = temp.make('cs-cli-read-outside-');
  writeFiles(outside, { 'config.txt': `${SECRET} config\n`, shadow: `${SECRET} shadow\n` });
  return { repo, outside, state: temp.make('cs-cli-read-state-') };
}

function storeObjects(state: string, repo: string): string {
  const shadow = workspaceLayout(state, repo).shadowDir;
  return execFileSync('git', ['--git-dir', shadow, 'cat-file', '--batch-all-objects', '--batch'], { maxBuffer: 256 * 1024 * 1024 }).toString('latin1');
}

// Each test has its own workspace, state directory and server: they run side by side.
describe.concurrent('reads stay contained through the CLI, the Claude Code hook and MCP', () => {
  it('a directory swapped for a link outside between the hook edit event and Stop: nothing from outside in the store or in show_file_diff', async ({
    temp,
    defer,
    expect,
  }) => {
    const { repo, outside, state } = workspaceAndOutside(temp);
    const hook = async (event: Record<string, unknown>, timeout = '10000') => {
      const input = JSON.stringify({ session_id: SESSION_ID, transcript_path: '/nonexistent/transcript.jsonl', cwd: repo, ...event });
      const result = await run(['hook', 'claude', '--state-dir', state, '--timeout', timeout], { input, cwd: repo });
      expect(result, String(event['hook_event_name'])).toMatchObject({ code: 0, stdout: '' });
    };
    await hook({ hook_event_name: 'SessionStart', source: 'startup' }, '30000');
    const entry = await waitFor(() => findServerFor(state, repo), 'the server to register');
    defer(() => stopServer(entry));
    await hook({ hook_event_name: 'UserPromptSubmit', prompt: 'rewrite the config' });
    await hook({ hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(repo, 'ignored/config.txt'), content: 'x' } });
    rmSync(join(repo, 'ignored'), { recursive: true });
    symlinkSync(outside, join(repo, 'ignored'));
    await hook({ hook_event_name: 'Stop', stop_hook_active: false });

    expect(storeObjects(state, repo)).toContain('inside config');
    expect(storeObjects(state, repo)).not.toContain(SECRET);

    const transport = new StdioClientTransport({ command: process.execPath, args: [resolve(BIN), 'mcp', '--state-dir', state], cwd: repo, stderr: 'ignore' });
    const mcp = new Client({ name: 'test-agent', version: '1.0.0' });
    await mcp.connect(transport);
    defer(() => mcp.close());
    const texts: string[] = [];
    for (const [name, args] of [
      ['show_changes', { turn: 'last' }],
      ['show_file_diff', { file: 'ignored/config.txt', turn: 'last' }],
    ] as const) {
      const result = (await mcp.callTool({ name, arguments: args })) as { content: { text: string }[]; structuredContent?: unknown };
      texts.push(JSON.stringify(result));
    }
    expect(texts[0]).toContain('ignored/config.txt');
    expect(texts[1]).toContain('inside config');
    for (const text of texts) expect(text).not.toContain(SECRET);
  }, 120_000);

  it('serve refuses the content of a presented file from outside unless started with --serve-outside-files', async ({ temp, expect }) => {
    const { repo, outside } = workspaceAndOutside(temp);
    const secretPath = join(outside, 'shadow');
    const readPresented = async (flags: string[]) => {
      // Each server has a state directory of its own: the two run side by side.
      const server = await startServe([repo, '--port', '0', '--state-dir', temp.make('cs-cli-read-state-'), ...flags]);
      let client: TestClient | undefined;
      try {
        client = await TestClient.connect(server.ready.url, { token: server.ready.token! });
        await client.initialize();
        const session = server.ready.sessions[0]!;
        const turnId = `t-${flags.length}`;
        await client.request('harness/turnStarted', { channel: session, turnId }, { timeoutMs: 20_000 });
        await client.request('harness/presentFiles', { channel: session, turnId, files: [{ path: secretPath }] });
        const params = { channel: 'ahp-root://', uri: new URL(`file://${secretPath}`).href };
        return flags.length === 0 ? await client.requestError('resourceRead', params) : await client.request<{ data: string }>('resourceRead', params);
      } finally {
        await client?.close();
        await server.stop();
      }
    };
    const [refused, served] = await Promise.all([readPresented([]), readPresented(['--serve-outside-files'])]);
    expect(refused).toMatchObject({ code: PERMISSION_DENIED, data: { reason: 'outside' } });
    expect(JSON.stringify(refused)).not.toContain(SECRET);
    expect(served).toMatchObject({ data: `${SECRET} shadow\n` });
  }, 120_000);
});
