import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

export default defineConfig(({ mode }) => {
  // `npm run screenshots` (mode "screenshots") rewrites docs/images/ and runs
  // nothing else; `npm test` never runs it, so the tests leave the checkout clean.
  const screenshots = mode === 'screenshots';
  /** Everything but the browser tests. */
  const server: TestProjectInlineConfiguration = {
    extends: true,
    test: {
      name: 'server',
      include: ['test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, 'test/e2e/**'],
      // The test files of a worker run one after another in one process and share its loaded modules: loading them
      // afresh for every file cost about a quarter of the project's processor time. A file starts its own servers,
      // directories and processes and stops them; what it changes in the process (environment, working directory,
      // umask, fake timers, mocks, signal listeners) is put back after it by file-isolation.ts, which fails the file
      // that left it changed.
      isolate: false,
      setupFiles: ['test/helpers/file-isolation.ts'],
    },
  };
  /** The browser tests (test/e2e/). */
  const viewer: TestProjectInlineConfiguration = {
    extends: true,
    test: {
      name: 'viewer',
      include: screenshots ? ['test/e2e/docs-screenshots.ts'] : ['test/e2e/**/*.test.ts'],
      // The viewer is built once for all the browser test files.
      globalSetup: ['test/e2e/global-setup.ts'],
      // The browser test files share their worker's loaded modules (Playwright, the server): each file starts its
      // own browser and servers and leaves nothing running in the process.
      isolate: false,
      // A page on a loaded machine, beside another test file, can take many seconds to draw what a test waits for.
      expect: { poll: { timeout: 30_000 } },
    },
  };
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      expect: { poll: { timeout: 10_000 } },
      pool: 'forks',
      // Two test files at a time (the default on two cores is one).
      maxWorkers: 2,
      reporters: ['default'],
      projects: screenshots ? [viewer] : [server, viewer],
    },
  };
});
