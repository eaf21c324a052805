import { RemoteError } from './rpc-client.js';
import { hookCommand } from './hook-command.js';
import { revertCommand } from './revert-command.js';
import { serve } from './serve.js';
import { snapshotCommand } from './snapshot-command.js';
import { UsageError } from './serve-args.js';
import { statusCommand } from './status-command.js';
import { CommandError } from './target.js';
import { turnCommand } from './turn-command.js';

type Command = (argv: readonly string[]) => Promise<number>;

const CLIENT_COMMANDS: Record<string, Command> = {
  turn: turnCommand,
  status: statusCommand,
  revert: revertCommand,
  snapshot: snapshotCommand,
};

/**
 * Command-line entry point. Each subcommand lives in its own module; this
 * file only dispatches on the first argument and turns client-command
 * failures into messages and exit codes (2: usage, 1: failure).
 */
export async function main(argv: string[]): Promise<number | void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h') {
    process.stdout.write(usage());
    return 0;
  }
  if (command === 'serve') return serve(rest);
  if (command === 'hook') return hookCommand(rest);
  const client = CLIENT_COMMANDS[command];
  if (!client) {
    process.stderr.write(`changeset-server: unknown command "${command}"\n\n${usage()}`);
    return 2;
  }
  try {
    return await client(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`changeset-server ${command}: ${error.message} (see "changeset-server ${command} --help")\n`);
      return 2;
    }
    if (error instanceof RemoteError) {
      process.stderr.write(`changeset-server ${command}: ${error.method} failed (${error.code}): ${error.message}\n`);
      return 1;
    }
    if (error instanceof CommandError || error instanceof Error) {
      process.stderr.write(`changeset-server ${command}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function usage(): string {
  return [
    'Usage: changeset-server <command> [options]',
    '',
    'Commands:',
    '  serve [dir...]     record the directories turn by turn and serve the changes (AHP 0.6, web viewer)',
    '  turn start|end     mark the start or end of an agent turn on a running server',
    '  status             sessions, the turn being recorded and the last turns of a running server',
    '  revert             revert a turn, a file of it, or a line range',
    '  hook claude        handle one Claude Code hook event (JSON on stdin)',
    '  snapshot <dir>     record a directory as a git tree in its shadow store and print the tree id',
    '',
    'Run "changeset-server <command> --help" for its options.',
    '',
  ].join('\n');
}
