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
import { MAX_DELTA_DEPTH, planDeltaBases, type RewriteControl, yieldTurn } from './repack.js';
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
export async function compactStore(
  shadowDir: string,
  objects: ShadowStore,
  options: { force?: boolean; maxDepth?: number; control?: RewriteControl } = {},
): Promise<CompactionReport> {
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
  // A store in use (a turn end) goes first.
  await yieldTurn(options.control);
  await objects.flush();
  const bases = await planDeltaBases(
    { shadowDir, isShadowObject: (oid) => objects.isShadowObject(oid), readObject: (oid) => objects.readObject(oid) },
    maxDepth,
    options.control,
  );
  report.planned = bases.size;
  const result = await objects.compact(bases, maxDepth, options.control);
  const after = await packSizes(shadowDir);
  report.compacted = result.packsReplaced > 0;
  report.packBytesAfter = after.reduce((a, b) => a + b, 0);
  report.packsAfter = after.length;
  return report;
}

/**
 * After a failed run, the next tries come this many idle periods later
 * (5 s, 30 s and 5 min with the default 5 s); past the last, the next write
 * arms it again.
 */
const RETRY_IDLE_PERIODS = [1, 6, 60] as const;

/**
 * Runs a task once nothing has poked it for `idleMs`; never two at once. A
 * run that fails is reported to `onFailure` and tried again later (see
 * {@link RETRY_IDLE_PERIODS}); `stop()` abandons a run in progress through
 * the signal the task was given, and waits until it has let go.
 */
export class IdleTimer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private failures = 0;
  private readonly abandon = new AbortController();

  constructor(
    private readonly idleMs: number,
    private readonly task: (signal: AbortSignal) => Promise<void>,
    private readonly onFailure: (error: unknown, retryInMs: number | undefined) => void = () => undefined,
  ) {}

  /** Something was written: the quiet period starts again. */
  poke(): void {
    this.arm(this.idleMs);
  }

  private arm(delayMs: number): void {
    if (this.stopped || !Number.isFinite(delayMs)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) return this.poke();
      this.running = this.task(this.abandon.signal)
        .then(
          () => {
            this.failures = 0;
          },
          (error: unknown) => {
            if (this.stopped) return;
            const retryIn = this.failures < RETRY_IDLE_PERIODS.length ? this.idleMs * RETRY_IDLE_PERIODS[this.failures]! : undefined;
            this.failures++;
            try {
              this.onFailure(error, retryIn);
            } catch {
              // A failing logger must not stop the retries.
            }
            if (retryIn !== undefined) this.arm(retryIn);
            else this.failures = 0;
          },
        )
        .finally(() => {
          this.running = undefined;
        });
    }, delayMs);
    this.timer.unref();
  }

  /** No more runs; a run in progress is abandoned and this resolves once it has let go. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.abandon.abort();
    await this.running;
  }
}
