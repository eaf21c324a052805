#!/usr/bin/env node
// Runs one benchmark: bundles bench/<name>/run.ts with esbuild (dependencies
// stay external) and executes it, passing the remaining arguments through.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [name, ...rest] = process.argv.slice(2);
const entry = name && join(root, 'bench', name, 'run.ts');
if (!entry || !existsSync(entry)) {
  console.error('Usage: npm run bench -- <name> [args...]   (a folder under bench/ with run.ts)');
  process.exit(2);
}
const outdir = join(root, 'dist-bench');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, `${name}.mjs`);
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'inline',
  logLevel: 'warning',
});
const result = spawnSync(process.execPath, ['--expose-gc', outfile, ...rest], { stdio: 'inherit' });
process.exit(result.status ?? 1);
