/** Bundles `child-snapshot.ts` once and runs it in a child process. */
import { buildSync } from 'esbuild';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

let bundle: string | undefined;

afterAll(() => {
  if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  bundle = undefined;
});

function bundled(): string {
  if (bundle) return bundle;
  const dir = mkdtempSync(join(tmpdir(), 'snap-child-'));
  chmodSync(dir, 0o755);
  bundle = join(dir, 'child.mjs');
  buildSync({
    entryPoints: [join(dirname(fileURLToPath(import.meta.url)), 'child-snapshot.ts')],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
  });
  chmodSync(bundle, 0o644);
  return bundle;
}

export interface ChildSnapshot {
  tree: string;
  files: number;
  hashed: number;
  reusedFromCache: number;
  seededFromIndex: number;
  warnings: { path: string; message: string }[];
  unread: { path: string; reason: string; size?: number; kept: boolean }[];
  nested: { path: string; tree: string }[];
}

export function runChild(args: { root: string; cacheDir: string; times?: number; home: string }, opts: SpawnSyncOptions = {}): ChildSnapshot[] {
  const r = spawnSync(process.execPath, [bundled(), JSON.stringify(args)], { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(String(r.stdout)) as ChildSnapshot[];
}
