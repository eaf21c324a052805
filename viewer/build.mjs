#!/usr/bin/env node
// Builds the web viewer into dist/viewer/: index.html, the page's bundle
// (viewer.js, its sources with protocol/, reducers/ and diff/ bundled in), the highlighting worker
// (highlight-worker.js) with one chunk per grammar under chunks/, and one
// stylesheet (viewer.css).
// No CDN and no inline code: the page is served with a strict CSP.
// Type errors fail the build (`--no-typecheck` skips that step).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const defaultOut = join(root, 'dist', 'viewer');

/** Builds the viewer into `out`; `typecheck` runs `tsc -p viewer/tsconfig.json` first. */
export async function buildViewer({ typecheck = true, minify = true, out = defaultOut } = {}) {
  if (typecheck) {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', join(root, 'viewer', 'tsconfig.json')], { stdio: 'inherit' });
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const script = { bundle: true, format: 'esm', platform: 'browser', target: ['es2022'], minify, legalComments: 'none', outdir: out, logLevel: 'warning' };
  // The page is one file: nothing to fetch after it before it can connect.
  await build({ ...script, entryPoints: { viewer: join(root, 'viewer', 'src', 'main.ts') } });
  // The worker that runs the syntax highlighter; each grammar is a chunk of its own, loaded on first use.
  await build({
    ...script,
    entryPoints: { 'highlight-worker': join(root, 'viewer', 'src', 'highlight', 'worker.ts') },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  });
  await build({
    entryPoints: { viewer: join(root, 'viewer', 'styles.css') },
    bundle: true,
    minify,
    outdir: out,
    logLevel: 'warning',
  });
  copyFileSync(join(root, 'viewer', 'index.html'), join(out, 'index.html'));
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // --outdir DIR builds elsewhere (the browser tests build their own copy, so parallel test files never see a half-written folder).
  const at = process.argv.indexOf('--outdir');
  const out = at >= 0 ? process.argv[at + 1] : undefined;
  await buildViewer({ typecheck: !process.argv.includes('--no-typecheck'), ...(out ? { out } : {}) });
}
