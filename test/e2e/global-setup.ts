/**
 * What all the browser test files share, set up once for the run: the viewer,
 * built into a temporary folder that no test rewrites (test files running
 * side by side all serve it), and one Chromium that every file connects to
 * (`connectBrowser` in `viewer-harness.ts`), each with browser contexts of its
 * own. Both are removed when the run ends.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the viewer was built into for this run. */
    viewerDir: string;
    /** The run's Chromium, for `chromium.connect`. */
    browserEndpoint: string;
  }
}

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'viewer-build-'));
  // The build (without the type check, which `npm run build` does) and Chromium's start, side by side.
  const [built, browser] = await Promise.allSettled([
    promisify(execFile)(process.execPath, [join(ROOT, 'viewer', 'build.mjs'), '--no-typecheck', '--outdir', dir]),
    chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 }),
  ]);
  const teardown = async (): Promise<void> => {
    if (browser.status === 'fulfilled') await browser.value.close();
    await rm(dir, { recursive: true, force: true });
  };
  if (built.status === 'rejected' || browser.status === 'rejected') {
    await teardown();
    throw built.status === 'rejected' ? built.reason : (browser as PromiseRejectedResult).reason;
  }
  if (built.value.stderr) process.stderr.write(built.value.stderr);
  project.provide('viewerDir', dir);
  project.provide('browserEndpoint', browser.value.wsEndpoint());
  return teardown;
}
