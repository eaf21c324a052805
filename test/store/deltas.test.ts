import { readdirSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyDelta } from '../../server/store/delta.js';
import { createDelta } from '../../server/store/delta-encoder.js';
import { writePack } from '../../server/store/pack-writer.js';
import { MAX_DELTA_DEPTH } from '../../server/store/repack.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { editLine, recordTurns, sourceFile } from './delta-history.js';
import { git, useStoreFixture } from './git-fixture.js';

useMemoryTempDir();

/** Each entry of the store's packs as `git verify-pack -v` lists it: deltas with their depth and base. */
function packEntries(shadowDir: string): { oid: string; type: string; depth: number; base?: string }[] {
  const packDir = join(shadowDir, 'objects', 'pack');
  const out: { oid: string; type: string; depth: number; base?: string }[] = [];
  for (const name of readdirSync(packDir).filter((n) => n.endsWith('.idx'))) {
    for (const line of git(packDir, ['verify-pack', '-v', join(packDir, name)]).split('\n')) {
      const m = /^([0-9a-f]{40}) (\w+)\s+\d+ \d+ \d+(?: (\d+) ([0-9a-f]{40}))?$/.exec(line);
      if (m) out.push({ oid: m[1]!, type: m[2]!, depth: m[3] ? Number(m[3]) : 0, ...(m[4] ? { base: m[4] } : {}) });
    }
  }
  return out;
}

function packCount(shadowDir: string): number {
  return readdirSync(join(shadowDir, 'objects', 'pack')).filter((n) => n.endsWith('.pack')).length;
}

function project(files: number, lines: number): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i < files; i++) map.set(`src/dir${i % 3}/file${i}.ts`, sourceFile(i, lines));
  return map;
}

describe('delta encoding', () => {
  it('turns any base into any target, and a one-line edit of a 300-line file into a delta of a few dozen bytes', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
    // One assertion over the 500 rounds (the rounds whose delta does not give the target back): 500 `expect`s cost more than the deltas.
    const wrong: { round: number; base: Buffer; target: Buffer; got: Buffer }[] = [];
    for (let round = 0; round < 500; round++) {
      const base = Buffer.from(Array.from({ length: Math.floor(random() * 400) }, () => Math.floor(random() * 3)));
      const target = Buffer.from(
        Array.from({ length: Math.floor(random() * 400) }, (_, i) => (random() < 0.7 && i < base.length ? base[i]! : Math.floor(random() * 3))),
      );
      const got = applyDelta(base, createDelta(base, target)!);
      if (!got.equals(target)) wrong.push({ round, base, target, got });
    }
    expect(wrong).toEqual([]);
    const text = sourceFile(1, 300);
    const edited = Buffer.from(editLine(text, 150, 'edited'));
    const delta = createDelta(Buffer.from(text), edited)!;
    expect(applyDelta(Buffer.from(text), delta)).toEqual(edited);
    expect(delta.byteLength).toBeLessThan(64);
    // A delta no smaller than the limit is not made.
    expect(createDelta(Buffer.from('abc'), Buffer.from('xyz'.repeat(50)), 100)).toBeUndefined();
  });
});

describe('compaction with deltas', () => {
  const fx = useStoreFixture();

  it('stores each version as a delta against the next newer one of its path: git reads every version, fsck --full passes, chains stay short', async () => {
    const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const files = project(4, 200);
    const versions = await recordTurns(store, 'session-a', files, { turns: 30, perTurn: 2 });
    await store.flush();
    const sizeBefore = await store.storeSize();
    const report = await store.compact({ force: true });
    expect(report.compacted).toBe(true);
    expect(report.packsAfter).toBe(1);
    const sizeAfter = await store.storeSize();
    // 15 versions of each of 4 files of ~17 KB: whole they take about a megabyte, as deltas a small share of it (a 25th).
    expect(sizeAfter).toBeLessThan(sizeBefore / 5);

    const entries = packEntries(store.layout.shadowDir);
    const deltas = entries.filter((e) => e.base !== undefined);
    expect(deltas.length).toBeGreaterThan(versions.size / 2);
    expect(Math.max(...entries.map((e) => e.depth))).toBeLessThanOrEqual(MAX_DELTA_DEPTH);
    // The newest version of each file is whole: the one read most is the cheapest.
    const blobOids = new Set(entries.filter((e) => e.type === 'blob' && e.base === undefined).map((e) => e.oid));
    for (const text of files.values()) {
      const oid = git(fx.root, ['hash-object', '--stdin'], text).trim();
      expect(blobOids.has(oid)).toBe(true);
    }
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
    for (const [oid, text] of versions) {
      expect(Buffer.from((await store.readObject(oid)).content).toString()).toBe(text);
    }
    const batch = git(fx.root, ['--git-dir', store.layout.shadowDir, 'cat-file', '--batch-check=%(objectname) %(objectsize)'], [...versions.keys()].join('\n'));
    for (const [oid, text] of versions) expect(batch).toContain(`${oid} ${Buffer.byteLength(text)}`);

    // More turns, compacted again: the old deltas are copied, the store keeps every version.
    const more = await recordTurns(store, 'session-a', files, { turns: 10, perTurn: 2, firstTurn: 30, versions: new Map() });
    await store.flush();
    const second = await store.compact({ force: true });
    expect(second.packsAfter).toBe(1);
    for (const [oid, text] of [...versions, ...more]) expect(Buffer.from((await store.readObject(oid)).content).toString()).toBe(text);
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);

    // Reopened, the store reads the compacted pack as it is.
    await store.close();
    const reopened = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    for (const [oid, text] of more) expect(Buffer.from((await reopened.readObject(oid)).content).toString()).toBe(text);
  });

  it('compacts by itself once the store has been quiet', async () => {
    // The turns recorded by a store that never compacts by itself, then one more by a store that does after 100 ms of quiet:
    // no compaction can start between the first turns, however slow the machine.
    const recording = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const files = project(4, 1500);
    const versions = await recordTurns(recording, 'session-a', files, { turns: 11, perTurn: 4 });
    await recording.close();
    const store = await fx.open({ compactAfterIdleMs: 100 });
    await recordTurns(store, 'session-a', files, { turns: 1, perTurn: 4, firstTurn: 11, versions });
    expect(packCount(store.layout.shadowDir)).toBeGreaterThan(1);
    const deadline = Date.now() + 20_000;
    while (packCount(store.layout.shadowDir) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(packCount(store.layout.shadowDir)).toBe(1);
    expect(packEntries(store.layout.shadowDir).some((e) => e.base !== undefined)).toBe(true);
  });

  it('a retention pass that drops the session holding a kept delta’s base stores that object whole: the kept session reads back, fsck --full passes', async () => {
    const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const files = project(3, 400);
    // The kept session wrote the older versions; the dropped one the newer, which compaction makes their bases.
    const kept = await recordTurns(store, 'kept', files, { turns: 6, perTurn: 3 });
    const dropped = await recordTurns(store, 'dropped', files, { turns: 6, perTurn: 3, firstTurn: 6, versions: new Map() });
    await store.markSessionEnded('dropped');
    await store.flush();
    await store.compact({ force: true });
    const entries = packEntries(store.layout.shadowDir);
    const byOid = new Map(entries.map((e) => [e.oid, e]));
    const leaning = [...kept.keys()].filter((oid) => !dropped.has(oid) && dropped.has(byOid.get(oid)?.base ?? ''));
    expect(leaning.length).toBeGreaterThan(0);

    const report = await store.enforceBudget({ budgetBytes: 1, graceMs: 0 });
    expect(report.droppedSessions.map((s) => s.sessionId)).toEqual(['dropped']);
    const after = new Map(packEntries(store.layout.shadowDir).map((e) => [e.oid, e]));
    for (const oid of leaning) expect(after.get(oid)?.base).toBeUndefined();
    for (const [oid, text] of kept) expect(Buffer.from((await store.readObject(oid)).content).toString()).toBe(text);
    expect([...dropped.keys()].filter((oid) => !kept.has(oid) && after.has(oid))).toEqual([]);
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
    // Kept deltas whose base stayed are still deltas.
    expect([...after.values()].some((e) => e.base !== undefined)).toBe(true);
  });

  it('consolidating packs after a compaction keeps its deltas', async () => {
    const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY, maxPacks: 4 });
    const files = project(3, 300);
    const versions = await recordTurns(store, 's', files, { turns: 8, perTurn: 3 });
    await store.flush();
    await store.compact({ force: true });
    const deltas = packEntries(store.layout.shadowDir).filter((e) => e.base !== undefined).length;
    expect(deltas).toBeGreaterThan(0);
    // Enough flushes to pass maxPacks, then a retention pass (rewrites every pack) with nothing to drop.
    await recordTurns(store, 's', files, { turns: 4, perTurn: 3, firstTurn: 8, versions });
    await store.enforceBudget({ budgetBytes: 1, graceMs: 0 });
    expect(packEntries(store.layout.shadowDir).filter((e) => e.base !== undefined).length).toBeGreaterThanOrEqual(deltas);
    for (const [oid, text] of versions) expect(Buffer.from((await store.readObject(oid)).content).toString()).toBe(text);
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--full', '--strict', '--no-dangling']);
  });
});

describe('a crafted pack in the store', () => {
  const fx = useStoreFixture();

  it('with two ref-deltas naming each other as base fails with a precise error instead of recursing for ever', async () => {
    const store = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    const packDir = join(store.layout.shadowDir, 'objects', 'pack');
    await store.close();
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const delta = Buffer.from([5, 5, 0x90, 5]); // base 5 bytes, result 5 bytes, copy 5 from 0
    const refDelta = (base: string): Buffer => Buffer.concat([Buffer.from([0x70 | delta.byteLength]), Buffer.from(base, 'hex'), deflateSync(delta)]);
    await writePack(
      packDir,
      [
        { kind: 'raw', oid: a, entry: refDelta(b) },
        { kind: 'raw', oid: b, entry: refDelta(a) },
      ],
      2,
    );
    const reopened = await fx.open({ compactAfterIdleMs: Number.POSITIVE_INFINITY });
    await expect(reopened.readObject(a)).rejects.toThrow(/delta chain loops back/);
  });
});
