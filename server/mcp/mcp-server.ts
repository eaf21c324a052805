import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_HINTS } from '../client/hints.js';
import { describeError } from '../client/output.js';
import { packageVersion } from '../client/package-root.js';
import { connect, type TargetOptions } from '../client/target.js';
import { argumentProblem, CHANGESET_TOOLS, type ToolArguments } from './tools.js';

/**
 * An MCP server through which an agent looks at and undoes its own recorded
 * work (`serveMcpOverStdio` connects it to stdin/stdout; the tests connect it
 * in their own process too). It is a thin client of the changeset-server
 * recording the agent's folder (started in the background when none runs, as
 * the hook does): one source of truth, the same guarantees. Each tool call
 * opens its own connection, so a server restarted meanwhile is simply found
 * again.
 */
export function createMcpServer(target: TargetOptions & { cwd: string }): Server {
  const server = new Server(
    { name: 'changeset-server', version: packageVersion() ?? '0.0.0' },
    {
      capabilities: { tools: {} },
      instructions:
        'changeset-server records what you change in this workspace, turn by turn (one turn per prompt). Use list_turns and show_changes to see what you did, show_file_diff for one file, and revert / restore_checkpoint to undo it (dry_run first when unsure); undo reverses the last of those. list_comments shows the comments a reviewer left on your changes: address the open ones, then mark each addressed with resolve_comment and a note of what you did.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: CHANGESET_TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: {
        title: tool.title,
        readOnlyHint: tool.readOnly ?? !tool.destructive,
        destructiveHint: tool.destructive,
        idempotentHint: !tool.destructive,
        openWorldHint: false,
      },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = CHANGESET_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) return failure(`unknown tool "${request.params.name}"; the tools are ${CHANGESET_TOOLS.map((t) => t.name).join(', ')}`);
    const problem = argumentProblem(tool, request.params.arguments);
    if (problem) return failure(`${tool.name}: ${problem}`);
    try {
      const { client } = await connect({ ...target, startServer: true });
      try {
        const result = (await tool.run((request.params.arguments ?? {}) as ToolArguments, { client, cwd: target.cwd })) as Record<string, unknown>;
        return { content: [{ type: 'text', text: JSON.stringify(result, null, 1) }], structuredContent: result };
      } finally {
        await client.close();
      }
    } catch (error) {
      const described = describeError(error, MCP_HINTS);
      return failure(described.message, typeof described.code === 'number' ? described.code : undefined);
    }
  });
  return server;
}

/** Serves MCP on stdin/stdout until the client goes away. */
export async function serveMcpOverStdio(target: TargetOptions & { cwd: string }): Promise<void> {
  const server = createMcpServer(target);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  await closed;
}

function failure(message: string, code?: number): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], ...(code !== undefined ? { structuredContent: { error: { code, message } } } : {}) };
}
