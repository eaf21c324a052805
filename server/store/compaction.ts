/**
 * When the store compacts: once it has been idle for a while (no flush, no
 * checkpoint) and the packs written since the last compaction hold enough
 * bytes to be worth it, every shadow pack is rewritten into one with deltas
 * (`repack.ts`). A turn end never waits for it: it runs only after the
 * store has been quiet, and a flush that comes meanwhile waits for it to
 * finish (it holds the store's write queue, as every pack rewrite does).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound } from '../private-files.js';
import { MAX_DELTA_DEPTH, planDeltaBases } from './repack.js';
import type { ShadowStore } from './shadow-store.js';

/** Quiet time after the last write before compaction runs. */
export const DEFAULT_COMPACT_IDLE_MS = 5000;
/** Never compact for less than this many bytes in packs outside the largest. */
const MIN_NEW_BYTES = 256 * 1024;
/** …nor for less than this share of the largest pack, so a big store is not rewritten for a few new turns. */
const NEW_SHARE = 1 / 8;

/** What one compaction did. */
export interface CompactionReport {
  /** True when the packs were rewritten. */
  compacted: boolean;
  /** Bytes of the shadow packs before and after. */
  packBytesBefore: number;
  packBytesAfter: number;
  /** Packs before and after. */
  packsBefore: number;
  packsAfter: number;
  /** Objects that got a delta base from the plan. */
  planned: number;
}

async function packSizes(shadowDir: string): Promise<number[]> {
  const dir = join(shadowDir, 'objects', 'pack');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
  const sizes: number[] = [];
  for (const name of names) {
    if (!name.startsWith('pack-') || !name.endsWith('.pack')) continue;
    sizes.push(
      await stat(join(dir, name)).then(
        (s) => s.size,
        () => 0,
      ),
    );
  }
  return sizes;
}

/** True when the packs outside the largest hold enough bytes for a compaction to be worth it. */
export async function compactionDue(shadowDir: string): Promise<boolean> {
  const sizes = (await packSizes(shadowDir)).sort((a, b) => b - a);
  if (sizes.length < 2) return false;
  const rest = sizes.slice(1).reduce((a, b) => a + b, 0);
  return rest >= Math.max(MIN_NEW_BYTES, sizes[0]! * NEW_SHARE);
}

/**
 * Rewrites every shadow pack into one with deltas between the versions of
 * each path (`force` skips the check that it is worth it), in chains of at
 * most `maxDepth` ({@link MAX_DELTA_DEPTH} by default).
 */
export async function compactStore(shadowDir: string, objects: ShadowStore, options: { force?: boolean; maxDepth?: number } = {}): Promise<CompactionReport> {
  const maxDepth = options.maxDepth ?? MAX_DELTA_DEPTH;
  const before = await packSizes(shadowDir);
  const report: CompactionReport = {
    compacted: false,
    packBytesBefore: before.reduce((a, b) => a + b, 0),
    packBytesAfter: 0,
    packsBefore: before.length,
    packsAfter: before.length,
    planned: 0,
  };
  report.packBytesAfter = report.packBytesBefore;
  if (options.force !== true && !(await compactionDue(shadowDir))) return report;
  await objects.flush();
  const bases = await planDeltaBases(
    { shadowDir, isShadowObject: (oid) => objects.isShadowObject(oid), readObject: (oid) => objects.readObject(oid) },
    maxDepth,
  );
  report.planned = bases.size;
  const result = await objects.compact(bases, maxDepth);
  const after = await packSizes(shadowDir);
  report.compacted = result.packsReplaced > 0;
  report.packBytesAfter = after.reduce((a, b) => a + b, 0);
  report.packsAfter = after.length;
  return report;
}

/** Runs a task once nothing has poked it for `idleMs`; never two at once. */
export class IdleTimer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly idleMs: number,
    private readonly task: () => Promise<void>,
  ) {}

  /** Something was written: the quiet period starts again. */
  poke(): void {
    if (this.stopped || !Number.isFinite(this.idleMs)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) return this.poke();
      this.running = this.task()
        .catch(() => undefined)
        .finally(() => {
          this.running = undefined;
        });
    }, this.idleMs);
    this.timer.unref();
  }

  /** No more runs; resolves once a run in progress has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
