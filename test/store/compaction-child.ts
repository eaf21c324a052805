/**
 * Run in a child process by `compaction-crash.test.ts`: opens a store and
 * compacts it, killing itself with SIGKILL just before its Nth rename or
 * removal of a file (a deterministic point of the compaction). Prints how
 * many such calls it made when it is not killed.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const [stateDir, workspaceDir, killAtText] = process.argv.slice(2);
const killAt = Number(killAtText);
const fsp = createRequire(import.meta.url)('node:fs/promises') as typeof import('node:fs/promises');
let calls = 0;
for (const name of ['rename', 'rm', 'unlink'] as const) {
  const original = fsp[name] as (...args: unknown[]) => Promise<unknown>;
  (fsp as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    if (++calls === killAt) process.kill(process.pid, 'SIGKILL');
    return original(...args);
  };
}
syncBuiltinESMExports();

const { openWorkspaceStore } = await import('../../server/store/index.js');
const store = await openWorkspaceStore({ stateDir: stateDir!, workspaceDir: workspaceDir!, compactAfterIdleMs: Number.POSITIVE_INFINITY });
const before = calls;
const report = await store.compact({ force: true });
const during = calls - before;
await store.close();
process.stdout.write(JSON.stringify({ calls: during, first: before, report }));
