import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { realDir } from '../../server/client/target.js';
import { createMcpServer } from '../../server/mcp/mcp-server.js';
import { removeServerEntry, writeServerEntry } from '../../server/registry/index.js';
import { ChangesetService } from '../../server/service.js';
import { BIN } from '../cli/serve-process.js';
import { TestClient } from './client.js';

/** Runs `cleanup` once the test (or the file) is over; the last given runs first. */
type Defer = (cleanup: () => unknown) => void;

/**
 * The server recording `repo`, as `changeset-server serve REPO --state-dir STATE_DIR` runs it — the service with a token,
 * a session opened over `repo`, its entry in the state directory's registry, where `mcp` finds it — but in the test's
 * process, without starting Node and loading the server again; and a scripted client connected to it. Both are stopped
 * by `defer`. `session` is the session the server opened.
 */
export async function servedWorkspace(repo: string, stateDir: string, defer: Defer): Promise<{ client: TestClient; session: string }> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, security: { host: '127.0.0.1' }, log: () => undefined });
  const { url } = await service.start();
  defer(() => service.stop({ mirrorGraceMs: 0 }));
  const token = service.security!.token!;
  const recording = await service.openWorkspace([repo]);
  await writeServerEntry(stateDir, { pid: process.pid, url, token, viewer: url, directories: [repo], startedAt: new Date().toISOString() });
  defer(() => removeServerEntry(stateDir, process.pid));
  const client = await TestClient.connect(url, { token });
  await client.initialize();
  defer(() => client.close());
  return { client, session: recording.uri };
}

/**
 * An agent's MCP client, talking to `changeset-server mcp` over stdio as agents start it: in the project folder. With
 * `through: 'process'` the same MCP server (`createMcpServer`, what `mcp` serves on stdio) runs in the test's process
 * over an in-memory transport, for the tests where the binary and its stdio are not what is checked: it answers the same,
 * without starting Node and loading the MCP SDK again.
 */
export async function mcpAgent(cwd: string, stateDir: string, defer: Defer, { through = 'binary' }: { through?: 'binary' | 'process' } = {}): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  if (through === 'binary') {
    const transport = new StdioClientTransport({ command: process.execPath, args: [resolve(BIN), 'mcp', '--state-dir', stateDir], cwd, stderr: 'inherit' });
    await client.connect(transport);
    defer(() => client.close());
    return client;
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // As `mcp --state-dir DIR` run in `cwd` builds it.
  const server = createMcpServer({ stateDir, cwd: realDir(cwd) });
  await server.connect(serverSide);
  await client.connect(clientSide);
  defer(async () => {
    await client.close();
    await server.close();
  });
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
