import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState, type SessionState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn as record, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest, startTestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_s, c) => (client = c));

type Meta = {
  path: string;
  kind: string;
  oldPath?: string;
  similarity?: number;
  oversized?: boolean;
  beforeMode?: string;
  afterMode?: string;
  afterOid?: string;
};
const meta = (state: ChangesetState) => state.files.map((f) => f._meta as unknown as Meta);

const ready = (uri: string) => subscribeReady(client, uri);
const recordTurn = (session: string, turnId: string, edit: () => void) => record(client, session, turnId, edit);

describe('changeset files', () => {
  it('reports renames, mode changes, oversized files and changes inside nested repositories', async () => {
    const body = Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join('');
    const repo = makeRepo(temp.make(), { 'old-name.txt': body, 'moved.txt': 'same content\n', 'run.sh': 'echo hi\n' });
    const nested = join(repo, 'vendor', 'lib');
    mkdirSync(nested, { recursive: true });
    makeRepo(nested, { 'inner.txt': 'inner\n' });
    await client.request('createSession', { channel: 'ahp-session:/K', workingDirectory: pathToFileURL(repo).href });
    await recordTurn('ahp-session:/K', 't', () => {
      writeFileSync(join(repo, 'new-name.txt'), body.replace('line 3\n', 'line three\n'));
      renameSync(join(repo, 'moved.txt'), join(repo, 'moved-exactly.txt'));
      chmodSync(join(repo, 'run.sh'), 0o755);
      writeFileSync(join(repo, 'big.bin'), Buffer.alloc(9 * 1024 * 1024, 'x'));
      writeFileSync(join(nested, 'inner.txt'), 'inner changed\n');
      rmSync(join(repo, 'old-name.txt'));
    });
    const state = await ready(expandChangesetUri(changesetUriTemplate('K', 'turn'), { turnId: 't' }));
    const byPath = new Map(meta(state).map((m) => [m.path, m]));
    expect(byPath.get('moved-exactly.txt')).toMatchObject({ kind: 'renamed', oldPath: 'moved.txt', similarity: 1 });
    expect(byPath.get('run.sh')).toMatchObject({ kind: 'mode', beforeMode: '100644', afterMode: '100755' });
    expect(byPath.get('big.bin')).toMatchObject({ kind: 'added', oversized: true });
    expect(byPath.get('vendor/lib/inner.txt')).toMatchObject({ kind: 'modified' });
    expect(byPath.get('new-name.txt')).toMatchObject({ kind: 'renamed', oldPath: 'old-name.txt' });
    expect(byPath.get('new-name.txt')!.similarity).toBeGreaterThan(0.5);
    expect(byPath.get('new-name.txt')!.similarity).toBeLessThan(1);
    expect(byPath.has('old-name.txt')).toBe(false);
    const big = state.files.find((f) => (f._meta as unknown as Meta).path === 'big.bin')!;
    expect(big.edit.diff).toEqual({ added: 0, removed: 0 });

    // Content read back equals the bytes on disk and the blob git hashes for them.
    const inner = state.files.find((f) => (f._meta as unknown as Meta).path === 'vendor/lib/inner.txt')!;
    const read = await client.request<{ data: string; encoding: string }>('resourceRead', { channel: 'ahp-root://', uri: inner.edit.after!.content });
    expect(read.data).toBe(readFileSync(join(nested, 'inner.txt'), 'utf8'));
    expect(git(nested, ['hash-object', 'inner.txt'])).toBe((inner._meta as unknown as Meta).afterOid);
    client.assertValid();
  });

  it('gives multi-root sessions combined and per-directory changesets', async () => {
    const a = makeRepo(temp.make('alpha-'), { 'x.txt': 'x\n' });
    const b = temp.make('beta-');
    writeFiles(b, { 'y.txt': 'y\n' });
    await client.request('createSession', {
      channel: 'ahp-session:/M',
      config: { workingDirectories: [pathToFileURL(a).href, pathToFileURL(b).href] },
    });
    await client.subscribe('ahp-session:/M');
    const catalogue = client.state<SessionState>('ahp-session:/M')!.changesets!;
    expect(catalogue.filter((c) => c.uriTemplate.includes('/dir/')).map((c) => c.uriTemplate.replace(/.*\/dir\//, 'dir/'))).toEqual([
      'dir/0/session',
      'dir/0/turn/{turnId}',
      'dir/0/uncommitted',
      'dir/1/session',
      'dir/1/turn/{turnId}',
    ]);
    await recordTurn('ahp-session:/M', 't', () => {
      writeFiles(a, { 'x.txt': 'X\n' });
      writeFiles(b, { 'y.txt': 'Y\n' });
    });
    const turn = expandChangesetUri(changesetUriTemplate('M', 'turn'), { turnId: 't' });
    const both = meta(await ready(turn)).map((m) => m.path);
    expect(both).toHaveLength(2);
    expect(both[0]).toMatch(/^alpha-.*\/x\.txt$/);
    expect(both[1]).toMatch(/^beta-.*\/y\.txt$/);
    const onlyB = meta(await ready(expandChangesetUri(changesetUriTemplate('M', 'turn', 1), { turnId: 't' }))).map((m) => m.path);
    expect(onlyB).toEqual([both[1]]);
    const uncommitted = meta(await ready(changesetUriTemplate('M', 'uncommitted'))).map((m) => m.path);
    expect(uncommitted).toEqual([both[0]]);
  });
});

describe('large changesets', () => {
  it('carry the first maxFiles files and the totals of all in _meta', async () => {
    const small = await startTestService({ changesetMaxFiles: 3 });
    try {
      const c = await small.client();
      const dir = temp.make();
      writeFiles(dir, { 'seed.txt': 'x\n' });
      await c.request('createSession', { channel: 'ahp-session:/L', workingDirectory: pathToFileURL(dir).href });
      await record(c, 'ahp-session:/L', 't', () => writeFiles(dir, Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}.txt`, 'a\nb\n']))));
      const state = await subscribeReady(c, expandChangesetUri(changesetUriTemplate('L', 'turn'), { turnId: 't' }));
      expect(state.files.map((f) => (f._meta as unknown as Meta).path)).toEqual(['f0.txt', 'f1.txt', 'f2.txt']);
      expect(state._meta).toEqual({ totalFiles: 7, additions: 14, deletions: 0, truncated: true });
      c.assertValid();
    } finally {
      await small.stop();
    }
  });
});
