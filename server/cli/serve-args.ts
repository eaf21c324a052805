import { UsageError } from '../client/errors.js';
import { resolve } from 'node:path';
import { parseByteSize, parseRetainDays, RETAIN_DAYS_ENV, STORE_BUDGET_ENV } from './store-settings.js';
import { nearest } from './suggest.js';

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
  /** Bearer token from `--token`. */
  token: string | undefined;
  /** Accept clients without a token (loopback hosts only). */
  noAuth: boolean;
  /** Origins (besides the server's own) whose pages may connect. */
  allowedOrigins: string[];
  /** Directory of the built web viewer, when given. */
  viewerDir: string | undefined;
  /** Start without a session over the directories (sessions come from `createSession`, e.g. the Claude Code hook). */
  noSession: boolean;
  /** Stop after this many milliseconds with no turn being recorded and no client connected; undefined: never. */
  idleTimeoutMs: number | undefined;
  /** Git remote (smart HTTP) the checkpoints are mirrored to, from `--mirror`. */
  mirror: string | undefined;
  /** Byte budget of each workspace's store, from `--store-budget` or the environment; undefined: the default (2 GiB). */
  storeBudgetBytes: number | undefined;
  /** Days ended sessions are kept, from `--retain-days` or the environment; undefined: no age limit. */
  retainDays: number | undefined;
  /** Serve the content of presented files outside the working directories. */
  serveOutsideFiles: boolean;
  /** Attach a Git AI Standard authorship note to each new commit (`--notes`, or `CHANGESET_SERVER_NOTES=1`). */
  notes: boolean;
  /** Print usage and exit. */
  help: boolean;
}

/** The environment variable that turns `--notes` on (`1`) when the flag is not given. */
const NOTES_ENV = 'CHANGESET_SERVER_NOTES';

/** Default quiet period for `--auto-turns` without a value. */
export const DEFAULT_AUTO_TURNS_MS = 3000;

export const SERVE_USAGE = [
  'Usage: changeset-server serve [dir...] [options]',
  '',
  'Records the directories (default: the current one) turn by turn and serves',
  'the changes over AHP 0.6 (WebSocket) and a web viewer.',
  '',
  'Options:',
  '  --host HOST           interface to listen on (default 127.0.0.1)',
  '  --port PORT           TCP port, 0 for a free one (default 0)',
  '  --state-dir DIR       where the server keeps its data',
  '                        (default $XDG_STATE_HOME/changeset-server or ~/.local/state/changeset-server)',
  '  --json                print the ready line as one JSON object: {"url", "token", "sessions", "viewer"}',
  '  --auto-turns[=MS]     without a harness, record a turn per burst of file changes,',
  `                        ending after MS milliseconds without changes (default ${DEFAULT_AUTO_TURNS_MS})`,
  '  --token TOKEN         bearer token clients must present (default: $CHANGESET_SERVER_TOKEN, else random)',
  '  --no-auth             accept clients without a token (loopback hosts only)',
  '  --allow-origin ORIGIN let pages from ORIGIN connect (repeatable), e.g. http://localhost:5173',
  '  --viewer-dir DIR      serve the web viewer from DIR (default: the built dist/viewer)',
  '  --no-session          start without a session; clients create them with createSession',
  '  --idle-timeout MS     stop after MS milliseconds with no turn being recorded and no client connected',
  '                        (sessions stay resumable; what the Claude Code hook starts uses 600000)',
  '  --mirror URL          push the checkpoints of every session to this git remote (smart HTTP) after each turn',
  "                        or to a bare repository's path or file:// URL on this machine",
  '                        (default $CHANGESET_SERVER_MIRROR; token from $CHANGESET_SERVER_MIRROR_TOKEN)',
  "  --store-budget SIZE   bytes each workspace's store may take, e.g. 500MB or 2GiB (default 2GiB,",
  `                        or $${STORE_BUDGET_ENV}); the oldest ended sessions go first`,
  '  --retain-days DAYS    drop ended sessions DAYS after they ended, whatever the budget',
  `                        (default: kept until the budget needs the space, or $${RETAIN_DAYS_ENV})`,
  '  --serve-outside-files let clients read files an agent presents from outside the working',
  '                        directories (default: listed, content refused)',
  '  --notes               attach who wrote each line to every new commit as a git note under',
  `                        refs/notes/ai (Git AI Standard 3.0.0); writes into the repository (default off, or $${NOTES_ENV}=1)`,
  '  -h, --help            show this help',
  '',
].join('\n');

/**
 * Parses `serve` arguments (after the command name); settings not given as
 * flags come from `env` when it has them. Throws {@link UsageError}.
 */
export function parseServeArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ServeArgs {
  const args: ServeArgs = {
    directories: [],
    host: '127.0.0.1',
    port: 0,
    stateDir: undefined,
    json: false,
    autoTurnsMs: undefined,
    token: undefined,
    noAuth: false,
    allowedOrigins: [],
    viewerDir: undefined,
    noSession: false,
    idleTimeoutMs: undefined,
    mirror: undefined,
    storeBudgetBytes: undefined,
    retainDays: undefined,
    serveOutsideFiles: false,
    notes: false,
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
    const flag = (): true => {
      if (inline !== undefined) throw new UsageError(`${name} takes no value`);
      return true;
    };
    const nonEmpty = (): string => {
      const v = value();
      if (v.length === 0) throw new UsageError(`${name} must not be empty`);
      return v;
    };
    switch (name) {
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '--json':
        args.json = flag();
        break;
      case '--host':
        args.host = nonEmpty();
        break;
      case '--port':
        args.port = parsePort(value());
        break;
      case '--state-dir':
        args.stateDir = resolve(nonEmpty());
        break;
      case '--auto-turns':
        args.autoTurnsMs = inline === undefined ? DEFAULT_AUTO_TURNS_MS : parseMilliseconds(inline);
        break;
      case '--token':
        args.token = nonEmpty();
        break;
      case '--no-auth':
        args.noAuth = flag();
        break;
      case '--allow-origin':
        args.allowedOrigins.push(nonEmpty());
        break;
      case '--viewer-dir':
        args.viewerDir = resolve(nonEmpty());
        break;
      case '--no-session':
        args.noSession = flag();
        break;
      case '--idle-timeout':
        args.idleTimeoutMs = parsePositiveMs(name, value());
        break;
      case '--mirror':
        args.mirror = nonEmpty();
        break;
      case '--store-budget':
        args.storeBudgetBytes = setting(name, parseByteSize(value()));
        break;
      case '--retain-days':
        args.retainDays = setting(name, parseRetainDays(value()));
        break;
      case '--serve-outside-files':
        args.serveOutsideFiles = flag();
        break;
      case '--notes':
        args.notes = flag();
        break;
      default: {
        const guess = nearest(
          name,
          [...SERVE_USAGE.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!),
        );
        throw new UsageError(`unknown option ${name}${guess ? `; did you mean ${guess}?` : ''}`);
      }
    }
  }
  const notesEnv = env[NOTES_ENV];
  if (!args.notes && notesEnv !== undefined && notesEnv !== '') {
    if (notesEnv !== '1' && notesEnv !== '0') throw new UsageError(`${NOTES_ENV} must be 1 or 0, got "${notesEnv}"`);
    args.notes = notesEnv === '1';
  }
  const budgetEnv = env[STORE_BUDGET_ENV];
  if (args.storeBudgetBytes === undefined && budgetEnv) args.storeBudgetBytes = setting(STORE_BUDGET_ENV, parseByteSize(budgetEnv));
  const daysEnv = env[RETAIN_DAYS_ENV];
  if (args.retainDays === undefined && daysEnv) args.retainDays = setting(RETAIN_DAYS_ENV, parseRetainDays(daysEnv));
  return args;
}

/** A parsed setting, or a usage error naming where the bad value came from. */
function setting(source: string, parsed: number | string): number {
  if (typeof parsed === 'string') throw new UsageError(`${source} must be ${parsed}`);
  return parsed;
}

function parsePort(text: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`--port must be an integer from 0 to 65535, got "${text}"`);
  const port = Number(text);
  if (port > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got "${text}"`);
  return port;
}

function parsePositiveMs(name: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${name} must be a positive number of milliseconds, got "${text}"`);
  return Number(text);
}

function parseMilliseconds(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--auto-turns must be a positive number of milliseconds, got "${text}"`);
  return Number(text);
}
