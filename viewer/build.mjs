#!/usr/bin/env node
// Builds the web viewer into dist/viewer/: index.html, the page's bundle
// (viewer.js, its sources with protocol/, reducers/ and diff/ bundled in), the highlighting worker
// (highlight-worker.js) with one chunk per grammar under chunks/, and one
// stylesheet (viewer.css).
// No CDN and no inline code: the page is served with a strict CSP.
// Type errors fail the build (`--no-typecheck` skips that step); the type check runs beside the bundling and
// keeps what it learnt in dist/build-info/, so a check after a change reads again only what the change affects.
// A build into dist/viewer/ whose inputs (the viewer's, protocol/'s, reducers/' and diff/'s files, the TypeScript
// settings and the locked dependency versions) are byte for byte those of the last successful build does nothing.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const defaultOut = join(root, 'dist', 'viewer');
/** What the builds keep between runs (not packed: package.json's `files` leaves it out). */
const buildInfo = join(root, 'dist', 'build-info');
const stampFile = join(buildInfo, 'viewer-inputs.json');
/** Everything the bundle and its type check are made from. */
const inputDirs = ['viewer', 'protocol', 'reducers', 'diff'];
const inputFiles = ['tsconfig.base.json', 'package-lock.json'];
/** The files of the built viewer that must be there for a build to be skipped. */
const outputs = ['index.html', 'viewer.js', 'viewer.css', 'highlight-worker.js'];

/** A digest of every input's path and bytes, in a fixed order. */
function inputsDigest() {
  const hash = createHash('sha256');
  const add = (path) => {
    hash.update(relative(root, path));
    hash.update('\0');
    hash.update(readFileSync(path));
    hash.update('\0');
  };
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) add(path);
    }
  };
  for (const dir of inputDirs) walk(join(root, dir));
  for (const file of inputFiles) if (existsSync(join(root, file))) add(join(root, file));
  return hash.digest('hex');
}

/** Runs tsc with `args`, its output on this process's; rejects with `failure` when it reports errors. */
export function runTsc(args, failure) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, ...args], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(failure))));
  });
}

/** Runs the viewer's type check (`tsc -p viewer/tsconfig.json`, incremental); rejects on type errors. */
function typeCheck() {
  const args = ['-p', join(root, 'viewer', 'tsconfig.json'), '--incremental', '--tsBuildInfoFile', join(buildInfo, 'viewer.tsbuildinfo')];
  return runTsc(args, 'the viewer has type errors');
}

/**
 * Builds the viewer into `out`; `typecheck` runs `tsc -p viewer/tsconfig.json` beside the bundling. A build into
 * dist/viewer/ with the same inputs and options as the last successful one is skipped (`force` builds anyway).
 */
export async function buildViewer({ typecheck = true, minify = true, out = defaultOut, force = false } = {}) {
  const stamped = out === defaultOut;
  const stamp = stamped ? { inputs: inputsDigest(), minify } : undefined;
  if (stamp && !force && upToDate(out, stamp, typecheck)) return out;
  const checked = typecheck ? typeCheck() : Promise.resolve();
  // The bundling runs while the type check does; a type error still fails the build.
  const bundled = bundle(minify, out);
  const [check, bundling] = await Promise.allSettled([checked, bundled]);
  if (check.status === 'rejected') throw check.reason;
  if (bundling.status === 'rejected') throw bundling.reason;
  if (stamp) {
    mkdirSync(buildInfo, { recursive: true });
    writeFileSync(stampFile, `${JSON.stringify({ ...stamp, typechecked: typecheck })}\n`);
  }
  return out;
}

/** Whether the last successful build into `out` was made from the same inputs with the same options, and is still there. */
function upToDate(out, stamp, typecheck) {
  let last;
  try {
    last = JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return false;
  }
  if (last.inputs !== stamp.inputs || last.minify !== stamp.minify || (typecheck && !last.typechecked)) return false;
  return outputs.every((name) => existsSync(join(out, name)));
}

async function bundle(minify, out) {
  // The stamp goes first: a build stopped halfway is not taken for a finished one.
  if (out === defaultOut) rmSync(stampFile, { force: true });
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
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // --outdir DIR builds elsewhere (the browser tests build their own copy, so parallel test files never see a half-written folder).
  const at = process.argv.indexOf('--outdir');
  const out = at >= 0 ? process.argv[at + 1] : undefined;
  // --force builds even when nothing changed since the last build.
  await buildViewer({ typecheck: !process.argv.includes('--no-typecheck'), force: process.argv.includes('--force'), ...(out ? { out } : {}) });
}
