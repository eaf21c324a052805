import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { importMirror, type ImportResult } from '../mirror/import.js';
import { describeRemoteError, MirrorSettingsError } from '../mirror/mirror-remote.js';
import { defaultStateDir, StoreBusyError } from '../store/index.js';
import { Output } from './output.js';
import { UsageError } from './serve-args.js';

export const IMPORT_USAGE = [
  'Usage: changeset-server import URL [--workspace DIR] [options]',
  '',
  'Brings the sessions a server mirrored to the git remote URL (serve --mirror)',
  'into this machine\'s store for DIR, a checkout of the same project. "serve DIR"',
  'then lists them as past sessions, to browse, revert and restore.',
  '',
  '  --workspace DIR      the local checkout the sessions belong to (default: the current directory)',
  '  --from NAME          which mirrored workspace, when the remote holds several: its name, id or name-id',
  '  --state-dir DIR      the state directory to import into (default: the state directory)',
  '  --json               print the result as JSON',
  '',
  'The token comes from $CHANGESET_SERVER_MIRROR_TOKEN, as for serve --mirror. Sessions the',
  'store already has are left as they are. Stop the server recording DIR first.',
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
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'the mirror URL is missing' : `one URL only, got ${positionals.length} arguments`);
  const workspaceDir = resolve(values.workspace ?? '.');
  const stateDir = values['state-dir'] !== undefined ? resolve(values['state-dir']) : defaultStateDir(env);
  let result: ImportResult;
  try {
    result = await importMirror({ url: positionals[0]!, stateDir, workspaceDir, env, ...(values.from !== undefined ? { from: values.from } : {}) });
  } catch (error) {
    if (error instanceof MirrorSettingsError) throw new UsageError(error.message);
    if (error instanceof StoreBusyError) throw new Error(`a server is recording ${workspaceDir}; stop it first ("changeset-server stop")`);
    throw new Error(describeRemoteError(error));
  }
  new Output(values.json === true).result(describe(result), result);
  return 0;
}

function describe(result: ImportResult): string {
  const lines = [`From ${result.source} (${result.mirrored.path}) into ${result.workspaceDir}:`];
  if (result.imported.length === 0) lines.push('  no new sessions');
  for (const s of result.imported) lines.push(`  imported ${s.sessionId} (${s.turns} turn${s.turns === 1 ? '' : 's'})`);
  for (const id of result.skipped) lines.push(`  already here: ${id}`);
  if (result.imported.length > 0) lines.push('', `"changeset-server serve ${result.workspaceDir}" lists them as past sessions.`);
  return `${lines.join('\n')}\n`;
}
