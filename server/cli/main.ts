import { hookCommand } from './hook-command.js';
import { mcpCommand } from './mcp-command.js';
import { importCommand } from './import-command.js';
import { operationCommand } from './operation-command.js';
import { describeError } from './output.js';
import { serve } from './serve.js';
import { forgetCommand, openCommand, sessionsCommand, stopCommand, versionCommand } from './server-commands.js';
import { snapshotCommand } from './snapshot-command.js';
import { UsageError } from './serve-args.js';
import { statusCommand } from './status-command.js';
import { nearest } from './suggest.js';
import { turnCommand } from './turn-command.js';

type Command = (argv: readonly string[]) => Promise<number>;

const CLIENT_COMMANDS: Record<string, Command> = {
  turn: turnCommand,
  status: statusCommand,
  revert: (argv) => operationCommand('revert', argv),
  restore: (argv) => operationCommand('restore', argv),
  discard: (argv) => operationCommand('discard', argv),
  undo: (argv) => operationCommand('undo', argv),
  sessions: sessionsCommand,
  forget: forgetCommand,
  open: openCommand,
  stop: (argv) => stopCommand(argv),
  snapshot: snapshotCommand,
  import: (argv) => importCommand(argv),
  mcp: mcpCommand,
};

/**
 * Command-line entry point. Each subcommand lives in its own module; this
 * file only dispatches on the first argument and turns client-command
 * failures into messages and exit codes (2: usage, 1: failure). With
 * `--json`, failures are JSON on stdout too.
 */
export async function main(argv: string[]): Promise<number | void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage());
    return 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') return versionCommand();
  if (command === 'serve') return serve(rest);
  if (command === 'hook') return hookCommand(rest);
  const client = CLIENT_COMMANDS[command];
  if (!client) {
    const guess = nearest(command, [...Object.keys(CLIENT_COMMANDS), 'serve', 'hook']);
    process.stderr.write(`changeset-server: unknown command "${command}"${guess ? `; did you mean "${guess}"?` : ''}\n\n${usage()}`);
    return 2;
  }
  const json = rest.includes('--json');
  try {
    return await client(rest);
  } catch (error) {
    const described = describeError(error);
    const code = error instanceof UsageError ? 2 : 1;
    if (json) {
      process.stdout.write(`${JSON.stringify({ error: described })}\n`);
    } else {
      const hint = error instanceof UsageError ? ` (see "changeset-server ${command} --help")` : '';
      process.stderr.write(`changeset-server ${command}: ${described.message}${hint}\n`);
    }
    return code;
  }
}

function usage(): string {
  return [
    'Usage: changeset-server <command> [options]',
    '',
    'Recording:',
    '  serve [dir...]     record the directories turn by turn and serve the changes (AHP 0.6, web viewer)',
    '  turn start|end     mark the start or end of an agent turn',
    '  hook AGENT         handle one hook event (JSON on stdin) of claude (Claude Code), cursor or gemini (Gemini CLI)',
    '  mcp                an MCP server for the agent: look at and undo its own work',
    '',
    'Looking:',
    '  status             the viewer link, the sessions, the turn being recorded and the last turns',
    '  sessions           sessions recording now and past ones',
    '  open               print the viewer link and open it in the browser',
    '',
    'Changing files back (each takes --dry-run):',
    '  revert             revert a turn, a file of it, or a line range',
    '  restore            put every file back as it was when a turn started',
    '  discard            discard uncommitted changes',
    '  undo               undo the last revert, restore or discard',
    '',
    'Housekeeping:',
    '  forget SESSION     remove a session and its history for good',
    '  stop               stop the server recording this folder (sessions stay resumable)',
    '  snapshot <dir>     record a directory as a git tree in its shadow store and print the tree id',
    '  import URL         bring back sessions mirrored to a git remote (serve --mirror) on another machine',
    '  --version          print the version',
    '',
    'Run "changeset-server <command> --help" for its options.',
    '',
  ].join('\n');
}
