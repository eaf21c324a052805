/**
 * The cost of writing safely: an operation's write phase over 1,000 files
 * with our compare-and-swap (directories pinned inside the workspace, each
 * file checked against the planned version, taken off its name, the new one
 * linked in; the versions replaced checked again, and for processes holding
 * them open for writing, after the last write) against the naive atomic write it replaced (temporary file, fsync,
 * rename; no checks). Both read the planned versions first, as planning
 * does, and both fsync file contents. Rounds alternate ours and the anchor
 * in one process run; medians and the ratio are printed.
 *
 *   npm run bench -- operations [--files 1000] [--rounds 9] [--size 4096]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, lstat, mkdir, open, rename } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ContainedDirs } from '../../server/disk/contained-dirs.js';
import { newSwapNames } from '../../server/disk/file-swap.js';
import { WriteBatch } from '../../server/disk/write-batch.js';
import { readDiskFile } from '../../server/disk/workspace-file.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const FILES = Number(option('files', '1000'));
const ROUNDS = Number(option('rounds', '9'));
const SIZE = Number(option('size', '4096'));

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const root = mkdtempSync(join(tmpdir(), 'bench-operations-'));
const paths = Array.from({ length: FILES }, (_, i) => join(root, `dir${i % 20}`, `file${i}.txt`));
for (let i = 0; i < 20; i++) mkdirSync(join(root, `dir${i}`));
for (const p of paths) writeFileSync(p, randomBytes(SIZE));

/** The write phase as it was: a temporary file, fsync, rename, directory fsync; nothing checked. */
async function naive(next: Buffer[]): Promise<void> {
  for (const p of paths) await readDiskFile(p);
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i]!;
    await mkdir(dirname(p), { recursive: true });
    const tmp = join(dirname(p), `.${basename(p)}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(tmp, 'wx', 0o644);
    await handle.writeFile(next[i]!);
    await handle.sync();
    await handle.close();
    await chmod(tmp, 0o644);
    await lstat(p);
    await rename(tmp, p);
    const dir = await open(dirname(p), 'r');
    await dir.sync().catch(() => undefined);
    await dir.close();
  }
}

/** Ours, as an operation writes: every write compared and swapped, the versions replaced checked again (and for writers) at the end. */
async function ours(next: Buffer[]): Promise<void> {
  const planned = [];
  for (const p of paths) planned.push(await readDiskFile(p));
  const dirs = new ContainedDirs([root]);
  const batch = new WriteBatch(dirs);
  try {
    for (let i = 0; i < paths.length; i++) {
      const current = planned[i]!;
      await batch.write({
        absPath: paths[i]!,
        display: basename(paths[i]!),
        names: newSwapNames(),
        expected: { oid: current.oid, mode: current.mode, identity: current.identity },
        next: { content: next[i]!, mode: '100644', perm: current.perm },
      });
    }
    await batch.settle();
    await batch.release();
    await dirs.sync();
  } finally {
    await dirs.close();
  }
}

const times = { ours: [] as number[], naive: [] as number[] };
const fresh = () => paths.map(() => randomBytes(SIZE));
await ours(fresh());
await naive(fresh());
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of round % 2 === 0
    ? ([
        ['ours', ours],
        ['naive', naive],
      ] as const)
    : ([
        ['naive', naive],
        ['ours', ours],
      ] as const)) {
    const next = fresh();
    const t = performance.now();
    await run(next);
    times[name].push(performance.now() - t);
  }
}
rmSync(root, { recursive: true, force: true });

const o = median(times.ours);
const n = median(times.naive);
console.log(`machine: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load ${loadavg()[0]!.toFixed(2)}`);
console.log(`operation write phase, ${FILES} files of ${SIZE} bytes, ${ROUNDS} rounds alternated`);
console.log(`  naive atomic write (no checks): median ${n.toFixed(0)} ms`);
console.log(`  compare-and-swap:               median ${o.toFixed(0)} ms`);
console.log(`  ratio ours / naive: ${(o / n).toFixed(2)}x (${o >= n ? '+' : ''}${((o / n - 1) * 100).toFixed(0)}%)`);
