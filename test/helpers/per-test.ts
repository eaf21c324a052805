import { test as base } from 'vitest';
import { TempDirs } from './workspace.js';

/** What {@link it} gives each test, its own even when the tests of a file run concurrently. */
export interface PerTest {
  /** Temporary directories, removed once the test and its `defer`red cleanups are done. */
  temp: TempDirs;
  /** Runs `cleanup` after the test, whether it passed or failed; the last deferred runs first. */
  defer: (cleanup: () => unknown) => void;
}

/**
 * `it` with a `temp` and a `defer` of the running test alone, so that the
 * tests of a file that each start their own processes and directories can run
 * side by side (`describe.concurrent`): nothing is shared through `afterEach`.
 * In a concurrent test, take `expect` from the test's context as well.
 */
export const it = base.extend<PerTest>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest hands a fixture the fixtures it depends on by destructuring; this one depends on none.
  temp: async ({}, use) => {
    const temp = new TempDirs();
    await use(temp);
    temp.cleanup();
  },
  // Depends on `temp`, so the directories go only after every cleanup (which may stop a process writing in them).
  defer: async ({ temp: _temp }, use) => {
    const cleanups: (() => unknown)[] = [];
    // Resolves once the test is over, passed or failed.
    await use((cleanup) => cleanups.push(cleanup));
    const errors: unknown[] = [];
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  },
});
