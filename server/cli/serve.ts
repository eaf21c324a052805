import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ChangesetService } from '../service.js';

/** Parsed `serve` command line. */
export interface ServeArgs {
  /** Workspace directories to serve (absolute). */
  directories: string[];
  /** Interface to listen on. */
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Server state directory, when given. */
  stateDir: string | undefined;
  /** Print the ready line as JSON. */
  json: boolean;
  /** Milliseconds of quiet that end an automatic turn; undefined when automatic turns are off. */
  autoTurnsMs: number | undefined;
  /** Print usage and exit. */
  help: boolean;
}

/** A command-line mistake; exits with code 2 after printing the usage. */
export class UsageError extends Error {}

/** Default quiet period for `--auto-turns` without a value. */
export const DEFAULT_AUTO_TURNS_MS = 2000;

export const SERVE_USAGE = [
  'Usage: changeset-server serve [dir...] [options]',
  '',
  'Serves the directories over AHP 0.6 (WebSocket).',
  '',
  'Options:',
  '  --host HOST          interface to listen on (default 127.0.0.1)',
  '  --port PORT          TCP port, 0 for a free one (default 0)',
  '  --state-dir DIR      where the server keeps its own data',
  '  --json               print the ready line as one JSON object: {"url", "sessions"}',
  '  --auto-turns[=MS]    end a turn after MS milliseconds without file changes',
  '  -h, --help           show this help',
  '',
].join('\n');

/** Parses `serve` arguments (after the command name). Throws {@link UsageError}. */
export function parseServeArgs(argv: readonly string[]): ServeArgs {
  const args: ServeArgs = {
    directories: [],
    host: '127.0.0.1',
    port: 0,
    stateDir: undefined,
    json: false,
    autoTurnsMs: undefined,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('-') || arg === '-') {
      args.directories.push(resolve(arg));
      continue;
    }
    if (arg === '--') {
      for (const rest of argv.slice(i + 1)) args.directories.push(resolve(rest));
      break;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${name} needs a value`);
      i += 1;
      return next;
    };
    switch (name) {
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '--json':
        if (inline !== undefined) throw new UsageError('--json takes no value');
        args.json = true;
        break;
      case '--host': {
        const host = value();
        if (host.length === 0) throw new UsageError('--host must not be empty');
        args.host = host;
        break;
      }
      case '--port':
        args.port = parsePort(value());
        break;
      case '--state-dir': {
        const dir = value();
        if (dir.length === 0) throw new UsageError('--state-dir must not be empty');
        args.stateDir = resolve(dir);
        break;
      }
      case '--auto-turns':
        args.autoTurnsMs = inline === undefined ? DEFAULT_AUTO_TURNS_MS : parseMilliseconds(inline);
        break;
      default:
        throw new UsageError(`unknown option ${name}`);
    }
  }
  return args;
}

function parsePort(text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`--port must be an integer from 0 to 65535, got "${text}"`);
  const port = Number(text);
  if (port > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got "${text}"`);
  return port;
}

function parseMilliseconds(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--auto-turns must be a positive number of milliseconds, got "${text}"`);
  return Number(text);
}

/**
 * `changeset-server serve`: starts the server, prints one ready line and
 * runs until SIGINT or SIGTERM, then stops cleanly (exit code 0).
 */
export async function serve(argv: readonly string[]): Promise<number> {
  let args: ServeArgs;
  try {
    args = parseServeArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`changeset-server serve: ${err.message}\n\n${SERVE_USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  for (const dir of args.directories) {
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) {
      process.stderr.write(`changeset-server serve: not a directory: ${dir}\n`);
      return 2;
    }
  }

  // Handlers go in before anything is printed, so a signal sent right after
  // the ready line is never handled by the default (kill) action.
  const stopRequested = new Promise<void>((resolveStop) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveStop();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

  if (args.directories.length === 0) args.directories.push(resolve('.'));
  const service = new ChangesetService({
    host: args.host,
    port: args.port,
    ...(args.stateDir ? { stateDir: args.stateDir } : {}),
  });
  let url: string;
  try {
    ({ url } = await service.start());
  } catch (err) {
    process.stderr.write(`changeset-server serve: cannot listen on ${args.host}:${args.port}: ${(err as Error).message}\n`);
    return 1;
  }
  let sessions: string[];
  try {
    sessions = [(await service.openWorkspace(args.directories)).uri];
  } catch (err) {
    process.stderr.write(`changeset-server serve: cannot record ${args.directories.join(', ')}: ${(err as Error).message}\n`);
    await service.stop();
    return 1;
  }
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ url, sessions })}\n`);
  } else {
    const dirs = args.directories.length === 1 ? '1 directory' : `${args.directories.length} directories`;
    process.stdout.write(`changeset-server listening on ${url} (${dirs}, ${sessions.length} sessions)\n`);
  }

  await stopRequested;
  await service.stop();
  return 0;
}
