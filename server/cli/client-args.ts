import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './serve-args.js';
import type { TargetOptions } from './target.js';

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Options every client command takes. */
export const TARGET_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'state-dir': { type: 'string' },
  session: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpec;

export const TARGET_USAGE = [
  'Finding the server:',
  '  --url URL            the server\'s WebSocket URL (default: the running server recording this directory)',
  '  --token TOKEN        bearer token (default: $CHANGESET_SERVER_TOKEN, else the registry\'s)',
  '  --state-dir DIR      where running servers register (default: the state directory)',
  '  --session URI        the session (default: the one recording this directory)',
  '  --json               print the result as JSON',
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
}

type ExtraOption = Exclude<keyof ClientValues, keyof typeof TARGET_OPTIONS>;

/** Parses a client command's arguments (the target options plus `extra` string options); throws {@link UsageError}. */
export function parseClientArgs(argv: readonly string[], extra: readonly ExtraOption[]): { values: ClientValues } {
  const options: OptionSpec = { ...TARGET_OPTIONS };
  for (const name of extra) options[name] = { type: 'string' };
  try {
    const { values } = parseArgs({ args: [...argv], options, allowPositionals: false, strict: true });
    return { values: values as ClientValues };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The {@link TargetOptions} in parsed values. */
export function targetOf(values: { url?: string | undefined; token?: string | undefined; 'state-dir'?: string | undefined; session?: string | undefined }): TargetOptions {
  const out: TargetOptions = {};
  if (values.url !== undefined) out.url = values.url;
  if (values.token !== undefined) out.token = values.token;
  if (values['state-dir'] !== undefined) out.stateDir = values['state-dir'];
  if (values.session !== undefined) out.session = values.session;
  return out;
}
