import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { displayPathBytes } from '../path-bytes.js';
import { WorkspaceRoot } from '../session/workspace-root.js';
import { defaultStateDir } from '../store/index.js';
import { progressLine } from './progress.js';
import { UsageError } from '../client/errors.js';

export const SNAPSHOT_USAGE = [
  'Usage: changeset-server snapshot <dir> [--state-dir DIR] [--json]',
  '',
  'Records the directory as a git tree in its shadow store (nothing is written',
  'into the directory or its repository) and prints the tree id.',
  '',
  'Options:',
  '  --state-dir DIR   where stores live (default: $XDG_STATE_HOME/changeset-server)',
  '  --json            print one JSON line: {tree, files, ms, hashed, reusedFromCache, seededFromIndex, warnings}',
  '  -h, --help        show this help',
  '',
].join('\n');

/** `changeset-server snapshot <dir>`: one snapshot, for scripts and for measuring. */
export async function snapshotCommand(argv: readonly string[]): Promise<number> {
  let values: { 'state-dir'?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { 'state-dir': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(SNAPSHOT_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one directory');
  const dir = resolve(positionals[0]!);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new UsageError(`not a directory: ${dir}`);
  const stateDir = values['state-dir'] !== undefined ? resolve(values['state-dir']) : defaultStateDir();

  const root = await WorkspaceRoot.acquire({ dir, stateDir });
  const progress = progressLine(process.stderr);
  try {
    const result = await root.snapshot((done, total) => progress.update(done, total));
    progress.done();
    const report = {
      tree: result.tree,
      files: result.files,
      ms: Math.round(result.ms),
      hashed: result.hashed,
      reusedFromCache: result.reusedFromCache,
      seededFromIndex: result.seededFromIndex,
      warnings: result.warnings,
    };
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      process.stdout.write(`${result.tree}  ${result.files} files in ${report.ms} ms (${result.hashed} hashed)\n`);
      for (const w of result.warnings) process.stderr.write(`warning: ${displayPathBytes(w.path)}: ${w.message}\n`);
    }
    return 0;
  } finally {
    progress.done();
    await root.release();
  }
}
