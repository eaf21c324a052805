import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A browser under a loaded machine can take seconds to draw what a test waits for.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    reporters: ['default'],
  },
});
