#!/usr/bin/env node
// `npm run build`: the server's compile (`tsc -b tsconfig.json` into dist/) and the viewer's build
// (viewer/build.mjs into dist/viewer/) side by side. Both are incremental: tsc keeps what it knew in
// dist/build-info/ and compiles again only what changed since, and the viewer is not rebuilt when its inputs
// are unchanged. Removing dist/ builds everything afresh.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildViewer } from '../viewer/build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

function compileServer() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, '-b', join(root, 'tsconfig.json')], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error('the server has type errors'))));
  });
}

const results = await Promise.allSettled([compileServer(), buildViewer()]);
const failed = results.filter((r) => r.status === 'rejected');
for (const failure of failed) console.error(`build failed: ${failure.reason instanceof Error ? failure.reason.message : failure.reason}`);
if (failed.length > 0) process.exitCode = 1;
