import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { importMirror, ImportError, type ImportResult } from '../mirror/import.js';
import { DEFAULT_IMPORT_LIMITS, type ImportLimits } from '../mirror/import-limits.js';
import { describeRemoteError, MirrorSettingsError } from '../mirror/mirror-remote.js';
import { defaultStateDir, StoreBusyError } from '../store/index.js';
import { Output } from '../client/output.js';

import { parseByteSize, STORE_BUDGET_ENV } from './store-settings.js';
import { UsageError } from '../client/errors.js';

export const IMPORT_USAGE = [
  'Usage: changeset-server import URL [--workspace DIR] [options]',
  '',
  'Brings the sessions a server mirrored to the git remote URL (serve --mirror), or to a',
  "bare repository's path or file:// URL,",
  'into this machine\'s store for DIR, a checkout of the same project. "serve DIR"',
  'then lists them as past sessions, to browse, revert and restore.',
  '',
  '  --workspace DIR      the local checkout the sessions belong to (default: the current directory)',
  '  --from NAME          which mirrored workspace, when the remote holds several: its name, id or name-id',
  '  --state-dir DIR      the state directory to import into (default: the state directory)',
  '  --max-file-size SIZE refuse a mirror holding a file larger than SIZE, e.g. 50MiB (default: 50MiB,',
  "                       the recorder's limit for one file outside a repository)",
  '  --store-budget SIZE  refuse a mirror holding more than SIZE in all, e.g. 2GiB (default 2GiB,',
  `                       or $${STORE_BUDGET_ENV})`,
  '  --json               print the result as JSON',
  '',
  'The token comes from $CHANGESET_SERVER_MIRROR_TOKEN, as for serve --mirror. Sessions the',
  'store already has are left as they are. Stop the server recording DIR first.',
  '',
  "A mirror is someone else's data: everything is checked as git fsck would before anything",
  'is kept, and one bad entry refuses the whole import. Imported sessions work in DIR,',
  'whatever directory the mirror names; a restore from them creates no symbolic link',
  'pointing outside DIR unless asked to (--allow-outside-symlinks).',
  '',
].join('\n');

/** `changeset-server import`. */
export async function importCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        workspace: { type: 'string' },
        from: { type: 'string' },
        'state-dir': { type: 'string' },
        'max-file-size': { type: 'string' },
        'store-budget': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(IMPORT_USAGE);
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'the mirror URL is missing' : `one URL only, got ${positionals.length} arguments`);
  const workspaceDir = resolve(values.workspace ?? '.');
  const stateDir = values['state-dir'] !== undefined ? resolve(values['state-dir']) : defaultStateDir(env);
  const limits = importLimits(values['max-file-size'], values['store-budget'] ?? (env[STORE_BUDGET_ENV] || undefined), values['store-budget'] !== undefined);
  let result: ImportResult;
  try {
    result = await importMirror({ url: positionals[0]!, stateDir, workspaceDir, env, limits, ...(values.from !== undefined ? { from: values.from } : {}) });
  } catch (error) {
    if (error instanceof MirrorSettingsError) throw new UsageError(error.message);
    if (error instanceof StoreBusyError) throw new Error(`a server is recording ${workspaceDir}; stop it first ("changeset-server stop")`);
    if (error instanceof ImportError) throw new Error(error.message);
    throw new Error(describeRemoteError(error));
  }
  // The sessions as people know them, by title, read back from the store they now live in.
  const titles = new Map<string, string>();
  const { readStoredSessions } = await import('./stored-sessions.js');
  for (const s of await readStoredSessions(stateDir, result.workspaceDir).catch(() => [])) titles.set(s.id, s.title);
  new Output(values.json === true).result(describe(result, titles), {
    ...result,
    imported: result.imported.map((s) => ({ ...s, ...(titles.has(s.sessionId) ? { title: titles.get(s.sessionId) } : {}) })),
  });
  return 0;
}

/** The import's limits from `--max-file-size` and the store budget (flag or environment). */
function importLimits(maxFile: string | undefined, budget: string | undefined, budgetFromFlag: boolean): ImportLimits {
  const size = (text: string | undefined, what: string, fallback: number): number => {
    if (text === undefined) return fallback;
    const parsed = parseByteSize(text);
    if (typeof parsed === 'string') throw new UsageError(`${what} must be ${parsed}`);
    return parsed;
  };
  return {
    maxObjectBytes: size(maxFile, '--max-file-size', DEFAULT_IMPORT_LIMITS.maxObjectBytes),
    maxTotalBytes: size(budget, budgetFromFlag ? '--store-budget' : STORE_BUDGET_ENV, DEFAULT_IMPORT_LIMITS.maxTotalBytes),
  };
}

function describe(result: ImportResult, titles: ReadonlyMap<string, string>): string {
  const named = (id: string) => (titles.has(id) ? `"${titles.get(id)}"` : `the session ${id}`);
  const lines = [`From ${result.source} (${result.mirrored.path}) into ${result.workspaceDir}:`];
  if (result.imported.length === 0) lines.push('  no new sessions');
  for (const s of result.imported) lines.push(`  imported ${named(s.sessionId)} (${s.turns} turn${s.turns === 1 ? '' : 's'})`);
  for (const id of result.skipped) lines.push(`  already here: ${named(id)}`);
  for (const s of result.leftOut) lines.push(`  not imported: ${s.sessionId}, ${s.reason}`);
  if (result.imported.length > 0) lines.push('', `"changeset-server serve ${result.workspaceDir}" lists them as past sessions.`);
  return `${lines.join('\n')}\n`;
}
