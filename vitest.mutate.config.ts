import { defineConfig } from 'vitest/config';

/**
 * The test files `npm run mutate` runs: the fast, direct tests of the
 * safety-critical modules (no server, no CLI, no browser). Stryker then runs,
 * for each module, only those of them that import it (`vitest.related`).
 */
export const mutationTests = [
  // The three-way merge.
  'test/diff/merge3.test.ts',
  'test/diff/merge3-cases.test.ts',
  'test/operations/reverse-merge.test.ts',
  'test/operations/reverse-merge-cases.test.ts',
  // Containment.
  'test/paths/containment.test.ts',
  'test/snapshot/open-inside.test.ts',
  'test/snapshot/read-containment.test.ts',
  'test/disk/contained-read.test.ts',
  // The write path.
  'test/disk/file-swap.test.ts',
  'test/disk/write-batch.test.ts',
  'test/disk/contained-dirs.test.ts',
  'test/operations/write-guard.test.ts',
  // Recovery.
  'test/operations/recovery.test.ts',
  'test/operations/swap-recovery.test.ts',
  'test/operations/finish-interrupted.test.ts',
  'test/disk/recovery-cases.test.ts',
];

export default defineConfig({
  test: {
    include: mutationTests,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
