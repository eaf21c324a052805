import { serve } from './serve.js';

/**
 * Command-line entry point. Each subcommand lives in its own module; this
 * file only dispatches on the first argument.
 */
export async function main(argv: string[]): Promise<number | void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h') {
    process.stdout.write(usage());
    return 0;
  }
  if (command === 'serve') return serve(rest);
  process.stderr.write(`changeset-server: unknown command "${command}"\n\n${usage()}`);
  return 2;
}

function usage(): string {
  return [
    'Usage: changeset-server <command> [options]',
    '',
    'Commands:',
    '  serve [dir...]   serve the directories over AHP 0.6',
    '',
    'Run "changeset-server serve --help" for its options.',
    '',
  ].join('\n');
}
