#!/usr/bin/env node
// Runs one benchmark: bundles bench/<name>/run.ts with esbuild (dependencies
// stay external) and executes it, passing the remaining arguments through.
// Without a name, runs every benchmark in turn with its default arguments.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const [name, ...rest] = process.argv.slice(2);
if (name === undefined) {
  // Folders starting with `_` are scratch space, not benchmarks.
  const all = readdirSync(join(root, 'bench'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('_') && existsSync(join(root, 'bench', d.name, 'run.ts')))
    .map((d) => d.name)
    .sort();
  let failed = 0;
  for (const bench of all) {
    console.log(`\n=== ${bench} ===`);
    if ((await runBench(bench, [])) !== 0) failed++;
  }
  process.exit(failed === 0 ? 0 : 1);
}
const entry = join(root, 'bench', name, 'run.ts');
if (!existsSync(entry)) {
  console.error('Usage: npm run bench [-- <name> [args...]]   (a folder under bench/ with run.ts; none: all of them)');
  process.exit(2);
}
process.exit(await runBench(name, rest));

async function runBench(bench, args) {
  const outdir = join(root, 'dist-bench');
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, `${bench}.mjs`);
  await build({
    entryPoints: [join(root, 'bench', bench, 'run.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  const result = spawnSync(process.execPath, ['--expose-gc', outfile, ...args], { stdio: 'inherit' });
  return result.status ?? 1;
}
