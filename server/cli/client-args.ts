import { parseArgs, type ParseArgsConfig } from 'node:util';

import { nearest } from './suggest.js';
import type { TargetOptions } from '../client/target.js';
import { UsageError } from '../client/errors.js';

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Options every client command takes. */
const TARGET_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'state-dir': { type: 'string' },
  session: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpec;

export const TARGET_USAGE = [
  'Finding the server:',
  "  --url URL            the server's WebSocket URL (default: the running server recording this directory)",
  "  --token TOKEN        bearer token (default: $CHANGESET_SERVER_TOKEN, else the registry's)",
  '  --state-dir DIR      where running servers register (default: the state directory)',
  '  --session URI        the session (default: the one recording this directory)',
  '  --json               print everything, errors included, as JSON on stdout',
].join('\n');

/** Values of every option a client command may take (string options beyond {@link TARGET_OPTIONS}). */
export interface ClientValues {
  url?: string;
  token?: string;
  'state-dir'?: string;
  session?: string;
  json?: boolean;
  help?: boolean;
  message?: string;
  id?: string;
  state?: string;
  turns?: string;
  turn?: string;
  file?: string;
  lines?: string;
  side?: string;
  'dry-run'?: boolean;
  'and-turns'?: boolean;
  step?: string;
  'allow-outside-symlinks'?: boolean;
  yes?: boolean;
  note?: string;
  all?: boolean;
  before?: boolean;
}

type ExtraOption = Exclude<keyof ClientValues, keyof typeof TARGET_OPTIONS>;
const BOOLEAN_OPTIONS: ReadonlySet<string> = new Set(['dry-run', 'and-turns', 'allow-outside-symlinks', 'yes', 'all', 'before']);

/** Parses a client command's arguments (the target options plus `extra` options); throws {@link UsageError}. */
export function parseClientArgs(
  argv: readonly string[],
  extra: readonly ExtraOption[],
  opts: { positionals?: number; without?: readonly (keyof typeof TARGET_OPTIONS)[] } = {},
): { values: ClientValues; positionals: string[] } {
  const options: OptionSpec = { ...TARGET_OPTIONS };
  for (const name of opts.without ?? []) delete options[name];
  for (const name of extra) options[name] = { type: BOOLEAN_OPTIONS.has(name) ? 'boolean' : 'string' };
  try {
    // `--turn -1` names the last turn; parseArgs would take `-1` for an option.
    const args = argv.flatMap((a, i) =>
      a === '--turn' && /^-\d+$/.test(argv[i + 1] ?? '') ? [] : /^-\d+$/.test(a) && argv[i - 1] === '--turn' ? [`--turn=${a}`] : [a],
    );
    const { values, positionals } = parseArgs({ args, options, allowPositionals: (opts.positionals ?? 0) > 0, strict: true });
    if (positionals.length > (opts.positionals ?? 0)) throw new UsageError(`unexpected argument "${positionals[opts.positionals ?? 0]}"`);
    return { values: values as ClientValues, positionals };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = (error as Error).message;
    const unknown = /Unknown option '(--?[^']+)'/.exec(message);
    if (unknown) {
      const names = Object.keys(options).map((n) => `--${n}`);
      const typed = unknown[1]!.split('=')[0]!;
      const guess = nearest(typed, names);
      throw new UsageError(`unknown option ${typed}${guess ? `; did you mean ${guess}?` : ''}`);
    }
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

/** The {@link TargetOptions} in parsed values. */
export function targetOf(values: {
  url?: string | undefined;
  token?: string | undefined;
  'state-dir'?: string | undefined;
  session?: string | undefined;
}): TargetOptions {
  const out: TargetOptions = {};
  if (values.url !== undefined) out.url = values.url;
  if (values.token !== undefined) out.token = values.token;
  if (values['state-dir'] !== undefined) out.stateDir = values['state-dir'];
  if (values.session !== undefined) out.session = values.session;
  return out;
}
