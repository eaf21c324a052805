/**
 * A turn end beside a compaction (issue #22, store robustness): the store's
 * side of a turn end — 20 changed files of 60 written as blobs and trees,
 * start and end checkpoints, the new versions read back — on a store of 30
 * earlier turns, alone and while an idle compaction of that store is under
 * way (it starts just before the turn end, as when the store has been
 * quiet for its idle time), alternated round by round on copies of the same
 * store. Prints elapsed and processor time (this process: the compaction's
 * work too, which runs on the same thread) and the per-round ratios.
 *
 *   npm run bench -- store --overlap [--rounds 7]
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWorkspaceStore, serializeTree, type WorkspaceStore } from '../../server/store/index.js';
import { median } from '../common/workspace.js';

const enc = new TextEncoder();

function sourceFile(seed: number, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`export function f${seed}_${i}(value: number): number { return value * ${(seed * 31 + i * 7) % 97} + ${i}; }`);
  return `${out.join('\n')}\n`;
}

/** Writes the files (`dir/name`) as blobs and one tree per directory; returns the root tree. */
async function writeFiles(store: WorkspaceStore, files: ReadonlyMap<string, string>): Promise<string> {
  const dirs = new Map<string, { mode: string; name: string; oid: string }[]>();
  for (const [path, text] of files) {
    const [dir, name] = path.split('/') as [string, string];
    const entries = dirs.get(dir) ?? [];
    entries.push({ mode: '100644', name, oid: await store.writeObject('blob', enc.encode(text)) });
    dirs.set(dir, entries);
  }
  const top: { mode: string; name: string; oid: string }[] = [];
  for (const [name, entries] of [...dirs].sort(([a], [b]) => (a < b ? -1 : 1))) {
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    top.push({ mode: '40000', name, oid: await store.writeObject('tree', serializeTree(entries)) });
  }
  return store.writeObject('tree', serializeTree(top));
}

/** One turn: `edits` files get a changed line; returns the new blob ids. */
async function turn(store: WorkspaceStore, files: Map<string, string>, t: number, edits: number): Promise<string[]> {
  const paths = [...files.keys()];
  const before = await writeFiles(store, files);
  await store.writeCheckpoint({ sessionId: 'bench', kind: 'start', turnId: `turn-${t}`, tree: before });
  const changed: string[] = [];
  for (let k = 0; k < edits; k++) {
    const path = paths[(t * edits + k) % paths.length]!;
    const lines = files.get(path)!.split('\n');
    const at = (t * 13 + k * 5) % (lines.length - 1);
    lines[at] = `${lines[at]} // turn ${t}`;
    files.set(path, lines.join('\n'));
    changed.push(path);
  }
  const after = await writeFiles(store, files);
  await store.writeCheckpoint({ sessionId: 'bench', kind: 'end', turnId: `turn-${t}`, tree: after, turn: { state: 'complete' } });
  const oids: string[] = [];
  for (const path of changed) oids.push(await store.writeObject('blob', enc.encode(files.get(path)!)));
  return oids;
}

export async function overlapBench(rounds: number): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'bench-store-overlap-'));
  try {
    const workspace = join(root, 'ws');
    mkdirSync(workspace);
    const files = new Map<string, string>();
    for (let i = 0; i < 60; i++) files.set(`d${i % 6}/f${i}.ts`, sourceFile(i, 400));
    const base = join(root, 'base');
    const recording = await openWorkspaceStore({ stateDir: base, workspaceDir: workspace, compactAfterIdleMs: Number.POSITIVE_INFINITY });
    for (let t = 0; t < 30; t++) await turn(recording, files, t, 20);
    await recording.close();
    console.log(`turn end beside a compaction: a store of 30 turns of 20 edits to 60 files; ${rounds} rounds; load average ${loadavg()[0]!.toFixed(1)}`);

    type Side = 'alone' | 'beside';
    const times: Record<Side, number[]> = { alone: [], beside: [] };
    const cpu: Record<Side, number[]> = { alone: [], beside: [] };
    const held: number[] = [];
    const loads: number[] = [];
    for (let round = 0; round < rounds; round++) {
      loads.push(loadavg()[0]!);
      const order: Side[] = round % 2 === 0 ? ['alone', 'beside'] : ['beside', 'alone'];
      for (const side of order) {
        const stateDir = join(root, `state-${round}-${side}`);
        cpSync(base, stateDir, { recursive: true });
        const store = await openWorkspaceStore({ stateDir, workspaceDir: workspace, compactAfterIdleMs: side === 'alone' ? Number.POSITIVE_INFINITY : 0 });
        // A flush arms the idle compaction (with no idle time: it starts at once); give it a moment to get going.
        await store.flush();
        await new Promise((resolve) => setTimeout(resolve, 40));
        const mine = new Map(files);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        for (const oid of await turn(store, mine, 30 + round, 20)) await store.readObject(oid);
        times[side].push(performance.now() - t0);
        const used = process.cpuUsage(cpu0);
        cpu[side].push((used.user + used.system) / 1000);
        if (side === 'beside') held.push(store.compactionHeldMs);
        await store.close();
        rmSync(stateDir, { recursive: true, force: true });
      }
    }
    const spread = (xs: number[]): string => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    const ratios = (k: Record<Side, number[]>): number[] => k.beside.map((x, i) => x / k.alone[i]!);
    const r = ratios(times);
    const rc = ratios(cpu);
    console.log(`  alone:             ${median(times.alone).toFixed(0)} ms (${spread(times.alone)}), processor time ${median(cpu.alone).toFixed(0)} ms`);
    console.log(
      `  beside compaction: ${median(times.beside).toFixed(0)} ms (${spread(times.beside)}), processor time ${median(cpu.beside).toFixed(0)} ms; the compaction held still ${median(held).toFixed(0)} ms`,
    );
    console.log(
      `  beside / alone: elapsed ${median(r).toFixed(2)} (rounds ${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}), processor time ${median(rc).toFixed(2)} (${Math.min(...rc).toFixed(2)}–${Math.max(...rc).toFixed(2)}); load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
