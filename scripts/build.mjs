#!/usr/bin/env node
// `npm run build`: the server's compile (`tsc -b tsconfig.json` into dist/) and the viewer's build
// (viewer/build.mjs into dist/viewer/) side by side. Both are incremental: tsc keeps what it knew in
// dist/build-info/ and compiles again only what changed since, and the viewer is not rebuilt when its inputs
// are unchanged. Removing dist/ builds everything afresh.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildViewer, runTsc } from '../viewer/build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

const results = await Promise.allSettled([runTsc(['-b', join(root, 'tsconfig.json')], 'the server has type errors'), buildViewer()]);
const failed = results.filter((r) => r.status === 'rejected');
for (const failure of failed) console.error(`build failed: ${failure.reason instanceof Error ? failure.reason.message : failure.reason}`);
if (failed.length > 0) process.exitCode = 1;
