import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serializeTree } from '../../server/store/index.js';
import { git, useStoreFixture } from './git-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const enc = new TextEncoder();

describe('pack compaction', () => {
  const fx = useStoreFixture();

  it('compacts many small packs into one, atomically: a reader running all along never misses an object', async () => {
    const store = await fx.open({ maxPacks: 8 });
    const packDir = join(store.layout.shadowDir, 'objects', 'pack');
    const written: { oid: string; text: string }[] = [];
    let reads = 0;
    let failure: unknown;
    let stop = false;
    // Reads every object written so far, over and over, while packs are written and compacted underneath. It yields
    // to the event loop every few reads, so reads land between every two steps of a compaction; a whole pass between
    // two steps made each step wait for hundreds of reads.
    const reader = (async () => {
      while (!stop) {
        for (const [i, { oid, text }] of [...written].entries()) {
          try {
            const object = await store.readObject(oid);
            if (Buffer.from(object.content).toString() !== text) throw new Error(`${oid} read back wrong`);
            reads++;
          } catch (error) {
            failure ??= error;
          }
          if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();

    const packCounts: number[] = [];
    for (let flush = 0; flush < 30; flush++) {
      for (let i = 0; i < 20; i++) {
        const text = `flush ${flush} object ${i}\n`.repeat(1 + i);
        written.push({ oid: await store.writeObject('blob', enc.encode(text)), text });
      }
      await store.flush();
      packCounts.push((await readdir(packDir)).filter((n) => n.endsWith('.pack')).length);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    stop = true;
    await reader;

    expect(failure).toBeUndefined();
    expect(reads).toBeGreaterThan(written.length);
    // Packs never pile up past the limit: each time they pass it, the small ones become one.
    expect(Math.max(...packCounts)).toBeLessThanOrEqual(8);
    expect(packCounts).toContain(1);

    // A retention pass compacts whatever is left into exactly one pack.
    const report = await store.enforceBudget({ budgetBytes: 1, graceMs: 0 });
    expect(report.packsAfter).toBeLessThanOrEqual(1);
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--no-dangling']);
  });

  it('a retention pass leaves one pack holding everything still referenced, each object readable', async () => {
    const store = await fx.open({ maxPacks: 50 });
    const blobs: string[] = [];
    for (let flush = 0; flush < 12; flush++) {
      blobs.push(await store.writeObject('blob', enc.encode(`kept ${flush}\n`)));
      await store.flush();
    }
    const tree = await store.writeObject('tree', serializeTree(blobs.map((oid, i) => ({ mode: '100644', name: `f${i}`, oid }))));
    await store.writeCheckpoint({ sessionId: 'live', kind: 'start', turnId: 't', tree });
    const packDir = join(store.layout.shadowDir, 'objects', 'pack');
    expect((await readdir(packDir)).filter((n) => n.endsWith('.pack')).length).toBeGreaterThan(10);

    const report = await store.enforceBudget({ budgetBytes: 1, graceMs: 0 });
    expect(report.packsBefore).toBeGreaterThan(10);
    expect(report.packsAfter).toBe(1);
    expect((await readdir(packDir)).filter((n) => n.endsWith('.pack'))).toHaveLength(1);
    for (let i = 0; i < blobs.length; i++) expect(Buffer.from((await store.readObject(blobs[i]!)).content).toString()).toBe(`kept ${i}\n`);
    git(fx.root, ['--git-dir', store.layout.shadowDir, 'fsck', '--no-dangling']);
  });
});
