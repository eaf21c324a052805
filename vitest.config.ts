import { defineConfig } from 'vitest/config';

export default defineConfig(({ mode }) => ({
  test: {
    // `npm run screenshots` (mode "screenshots") rewrites docs/images/ and runs
    // nothing else; `npm test` never runs it, so the tests leave the checkout clean.
    include: mode === 'screenshots' ? ['test/e2e/docs-screenshots.ts'] : ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A browser under a loaded machine can take seconds to draw what a test waits for.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    reporters: ['default'],
  },
}));
