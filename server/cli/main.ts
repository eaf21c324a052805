type Command = (argv: readonly string[]) => Promise<number | void> | number;

/**
 * Each command's module is loaded only when that command runs: the hook runs
 * at every tool call of an agent and `--version` should answer at once, so
 * neither may pay for loading the server, the MCP SDK or isomorphic-git.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serve,
  hook: async () => (await import('./hook-command.js')).hookCommand,
  turn: async () => (await import('./turn-command.js')).turnCommand,
  status: async () => (await import('./status-command.js')).statusCommand,
  revert: async () => operation('revert'),
  restore: async () => operation('restore'),
  discard: async () => operation('discard'),
  undo: async () => operation('undo'),
  redo: async () => operation('redo'),
  history: async () => (await import('./history-command.js')).historyCommand,
  blame: async () => (await import('./blame-command.js')).blameCommand,
  sessions: async () => (await import('./server-commands.js')).sessionsCommand,
  forget: async () => (await import('./server-commands.js')).forgetCommand,
  open: async () => (await import('./server-commands.js')).openCommand,
  stop: async () => {
    const { stopCommand } = await import('./server-commands.js');
    return (argv) => stopCommand(argv);
  },
  snapshot: async () => (await import('./snapshot-command.js')).snapshotCommand,
  comment: async () => (await import('./comment-command.js')).commentCommand,
  import: async () => {
    const { importCommand } = await import('./import-command.js');
    return (argv) => importCommand(argv);
  },
  mcp: async () => (await import('./mcp-command.js')).mcpCommand,
};

/** Commands whose failures this entry point reports itself (serve and hook report their own). */
const SELF_REPORTING: ReadonlySet<string> = new Set(['serve', 'hook']);

async function operation(kind: 'revert' | 'restore' | 'discard' | 'undo' | 'redo'): Promise<Command> {
  const { operationCommand } = await import('./operation-command.js');
  return (argv) => operationCommand(kind, argv);
}

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
  if (command === '--version' || command === '-V' || command === 'version') return printVersion();
  const load = COMMANDS[command];
  if (!load) {
    const { nearest } = await import('./suggest.js');
    const guess = nearest(command, Object.keys(COMMANDS));
    process.stderr.write(`changeset-server: unknown command "${command}"${guess ? `; did you mean "${guess}"?` : ''}\n\n${usage()}`);
    return 2;
  }
  const run = await load();
  if (SELF_REPORTING.has(command)) return run(rest);
  const json = rest.includes('--json');
  try {
    return await run(rest);
  } catch (error) {
    const [{ describeError }, { UsageError }] = await Promise.all([import('../client/output.js'), import('../client/errors.js')]);
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

async function printVersion(): Promise<number> {
  const { packageVersion } = await import('../client/package-root.js');
  const version = packageVersion();
  if (!version) {
    process.stderr.write('changeset-server version: cannot find the package to read its version\n');
    return 1;
  }
  process.stdout.write(`changeset-server ${version}\n`);
  return 0;
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
    '  comment            leave review comments on lines or turns for the agent; list, resolve, reopen, delete them',
    '  history FILE       every turn and step that changed a file, with its lines added and removed',
    '  blame FILE         who last wrote each line: which turn, agent and step, you, or a commit before recording',
    '',
    'Changing files back (each takes --dry-run):',
    '  revert             revert a turn, a file of it, or a line range',
    '  restore            put every file back as it was when a turn started',
    '  discard            discard uncommitted changes',
    '  undo               undo the last revert, restore or discard',
    '  redo               take back the last undo',
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
