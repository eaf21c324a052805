import { serveMcpOverStdio } from '../mcp/mcp-server.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { realDir } from '../client/target.js';

export const MCP_USAGE = [
  'Usage: changeset-server mcp [options]',
  '',
  'An MCP server on stdin/stdout for the agent working in this directory: tools',
  "to list its sessions and turns, show what a turn changed and one file's diff,",
  'revert a turn, a file or lines (with a dry run), restore a checkpoint, and undo.',
  'It uses the changeset-server recording this directory, and starts one in the',
  'background when none runs. See docs/mcp.md for agent configuration.',
  '',
  TARGET_USAGE,
  '',
].join('\n');

/** Runs `mcp`: serves until the agent closes stdin. */
export async function mcpCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, []);
  if (values.help) {
    process.stdout.write(MCP_USAGE);
    return 0;
  }
  await serveMcpOverStdio({ ...targetOf(values), cwd: realDir(undefined) });
  return 0;
}
