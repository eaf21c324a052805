/**
 * Runs snapshots in a separate process (bundled by `runChild`), so tests can
 * check restarts, an empty PATH and an unprivileged user. Argument: JSON
 * `{ root, cacheDir, times, home }`; prints one JSON line with the results.
 */
import { WorkspaceSnapshotter } from '../../server/snapshot/index.js';
import { MemoryObjectStore } from './memory-store.js';

const args = JSON.parse(process.argv[2] ?? '{}') as { root: string; cacheDir: string; times?: number; home: string };
const s = new WorkspaceSnapshotter({ root: args.root, cacheDir: args.cacheDir, store: new MemoryObjectStore(), env: { HOME: args.home } });
const results = [];
for (let i = 0; i < (args.times ?? 1); i++) {
  const r = await s.snapshot();
  results.push({
    tree: r.tree,
    files: r.files,
    hashed: r.hashed,
    reusedFromCache: r.reusedFromCache,
    seededFromIndex: r.seededFromIndex,
    warnings: r.warnings,
    unread: r.unread,
    nested: r.nested.map((n) => ({ path: n.path, tree: n.tree })),
  });
}
process.stdout.write(JSON.stringify(results) + '\n');
