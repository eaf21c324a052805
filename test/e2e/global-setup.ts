/**
 * Builds the viewer once for all the browser test files, into a temporary
 * folder that no test rewrites (test files running side by side all serve
 * it); removed when the run ends.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the viewer was built into for this run. */
    viewerDir: string;
  }
}

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'viewer-build-'));
  // Without the type check, which `npm run build` does.
  execFileSync(process.execPath, [join(ROOT, 'viewer', 'build.mjs'), '--no-typecheck', '--outdir', dir], { stdio: 'inherit' });
  project.provide('viewerDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
