/**
 * Run in a child process by `compaction-robustness.test.ts`: opens a store
 * and compacts it, killing itself with SIGKILL at a point given as
 * `file:N` (its Nth call on files: every open, write, sync and close of its
 * temporary pack and index, and every rename and removal) or `yield:N`
 * (the Nth turn it gives the event loop while it plans and encodes).
 * Prints how many of each it made when it is not killed (`none`), and which
 * of the file calls were renames and removals (`moves`: their numbers).
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const [stateDir, workspaceDir, killAtText = 'none'] = process.argv.slice(2);
const [killKind, killAtNumber] = killAtText.split(':');
const killAt = Number(killAtNumber);
const require = createRequire(import.meta.url);
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
const counts = { file: 0, yield: 0 };
/** The numbers of the file calls that renamed or removed a file. */
const moves: number[] = [];
let counting = false;
const point = (kind: 'file' | 'yield'): void => {
  if (counting && ++counts[kind] === killAt && kind === killKind) process.kill(process.pid, 'SIGKILL');
};
for (const name of ['rename', 'rm', 'unlink'] as const) {
  const original = fsp[name] as (...args: unknown[]) => Promise<unknown>;
  (fsp as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    point('file');
    if (counting) moves.push(counts.file);
    return original(...args);
  };
}
const open = fsp.open;
(fsp as unknown as Record<string, unknown>)['open'] = async (...args: Parameters<typeof open>) => {
  if (String(args[0]).includes('/tmp_')) point('file');
  const handle = await open(...args);
  if (!String(args[0]).includes('/tmp_')) return handle;
  for (const name of ['write', 'writeFile', 'sync', 'close'] as const) {
    const original = (handle[name] as (...a: unknown[]) => Promise<unknown>).bind(handle);
    (handle as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
      point('file');
      return original(...a);
    };
  }
  return handle;
};
syncBuiltinESMExports();
const immediate = globalThis.setImmediate;
globalThis.setImmediate = ((callback: (...a: unknown[]) => void, ...rest: unknown[]) => {
  point('yield');
  return immediate(callback, ...rest);
}) as typeof setImmediate;

const { openWorkspaceStore } = await import('../../server/store/index.js');
const store = await openWorkspaceStore({ stateDir: stateDir!, workspaceDir: workspaceDir!, compactAfterIdleMs: Number.POSITIVE_INFINITY });
counting = true;
const report = await store.compact({ force: true });
counting = false;
await store.close();
process.stdout.write(JSON.stringify({ ...counts, moves, report }));
