import { buildSync } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspaceStore } from '../../server/store/index.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { recordTurns, sourceFile } from './delta-history.js';
import { git, useStoreFixture } from './git-fixture.js';

useMemoryTempDir();

let bundleDir: string | undefined;
afterAll(() => {
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
});

function child(): string {
  if (!bundleDir) {
    bundleDir = mkdtempSync(join(tmpdir(), 'compaction-child-'));
    buildSync({
      entryPoints: [join(dirname(fileURLToPath(import.meta.url)), 'compaction-child.ts')],
      outfile: join(bundleDir, 'child.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'error',
    });
  }
  return join(bundleDir, 'child.mjs');
}

function compactIn(
  stateDir: string,
  workspace: string,
  killAt: number,
): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [child(), stateDir, workspace, String(killAt)], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('a compaction killed with SIGKILL', () => {
  const fx = useStoreFixture();

  it('leaves a store that reads every version, passes git fsck --full, and compacts on the next try — killed at each kind of rename and removal it makes', async () => {
    const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const files = new Map<string, string>();
    for (let i = 0; i < 4; i++) files.set(`src/d${i % 2}/f${i}.ts`, sourceFile(i, 300));
    const versions = await recordTurns(store, 'killed', files, { turns: 4, perTurn: 2 });
    await store.close();
    const pristine = join(fx.root, 'pristine');
    cpSync(fx.stateDir, pristine, { recursive: true });

    // A run to the end counts the points.
    const full = compactIn(fx.stateDir, fx.workspace, 0);
    expect(full.status, full.stderr).toBe(0);
    const { calls, first } = JSON.parse(full.stdout) as { calls: number; first: number };
    expect(calls).toBeGreaterThanOrEqual(3);

    // The two renames that put the new pack and its index in place, the removals of the first old pack's index, pack and
    // reverse index, one halfway through and the last one.
    const points = [...new Set([1, 2, 3, 4, 5, Math.ceil(calls / 2), calls])].filter((p) => p <= calls);
    for (const point of points) {
      const stateDir = join(fx.root, `state-${point}`);
      cpSync(pristine, stateDir, { recursive: true });
      const killed = compactIn(stateDir, fx.workspace, first + point);
      expect(killed.signal, `point ${point}: ${killed.stderr}`).toBe('SIGKILL');

      const reopened = await openWorkspaceStore({ stateDir, workspaceDir: fx.workspace, compactAfterIdleMs: Number.POSITIVE_INFINITY });
      try {
        for (const [oid, text] of versions) expect(Buffer.from((await reopened.readObject(oid)).content).toString(), `point ${point}`).toBe(text);
        const shadow = reopened.layout.shadowDir;
        expect(readdirSync(join(shadow, 'objects', 'pack')).filter((n) => n.startsWith('tmp_'))).toEqual([]);
        git(fx.root, ['--git-dir', shadow, 'fsck', '--full', '--strict', '--no-dangling']);
        const again = await reopened.compact({ force: true });
        expect(again.packsAfter, `point ${point}`).toBe(1);
        for (const [oid, text] of versions) expect(Buffer.from((await reopened.readObject(oid)).content).toString()).toBe(text);
        git(fx.root, ['--git-dir', shadow, 'fsck', '--full', '--strict', '--no-dangling']);
      } finally {
        await reopened.close();
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 240_000);
});
