/**
 * A turn's line counts are `git diff --numstat`'s, file by file, whatever
 * the store holds them as: the files a turn end has just written (kept in
 * memory, packed uncompressed) and the versions before (read from the
 * workspace repository or an earlier turn). Stock git reads the shadow store
 * those counts came from, and finds it whole.
 */
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { writePack } from '../../server/store/pack-writer.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
const services: TestService[] = [];
afterEach(async () => {
  await Promise.allSettled(services.splice(0).map((s) => s.stop()));
  temp.cleanup();
});

const lines = (n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${edit[i] ?? `line ${i + 1}`}\n`).join('');
const binary = (seed: number) => Buffer.from(Array.from({ length: 300 }, (_, i) => (i * seed) % 256));

/** `git diff --numstat -M` between two trees of the shadow store: new path → "added\tdeleted" ("-\t-" for binary files). */
function gitNumstat(shadowDir: string, cwd: string, before: string, after: string): Map<string, string> {
  const out = git(cwd, ['--git-dir', shadowDir, 'diff', '--numstat', '-M', '-z', before, after]);
  const fields = out.split('\0');
  const counts = new Map<string, string>();
  for (let i = 0; i < fields.length; i++) {
    const line = fields[i]!;
    if (line === '') continue;
    const [added, deleted, path] = line.split('\t');
    // A rename: the path field is empty, the old and new paths follow as fields of their own.
    if (path === '') {
      counts.set(fields[i + 2]!, `${added}\t${deleted}`);
      i += 2;
    } else counts.set(path!, `${added}\t${deleted}`);
  }
  return counts;
}

function ourNumstat(summary: TurnSummary): Map<string, string> {
  return new Map(summary.files.map((f) => [f.path, f.binary ? '-\t-' : `${f.added}\t${f.deleted}`]));
}

describe("a turn's line counts", () => {
  it('equal git diff --numstat for CRLF, no final newline, binary, 0-byte files, a rename with edits and a file changed in two turns in a row', async () => {
    const t = await startTestService();
    services.push(t);
    const client = await t.client();
    const repo = makeRepo(temp.make('ws-'), {
      'a.txt': lines(5),
      'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
      'nofinal.txt': 'x\ny',
      'bin.dat': binary(7),
      'empty.txt': '',
      'old.ts': lines(20),
      'gone.txt': 'bye\n',
    });
    const session = await t.service.openWorkspace([repo]);
    const shadowDir = session.files.root(0).store.layout.shadowDir;
    const turn = async (id: string, edit: () => void): Promise<TurnSummary> => {
      await client.request('harness/turnStarted', { channel: session.uri, turnId: id }, { timeoutMs: 60_000 });
      edit();
      const { summary } = await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: session.uri, turnId: id }, { timeoutMs: 120_000 });
      return summary;
    };

    const first = await turn('t1', () => {
      writeFiles(repo, {
        'a.txt': lines(6, { 1: 'changed' }),
        'crlf.txt': 'one\r\nTWO\r\nthree\r\nfour\r\n',
        'nofinal.txt': 'x\ny\n',
        'bin.dat': binary(11),
        'empty.txt': 'now\nfull\n',
        'zero.txt': '',
      });
      writeFiles(repo, { 'old.ts': lines(20, { 9: 'edited while moving' }) });
      renameSync(join(repo, 'old.ts'), join(repo, 'new.ts'));
      rmSync(join(repo, 'gone.txt'));
    });
    const second = await turn('t2', () => {
      writeFiles(repo, {
        'a.txt': lines(4, { 0: 'again' }),
        'empty.txt': '',
        'new.ts': lines(21, { 9: 'edited while moving', 15: 'and after' }),
        'bin.dat': 'text now\n',
        'nofinal.txt': 'x\ny\nz',
      });
    });

    expect(first.total).toBe(8);
    expect(second.total).toBe(5);
    expect(first.files.find((f) => f.path === 'new.ts')).toBeDefined();
    for (const summary of [first, second]) {
      const ours = ourNumstat(summary);
      expect(ours).toEqual(gitNumstat(shadowDir, repo, summary.snapshot!.before, summary.snapshot!.after));
      expect(summary.added).toBe([...ours.values()].reduce((n, c) => n + (Number.parseInt(c, 10) || 0), 0));
    }
    // The packs these turns wrote are ones stock git reads whole.
    git(repo, ['--git-dir', shadowDir, 'fsck', '--full', '--no-dangling']);
  }, 120_000);

  it('leave a store that compaction makes no bigger than packs compressed as they are written', async () => {
    const t = await startTestService();
    services.push(t);
    const client = await t.client();
    const files = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`src/m${i % 6}/f${i}.ts`, lines(10 + (i % 30))]));
    const repo = makeRepo(temp.make('ws-'), files);
    const session = await t.service.openWorkspace([repo]);
    const store = session.files.root(0).store;
    const shadowDir = store.layout.shadowDir;
    for (let k = 1; k <= 2; k++) {
      await client.request('harness/turnStarted', { channel: session.uri, turnId: `t${k}` }, { timeoutMs: 60_000 });
      writeFiles(repo, Object.fromEntries(Object.keys(files).map((path, i) => [path, lines(10 + (i % 30), { [k]: `turn ${k} of ${path}` })])));
      await client.request('harness/turnEnded', { channel: session.uri, turnId: `t${k}` }, { timeoutMs: 120_000 });
    }
    const packDir = join(shadowDir, 'objects', 'pack');
    const packBytes = (dir: string) =>
      readdirSync(dir)
        .filter((n) => n.endsWith('.pack'))
        .reduce((sum, n) => sum + statSync(join(dir, n)).size, 0);

    // Every object of the shadow packs, written again as one pack compressed at zlib level 1 (how flushes wrote them before).
    const ids = git(repo, ['--git-dir', shadowDir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)']).split('\n');
    const objects = await Promise.all(ids.map(async (oid) => ({ oid, ...(await store.readObject(oid)) })));
    const compressedDir = temp.make('cs-level1-');
    await writePack(
      compressedDir,
      objects.map((o) => ({ kind: 'object' as const, oid: o.oid, type: o.type, content: o.content })),
      objects.length,
      { level: 1 },
    );
    const report = await store.compact({ force: true });
    expect(report.compacted).toBe(true);
    expect(packBytes(packDir)).toBeLessThanOrEqual(packBytes(compressedDir));
    git(repo, ['--git-dir', shadowDir, 'fsck', '--full', '--no-dangling']);
  }, 120_000);
});
