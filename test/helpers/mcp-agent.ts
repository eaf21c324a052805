import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, startServe } from '../cli/serve-process.js';
import { TestClient } from './client.js';

/** Runs `cleanup` once the test (or the file) is over; the last given runs first. */
type Defer = (cleanup: () => unknown) => void;

/**
 * `changeset-server serve` started over `repo` with its own state directory (the built binary: run `npm run build`
 * first), and a scripted client connected to it; both are stopped by `defer`. `session` is the session serve opened.
 */
export async function servedWorkspace(repo: string, stateDir: string, defer: Defer): Promise<{ client: TestClient; session: string }> {
  const server = await startServe([repo, '--port', '0', '--state-dir', stateDir]);
  defer(() => server.stop('SIGKILL'));
  const client = await TestClient.connect(server.ready.url, { token: server.ready.token! });
  await client.initialize();
  defer(() => client.close());
  return { client, session: server.ready.sessions[0]! };
}

/** An agent's MCP client, talking to `changeset-server mcp` over stdio as agents start it: in the project folder. */
export async function mcpAgent(cwd: string, stateDir: string, defer: Defer): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [resolve(BIN), 'mcp', '--state-dir', stateDir], cwd, stderr: 'inherit' });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport);
  defer(() => client.close());
  return client;
}

/** Calls one MCP tool: its structured result, its text (the parts joined by new lines), and whether it is an error. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ data: Record<string, unknown>; text: string; isError: boolean }> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: { type: string; text: string }[];
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
  };
  return { data: result.structuredContent ?? {}, text: result.content.map((c) => c.text).join('\n'), isError: result.isError === true };
}
