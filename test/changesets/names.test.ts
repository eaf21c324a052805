/**
 * File names are bytes: a name that is not UTF-8 (`caf\xe9.txt` in Latin-1)
 * is listed once under an id that percent-encodes its raw bytes, its diff and
 * content are served, and people see it as `caf\xe9.txt`.
 */
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetFile, type ChangesetState } from '../../protocol/index.js';
import { recordTurn, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
let svc: TestService;
serviceForEachTest(temp, (s) => (svc = s));

const SID = 'names';
const SESSION = `ahp-session:/${SID}`;
const turnUri = (turnId: string) => expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId });

/** A path under `root` from UTF-8 text and raw bytes, as Node's fs takes it. */
function bytesPath(root: string, ...parts: (string | number[])[]): Buffer {
  return Buffer.concat([Buffer.from(`${root}/`), ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))]);
}

interface Meta {
  path: string;
  kind: string;
  captured?: boolean;
}
const meta = (f: ChangesetFile): Meta => f._meta as unknown as Meta;
const byPath = (state: ChangesetState, path: string): ChangesetFile => state.files.find((f) => meta(f).path === path)!;

describe('names that are not UTF-8', () => {
  it('are listed once with ids percent-encoding their raw bytes, diffed, served and shown as \\xNN', async () => {
    const repo = makeRepo(temp.make(), { 'café.txt': 'utf-8 name\n', 'README.md': 'readme\n' });
    writeFileSync(bytesPath(repo, 'caf', [0xe9], '.txt'), 'one\ntwo\n');
    writeFileSync(bytesPath(repo, 'old-', [0xfe], '.txt'), 'bye\n');
    writeFileSync(bytesPath(repo, '.gitignore'), '*.log\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'latin-1 names']);
    const base = pathToFileURL(repo).href;

    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: base });
    await recordTurn(client, SESSION, 't1', () => {
      writeFileSync(bytesPath(repo, 'caf', [0xe9], '.txt'), 'one\n2\n');
      mkdirSync(bytesPath(repo, 'dir-', [0xff]));
      writeFileSync(bytesPath(repo, 'dir-', [0xff], '/new-', [0xe9], '.txt'), 'hello\n');
      rmSync(bytesPath(repo, 'old-', [0xfe], '.txt'));
    });

    const uri = turnUri('t1');
    const turn = await subscribeReady(client, uri);
    expect(turn.files.map((f) => [meta(f).path, meta(f).kind, f.id])).toEqual([
      ['caf\\xe9.txt', 'modified', `${base}/caf%E9.txt`],
      ['dir-\\xff/new-\\xe9.txt', 'added', `${base}/dir-%FF/new-%E9.txt`],
      ['old-\\xfe.txt', 'deleted', `${base}/old-%FE.txt`],
    ]);
    const cafe = byPath(turn, 'caf\\xe9.txt');
    expect([cafe.edit.before!.uri, cafe.edit.after!.uri]).toEqual([cafe.id, cafe.id]);
    expect(cafe.edit.diff).toEqual({ added: 1, removed: 1 });

    const diff = await client.request<{ kind: string; added: number; removed: number; hunks: { lines: string[] }[] }>('changesetFileDiff', {
      channel: uri,
      fileId: cafe.id,
    });
    expect(diff).toMatchObject({ kind: 'text', added: 1, removed: 1 });
    expect(diff.hunks[0]!.lines).toEqual([' one', '-two', '+2']);

    const read = (contentUri: string) => client.request<{ data: string; encoding: string }>('resourceRead', { channel: 'ahp-root://', uri: contentUri });
    expect(await read(cafe.edit.after!.content)).toMatchObject({ encoding: 'utf-8', data: 'one\n2\n' });
    expect(await read(cafe.edit.before!.content)).toMatchObject({ encoding: 'utf-8', data: 'one\ntwo\n' });
    expect(await read(byPath(turn, 'dir-\\xff/new-\\xe9.txt').edit.after!.content)).toMatchObject({ data: 'hello\n' });
    expect(await read(byPath(turn, 'old-\\xfe.txt').edit.before!.content)).toMatchObject({ data: 'bye\n' });

    // Review works on the byte id.
    client.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [cafe.id], reviewed: true });
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/filesReviewChanged');
    expect(client.state<ChangesetState>(uri)!.files.find((f) => f.id === cafe.id)!.reviewed).toBe(true);

    // Against HEAD, git's own trees name the same files the same way.
    const uncommitted = await subscribeReady(client, changesetUriTemplate(SID, 'uncommitted'));
    expect(uncommitted.files.map((f) => f.id)).toEqual(turn.files.map((f) => f.id));
    expect(readFileSync(bytesPath(repo, 'caf', [0xe9], '.txt'), 'utf8')).toBe('one\n2\n');
    client.assertValid();
  });

  it('show as \\xNN in a multi-root session, in a directory that is not a repository', async () => {
    const a = makeRepo(temp.make('alpha-'), { 'x.txt': 'x\n' });
    const b = temp.make('beta-');
    writeFileSync(bytesPath(b, 'caf', [0xe9], '.txt'), 'one\n');
    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, config: { workingDirectories: [pathToFileURL(a).href, pathToFileURL(b).href] } });
    await recordTurn(client, SESSION, 't1', () => writeFileSync(bytesPath(b, 'caf', [0xe9], '.txt'), 'two\n'));
    const turn = await subscribeReady(client, turnUri('t1'));
    expect(turn.files.map((f) => [meta(f).path, f.id])).toEqual([[`${b.split('/').pop()}/caf\\xe9.txt`, `${pathToFileURL(b).href}/caf%E9.txt`]]);
    client.assertValid();
  });

  it('captures a path with raw bytes named to beforeEdit and lists it under its byte id', async () => {
    const repo = makeRepo(temp.make(), { '.gitignore': '*.log\n' });
    writeFileSync(bytesPath(repo, 'caf', [0xe9], '.log'), 'before\n');
    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await client.request('harness/turnStarted', { channel: SESSION, turnId: 't1' });
    // JSON carries the escaped byte as a lone surrogate: "\udce9".
    const escaped = `${repo}/caf\udce9.log`;
    const { captured } = await client.request<{ captured: string[] }>('harness/beforeEdit', { channel: SESSION, turnId: 't1', paths: [escaped] });
    expect(captured).toEqual([escaped]);
    writeFileSync(bytesPath(repo, 'caf', [0xe9], '.log'), 'after\n');
    await client.request('harness/turnEnded', { channel: SESSION, turnId: 't1' });

    const turn = await subscribeReady(client, turnUri('t1'));
    expect(turn.files.map((f) => [meta(f).path, meta(f).captured, f.id])).toEqual([['caf\\xe9.log', true, `${pathToFileURL(repo).href}/caf%E9.log`]]);
    const content = await client.request<{ data: string }>('resourceRead', { channel: 'ahp-root://', uri: turn.files[0]!.edit.before!.content });
    expect(content.data).toBe('before\n');
  });
});
