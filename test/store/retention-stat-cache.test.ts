import { randomBytes } from 'node:crypto';
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkspaceRoot } from '../../server/session/workspace-root.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const FILES = 40;

describe('retention and the stat cache', () => {
  const temp = new TempDirs();
  let root: WorkspaceRoot | undefined;

  afterEach(async () => {
    vi.useRealTimers();
    await root?.release();
    root = undefined;
    temp.cleanup();
  });

  it('a prune keeps the stat cache valid: the next snapshot re-hashes nothing unchanged and every object it names is readable', async () => {
    const dir = realpathSync(temp.make());
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < FILES; i++) files[`src/f${i}.bin`] = randomBytes(20_000);
    writeFiles(dir, files);
    // Outside a repository every blob lives in the store, so retention can remove it; the walk alone shows what is re-hashed.
    root = await WorkspaceRoot.acquire({ dir, stateDir: temp.make(), budgetBytes: 1, watching: { watch: false } });
    const first = await root.snapshot();
    expect(first.hashed).toBe(FILES);
    await root.store.writeCheckpoint({ sessionId: 'old', kind: 'start', turnId: 't1', tree: first.tree });
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, `src/f${i}.bin`), randomBytes(20_000));
    // Past the filesystem's timestamp tick, so the edited files are not racy (re-hashed by rule) in later snapshots.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await root.snapshot();
    expect(second.hashed).toBe(5);
    await root.store.writeCheckpoint({ sessionId: 'old', kind: 'end', turnId: 't1', tree: first.tree, turn: { state: 'complete' } });
    await root.store.markSessionEnded('old', '2024-01-01T00:00:00Z');

    // Past the grace period, the ended session is the only thing referring to the tree the cache names.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60 * 60 * 1000);
    const report = await root.maintain();
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['old']);
    expect(report.objectsRemoved).toBeGreaterThanOrEqual(5);
    expect(report.sizeAfter).toBeLessThan(report.sizeBefore - 5 * 19_000);
    expect(root.lastRetentionRun).toMatchObject({ sizeBefore: report.sizeBefore, sizeAfter: report.sizeAfter, packsAfter: 1 });

    const third = await root.snapshot();
    expect(third.tree).toBe(second.tree);
    expect(third.hashed).toBe(0);
    expect(third.reusedFromCache).toBe(FILES);
    for (const entry of await root.store.readTree((await root.store.readTree(third.tree))[0]!.oid)) {
      expect((await root.store.readObject(entry.oid)).content.byteLength).toBe(20_000);
    }

    writeFileSync(join(dir, 'src/f7.bin'), randomBytes(20_000));
    expect((await root.snapshot()).hashed).toBe(1);
  });
});
