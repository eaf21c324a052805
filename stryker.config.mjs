// Mutation testing of the safety-critical modules: `npm run mutate` (all of
// them, one after the other) or `npm run mutate -- --mutate server/diff/merge3.ts`
// (one). Not part of `npm test`. See docs/operations.md, "Mutation testing".

/** The modules mutated, by area. */
export const safetyCritical = {
  'write path': ['server/disk/file-swap.ts', 'server/disk/write-batch.ts', 'server/disk/contained-dirs.ts', 'server/operations/write-guard.ts'],
  recovery: ['server/disk/write-intent.ts', 'server/disk/finish-operation.ts'],
  containment: ['server/containment.ts', 'server/snapshot/open-inside.ts', 'server/disk/contained-read.ts'],
  'three-way merge': ['server/diff/merge3.ts', 'server/operations/reverse-merge.ts'],
};

// The results of a run are kept per set of modules, so that running one module
// again (incremental mode) reuses that module's results and leaves the others'.
const args = process.argv;
const at = args.indexOf('--mutate');
const only = at >= 0 ? args[at + 1] : args.find((a) => a.startsWith('--mutate='))?.slice('--mutate='.length);
const slug = only ? only.replace(/server\/|\.ts(:[^,]*)?/g, '').replace(/[^A-Za-z0-9]+/g, '-') : 'all';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  coverageAnalysis: 'perTest',
  mutate: Object.values(safetyCritical).flat(),
  // Two cores shared with other work: one test process by default; `npm run mutate -- --concurrency 2` to use more.
  concurrency: 1,
  incremental: true,
  incrementalFile: `reports/mutation/${slug}.incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${slug}.html` },
  jsonReporter: { fileName: `reports/mutation/${slug}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  // What the selected tests never read: not copied into the sandbox.
  ignorePatterns: ['dist', 'dist-bench', 'coverage', 'reports', 'docs/images', 'test-results', '*.log'],
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 80, break: null },
};
