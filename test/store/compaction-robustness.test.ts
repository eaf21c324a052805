import { buildSync } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openWorkspaceStore, type WorkspaceStore } from '../../server/store/index.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { recordTurns, sourceFile, type Versions } from './delta-history.js';
import { git, useStoreFixture } from './git-fixture.js';

useMemoryTempDir();

let bundleDir: string | undefined;
afterAll(() => {
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
});

function child(): string {
  if (!bundleDir) {
    bundleDir = mkdtempSync(join(tmpdir(), 'compaction-kill-child-'));
    buildSync({
      entryPoints: [join(dirname(fileURLToPath(import.meta.url)), 'compaction-kill-child.ts')],
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
  killAt: string,
): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [child(), stateDir, workspace, String(killAt)], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function packNames(store: WorkspaceStore): string[] {
  return readdirSync(join(store.layout.shadowDir, 'objects', 'pack')).sort();
}

async function expectEveryVersion(store: WorkspaceStore, versions: Versions, what: string): Promise<void> {
  for (const [oid, text] of versions) expect(Buffer.from((await store.readObject(oid)).content).toString(), what).toBe(text);
}

const until = async (condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/** Keeps using the store (as a turn end does) until stopped. */
function keepBusy(store: WorkspaceStore, oid: string): { stop: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await store.hasObject(oid);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })().catch(() => undefined);
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('compaction under failure, shutdown and a turn end', () => {
  const fx = useStoreFixture();

  function files(count: number, lines = 300): Map<string, string> {
    const out = new Map<string, string>();
    for (let i = 0; i < count; i++) out.set(`src/d${i % 3}/f${i}.ts`, sourceFile(i, lines));
    return out;
  }

  it('killed with SIGKILL at any point — planning, writing its pack, syncing, putting it in place, removing the old ones — leaves a store that reads every object back, passes git fsck --full, and compacts on the next try', async () => {
    const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const all = process.env['COMPACTION_KILL_POINTS'] === 'all';
    // Files of 100 lines in `npm test`: the kill points are the compaction's steps, as many for small files as for large.
    const versions = await recordTurns(store, 'killed', files(6, all ? 300 : 100), { turns: 6, perTurn: 2 });
    await store.close();
    const pristine = join(fx.root, 'pristine');
    cpSync(fx.stateDir, pristine, { recursive: true });

    const full = compactIn(fx.stateDir, fx.workspace, 'none');
    expect(full.status, full.stderr).toBe(0);
    const { file: fileCalls, yield: yields, moves } = JSON.parse(full.stdout) as { file: number; yield: number; moves: number[] };
    // The temporary files' opens, writes, syncs and closes, two renames and the old packs' removals at least.
    expect(fileCalls).toBeGreaterThanOrEqual(8);
    expect(moves.length).toBeGreaterThanOrEqual(3);
    expect(yields).toBeGreaterThanOrEqual(1);

    // Calls on files come in the same order in every run; turns given to the event loop come after every 5 ms of work
    // and so vary from run to run: the first, and some spread over planning and encoding.
    // Renames and removals: the two that put the new pack and its index in place, the removals of the first old pack's
    // index and pack, one halfway through and the last one; killed just before each of these, the store must also
    // compact on the next try.
    // `npm test` kills it before the first write of its temporary pack (opened, empty), before each sync (the pack's,
    // then the index's: written, not yet synced), at those renames and removals, and at the first and last turn it gives
    // the event loop. `npm run soak` (COMPACTION_KILL_POINTS=all), over files of 300 lines, also kills it before every
    // other open, write, sync and close of the temporary pack and index (the first twelve file calls), before a removal
    // of an old pack halfway through, before the third removal and at two more turns of the event loop.
    const moveNumbers = all ? [1, 2, 3, 4, 5, Math.ceil(moves.length / 2), moves.length] : [1, 2, 3, 4, Math.ceil(moves.length / 2), moves.length];
    const movePoints = new Set([...new Set(moveNumbers)].filter((m) => m <= moves.length).map((m) => `file:${moves[m - 1]}`));
    const fileNumbers = all
      ? [...Array(Math.min(12, fileCalls)).keys()].map((i) => i + 1).concat([Math.ceil((fileCalls + 12) / 2), fileCalls])
      : [2, 3, 7, fileCalls];
    const yieldNumbers = all ? [1, 2, Math.ceil(yields / 3), Math.ceil((2 * yields) / 3), yields] : [1, yields];
    const points = [
      ...new Set([...[...new Set(fileNumbers)].filter((n) => n <= fileCalls).map((n) => `file:${n}`), ...movePoints]),
      ...[...new Set(yieldNumbers)].map((n) => `yield:${n}`),
    ];
    for (const point of points) {
      const stateDir = join(fx.root, `state-${point.replace(':', '-')}`);
      cpSync(pristine, stateDir, { recursive: true });
      const killed = compactIn(stateDir, fx.workspace, point);
      // A run with fewer turns than the full one may finish before it reaches the point: then it must have succeeded.
      if (point.startsWith('yield:') && killed.signal === null) expect(killed.status, killed.stderr).toBe(0);
      else expect(killed.signal, `${point} of ${fileCalls} calls, ${yields} turns: ${killed.stderr}`).toBe('SIGKILL');
      const reopened = await openWorkspaceStore({ stateDir, workspaceDir: fx.workspace, compactAfterIdleMs: Number.POSITIVE_INFINITY });
      try {
        await expectEveryVersion(reopened, versions, `point ${point} of ${points}`);
        expect(packNames(reopened).filter((n) => n.startsWith('tmp_'))).toEqual([]);
        git(fx.root, ['--git-dir', reopened.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
        if (movePoints.has(point) || point === 'yield:1' || point === `file:${fileCalls}` || point === 'file:10') {
          expect((await reopened.compact({ force: true })).packsAfter, `point ${point}`).toBe(1);
          await expectEveryVersion(reopened, versions, `after compacting again, point ${point}`);
          git(fx.root, ['--git-dir', reopened.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
        }
      } finally {
        await reopened.close();
      }
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 600_000);

  it('a compaction that fails in idle time is reported in words and tried again, and the store keeps its packs meanwhile', async () => {
    const messages: string[] = [];
    const fsp = createRequire(import.meta.url)('node:fs/promises') as typeof import('node:fs/promises');
    const rename = fsp.rename;
    let failures = 0;
    let failing = false;
    (fsp as { rename: typeof rename }).rename = async (from, to) => {
      if (failing && String(from).includes('tmp_pack_')) {
        failing = false;
        failures++;
        throw Object.assign(new Error('ENOSPC: no space left on device, rename'), { code: 'ENOSPC' });
      }
      return rename(from, to);
    };
    syncBuiltinESMExports();
    try {
      const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
      const versions = await recordTurns(store, 'failing', files(9), { turns: 6, perTurn: 3 });
      await store.close();

      const again = await fx.open({ compactAfterIdleMs: 50, log: (message) => messages.push(message) });
      const before = packNames(again);
      failing = true;
      // A flush arms the idle compaction.
      await again.flush();
      await until(() => failures === 1, 'the first compaction to fail');
      await until(() => packNames(again).filter((n) => n.endsWith('.pack')).length === 1, 'the retried compaction');
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain(`compacting the store of ${again.workspaceDir} failed (ENOSPC: no space left on device, rename); trying again in 50 ms`);
      expect(messages[0]).toContain('Nothing recorded is lost');
      expect(before.filter((n) => n.endsWith('.pack')).length).toBeGreaterThan(1);
      expect(packNames(again).filter((n) => n.startsWith('tmp_'))).toEqual([]);
      await expectEveryVersion(again, versions, 'after the retry');
      git(fx.root, ['--git-dir', again.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
      await again.close();
    } finally {
      (fsp as { rename: typeof rename }).rename = rename;
      syncBuiltinESMExports();
    }
  }, 120_000);

  it('yields to a turn end that comes while it runs: it holds still while the store is used, the turn end reads back what it wrote, and the compaction finishes afterwards', async () => {
    const recording = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const tracked = files(9);
    const versions = await recordTurns(recording, 'busy', tracked, { turns: 6, perTurn: 3 });
    await recording.close();
    const store = await fx.open({ compactAfterIdleMs: 50 });
    // A client reading the store when the quiet time after a flush is over: the compaction starts and holds still.
    const busy = keepBusy(store, versions.keys().next().value!);
    await store.flush();
    await until(() => store.compactionHeldMs > 100, 'the compaction to hold still');
    const packsHeld = packNames(store).filter((n) => n.endsWith('.pack')).length;
    expect(packsHeld).toBeGreaterThan(1);
    // The turn end: new versions written, checkpointed and read back while the compaction waits.
    const during = await recordTurns(store, 'busy', tracked, { turns: 1, perTurn: 3, firstTurn: 6 });
    for (const [oid, text] of during) versions.set(oid, text);
    await expectEveryVersion(store, during, 'the turn end during the compaction');
    const checkpoint = await store.readCheckpoint('refs/changeset-server/sessions/busy/head');
    expect(checkpoint?.turnId).toBe('turn-6');
    await busy.stop();
    await until(() => packNames(store).filter((n) => n.endsWith('.pack')).length === 1, 'the compaction to finish', 120_000);
    await expectEveryVersion(store, versions, 'after the compaction');
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
    await store.close();
  }, 180_000);

  it('closing the store while a compaction runs abandons it at once: no temporary file left, the old packs kept and readable', async () => {
    const messages: string[] = [];
    const recording = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const versions = await recordTurns(recording, 'closing', files(9), { turns: 6, perTurn: 3 });
    await recording.close();
    const store = await fx.open({ compactAfterIdleMs: 50, log: (message) => messages.push(message) });
    const before = packNames(store);
    expect(before.filter((n) => n.endsWith('.pack')).length).toBeGreaterThan(1);
    const busy = keepBusy(store, versions.keys().next().value!);
    await store.flush();
    await until(() => store.compactionHeldMs > 100, 'the compaction to start');
    const closed = store.close();
    await busy.stop();
    await closed;
    expect(messages).toEqual([]);
    const reopened = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    expect(packNames(reopened)).toEqual(before);
    await expectEveryVersion(reopened, versions, 'after an abandoned compaction');
    git(fx.root, ['--git-dir', reopened.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
    await reopened.close();
  }, 120_000);
});
