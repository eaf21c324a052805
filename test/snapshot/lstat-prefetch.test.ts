import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readIndexBytes } from '../../server/snapshot/index-file.js';
import { LstatPrefetch } from '../../server/snapshot/lstat-prefetch.js';
import { git, gitEnv, gitTree, initRepo, removeDir, tempDir } from './helpers.js';
import { SnapshotFixture, write } from './snapshot-fixture.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const fixture = new SnapshotFixture();
/** Lower than the default, so these repositories stay quick to make; the prefetch works the same at any size. */
const MIN_ENTRIES = 4096;
afterEach(() => fixture.cleanup());

/**
 * A committed repository with more files than the prefetch needs to start,
 * made once; each test works on its own copy. The commit is written by
 * `git fast-import` (one pack, not thousands of loose objects to write and
 * later delete) and the index read from it, then refreshed against the files.
 */
let template: string;
const paths: string[] = [];
beforeAll(() => {
  template = join(tempDir(), 'ws');
  initRepo(template);
  const commands = [`commit refs/heads/main\ncommitter Test <test@example.com> ${Math.floor(Date.now() / 1000)} +0000\ndata 5\nfiles\n`];
  for (let i = 0; i < 280; i++) mkdirSync(join(template, `d${i % 40}/e${i % 7}`), { recursive: true });
  for (let i = 0; i < MIN_ENTRIES + 1000; i++) {
    const rel = `d${i % 40}/e${i % 7}/f${i}.txt`;
    const content = `file ${i}\n`;
    writeFileSync(join(template, rel), content);
    commands.push(`M 100644 inline ${rel}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
    paths.push(rel);
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: template, env: gitEnv, input: commands.join('') });
  git(template, ['read-tree', 'HEAD']);
  git(template, ['update-index', '-q', '--refresh']);
  expect(git(template, ['status', '--porcelain'])).toBe('');
}, 120_000);
afterAll(() => removeDir(join(template, '..')));

/** A copy of the big repository (see {@link SnapshotFixture.linkedCopy}); `ownCopies` are the files the test writes in place or chmods. */
function bigRepository(ownCopies: readonly string[] = []): { root: string; cacheDir: string; paths: string[] } {
  return { ...fixture.linkedCopy(template, ownCopies), paths };
}

describe('lstat prefetch on a first snapshot', () => {
  it.each([2, 3, 4])('gives the walk exactly what lstat gives, for every entry of a version %i index, numbered as the index orders them', async (version) => {
    const { root, paths } = bigRepository();
    git(root, ['update-index', '--index-version', String(version)]);
    if (version === 3) git(root, ['update-index', '--skip-worktree', paths[20]!]);
    rmSync(join(root, paths[10]!));
    const prefetch = LstatPrefetch.start(root, readIndexBytes(join(root, '.git', 'index'))!.buf, 2, MIN_ENTRIES)!;
    expect(prefetch).toBeDefined();
    await prefetch.finished;
    // The index's own order, as git lists it.
    const listed = git(root, ['ls-files', '-z']).split('\0').filter(Boolean);
    expect(listed).toHaveLength(paths.length);
    let compared = 0;
    // One assertion over all entries: 5,000 separate `expect`s cost seconds, the comparison itself milliseconds.
    const differing: { rel: string; got: unknown; want: unknown }[] = [];
    listed.forEach((rel, i) => {
      const got = prefetch.take(i);
      if (rel === paths[10]) {
        if (got !== undefined) differing.push({ rel, got, want: undefined });
        return;
      }
      const st = lstatSync(join(root, rel));
      const want = { mode: st.mode, size: st.size, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
      if (!isDeepStrictEqual(got, want)) differing.push({ rel, got, want });
      compared++;
    });
    expect(differing).toEqual([]);
    expect(compared).toBe(paths.length - 1);
    prefetch.stop();
  });

  it('is not started for a small index or a single CPU', () => {
    const { root } = fixture.workspace();
    write(root, 'a.txt', 'a\n');
    git(root, ['add', '-A']);
    expect(LstatPrefetch.start(root, readIndexBytes(join(root, '.git', 'index'))!.buf, 2, MIN_ENTRIES)).toBeUndefined();
    expect(LstatPrefetch.start(root, readIndexBytes(join(root, '.git', 'index'))!.buf, 1, 1)).toBeUndefined();
    expect(LstatPrefetch.start(root, readIndexBytes(join(root, '.git', 'index'))!.buf, 2, 1)).toBeDefined();
  });

  it('snapshots the tree git writes when files changed, vanished, changed kind and mode since the index was written', async () => {
    const rewritten = Array.from({ length: 60 }, (_, i) => paths[i * 50]!);
    const chmodded = Array.from({ length: 5 }, (_, i) => paths[i * 50 + 17]!);
    const { root, cacheDir } = bigRepository([...rewritten, ...chmodded]);
    // An entry the seed does not trust, early in the index: the worker's numbering still counts it.
    git(root, ['update-index', '--skip-worktree', paths[1]!]);
    // Unchanged entries are older than the index (the copy's files were written before its index), so the seed trusts them.
    for (let i = 0; i < 60; i++) writeFileSync(join(root, paths[i * 50]!), `FILE ${i * 50}\n`.padEnd(9 + String(i * 50).length, 'x'));
    for (let i = 0; i < 20; i++) rmSync(join(root, paths[i * 50 + 7]!));
    for (let i = 0; i < 5; i++) {
      const p = join(root, paths[i * 50 + 11]!);
      rmSync(p);
      mkdirSync(p);
      writeFileSync(join(p, 'inside.txt'), 'now a directory\n');
    }
    for (let i = 0; i < 5; i++) {
      const p = join(root, paths[i * 50 + 13]!);
      rmSync(p);
      symlinkSync('../elsewhere', p);
    }
    for (let i = 0; i < 5; i++) chmodSync(join(root, paths[i * 50 + 17]!), 0o755);
    write(root, 'untracked/new.txt', 'new\n');

    const snap = fixture.snapshotter(root, cacheDir, undefined, { prefetchMinEntries: MIN_ENTRIES });
    const result = await snap.snapshot();
    // Every file left as the index has it, whether the worker or the walk stat'ed it.
    expect(result.seededFromIndex).toBeGreaterThanOrEqual(paths.length - 100);
    expect(result.tree).toBe(gitTree(root));
  }, 60_000);

  it("takes a clean directory's tree id from the index's cache-tree only when the index holds nothing else there", async () => {
    const { root, cacheDir, paths } = bigRepository();
    // A gitlink in the index, with the cache-tree written over it: d1/e1's tree in the cache-tree holds it.
    const commit = git(root, ['rev-parse', 'HEAD']);
    git(root, ['update-index', '--add', '--cacheinfo', `160000,${commit},d1/e1/sub`]);
    git(root, ['write-tree']);
    write(root, 'd2/e2/untracked.txt', 'not in the index\n');
    rmSync(join(root, paths[3]!));

    const snap = fixture.snapshotter(root, cacheDir, undefined, { prefetchMinEntries: MIN_ENTRIES });
    const result = await snap.snapshot();
    expect(result.tree).toBe(gitTree(root));
    // Most directories were clean: their ids came from the cache-tree, not from encoding them.
    expect(result.treesWritten).toBeLessThan(20);
    expect(result.seededFromIndex).toBeGreaterThan(MIN_ENTRIES);
  }, 60_000);
});
