import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChangesetState, type SessionState } from '../../protocol/index.js';
import type { TestClient } from '../helpers/client.js';
import { recordTurn as record, subscribeReady } from '../helpers/changesets.js';
import { serviceForEachTest, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
let svc: TestService;
serviceForEachTest(temp, (s) => (svc = s));

const SID = 'S1';
const SESSION = `ahp-session:/${SID}`;

function paths(state: ChangesetState): string[] {
  return state.files.map((f) => (f._meta as { path: string }).path);
}

const recordTurn = (client: TestClient, turnId: string, edit: () => void) => record(client, SESSION, turnId, edit, `turn ${turnId}`);
const ready = subscribeReady;

describe('changesets over AHP', () => {
  it('serves the catalogue, every kind, hunks, content and review', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'one\ntwo\nthree\n', 'b.bin': Buffer.from([0, 1, 2, 3]), 'gone.txt': 'bye\n' });
    git(repo, ['checkout', '-q', '-b', 'feature']);
    writeFiles(repo, { 'committed.txt': 'on the branch\n' });
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'feature work']);

    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await client.subscribe(SESSION);
    const catalogue = client.state<SessionState>(SESSION)!.changesets!;
    expect(catalogue.map((c) => c.changeKind)).toEqual(['session', 'turn', 'compare-turns', 'step', 'since', 'uncommitted', 'branch']);
    expect(catalogue.every((c) => c.capabilities?.review)).toBe(true);
    expect(catalogue.find((c) => c.changeKind === 'branch')!.description).toContain('main');

    await recordTurn(client, 't1', () => {
      writeFiles(repo, { 'a.txt': 'one\n2\nthree\nfour', 'b.bin': Buffer.from([0, 9, 9]), 'new dir/é.txt': 'hello\n' });
      rmSync(join(repo, 'gone.txt'));
    });
    await recordTurn(client, 't 2/x?', () => writeFiles(repo, { 'a.txt': 'zero\none\n2\nthree\nfour' }));

    const turnUri = expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' });
    const turn = await ready(client, turnUri);
    expect(paths(turn)).toEqual(['a.txt', 'b.bin', 'gone.txt', 'new dir/é.txt']);
    const a = turn.files[0]!;
    expect(a.id).toBe(pathToFileURL(join(repo, 'a.txt')).href);
    expect(a.edit.diff).toEqual({ added: 2, removed: 1 });
    expect(a._meta).toMatchObject({ kind: 'modified', beforeMode: '100644', afterMode: '100644' });
    expect(turn.files[1]!._meta).toMatchObject({ binary: true });
    expect(turn.files[2]!.id).toBe(pathToFileURL(join(repo, 'gone.txt')).href);
    expect(turn.files[2]!.edit.after).toBeUndefined();

    // Hunks agree with the counts, including the last line without a newline.
    const diff = await client.request<{ kind: string; added: number; removed: number; hunks: { lines: string[] }[] }>('changesetFileDiff', {
      channel: turnUri,
      fileId: a.id,
    });
    expect(diff).toMatchObject({ kind: 'text', added: 2, removed: 1 });
    expect(diff.hunks[0]!.lines).toContain('\\ No newline at end of file');

    // Content references resolve to the exact bytes, text and binary.
    const after = await client.request<{ data: string; encoding: string }>('resourceRead', { channel: 'ahp-root://', uri: a.edit.after!.content });
    expect(after).toMatchObject({ encoding: 'utf-8', data: 'one\n2\nthree\nfour' });
    const bin = await client.request<{ data: string; encoding: string }>('resourceRead', {
      channel: 'ahp-root://',
      uri: turn.files[1]!.edit.after!.content,
    });
    expect(bin.encoding).toBe('base64');
    expect(Buffer.from(bin.data, 'base64')).toEqual(Buffer.from([0, 9, 9]));
    const forged = await client.requestError('resourceRead', { channel: 'ahp-root://', uri: a.edit.after!.content.replace(/[0-9a-f]{40}$/, 'f'.repeat(40)) });
    expect(forged.code).toBe(-32006);
    expect((await client.requestError('resourceRead', { channel: 'ahp-root://', uri: 'file:///etc/passwd' })).code).toBe(-32006);

    // The turn id with a slash, a space and ? round-trips.
    const turn2 = await ready(client, expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't 2/x?' }));
    expect(paths(turn2)).toEqual(['a.txt']);

    const compare = await ready(client, expandChangesetUri(changesetUriTemplate(SID, 'compare-turns'), { originalTurnId: 't1', modifiedTurnId: 't 2/x?' }));
    expect(compare.files.map((f) => f.edit.diff)).toEqual([{ added: 1, removed: 0 }]);

    const session = await ready(client, changesetUriTemplate(SID, 'session'));
    expect(paths(session)).toEqual(['a.txt', 'b.bin', 'gone.txt', 'new dir/é.txt']);

    const uncommitted = await ready(client, changesetUriTemplate(SID, 'uncommitted'));
    expect(paths(uncommitted)).toEqual(['a.txt', 'b.bin', 'gone.txt', 'new dir/é.txt']);

    const branch = await ready(client, changesetUriTemplate(SID, 'branch'));
    expect(paths(branch)).toEqual(['a.txt', 'b.bin', 'committed.txt', 'gone.txt', 'new dir/é.txt']);
    client.assertValid();
  });

  it('echoes review to every subscriber, keeps it across turns, and resets it when the content changes', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const alice = await svc.client();
    const bob = await svc.client();
    await alice.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    await recordTurn(alice, 't1', () => writeFiles(repo, { 'a.txt': 'A\n', 'b.txt': 'B\n' }));

    const uri = changesetUriTemplate(SID, 'session');
    const state = await ready(alice, uri);
    await ready(bob, uri);
    const [a, b] = state.files.map((f) => f.id) as [string, string];
    alice.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [a, b], reviewed: true });
    await bob.waitForEnvelope((e) => e.action.type === 'changeset/filesReviewChanged' && e.origin?.clientId === alice.clientId);
    expect(bob.state<ChangesetState>(uri)!.files.map((f) => f.reviewed)).toEqual([true, true]);

    // Another turn rewrites a.txt: the live changeset re-emits it without the review flag; b.txt keeps it.
    await recordTurn(alice, 't2', () => writeFiles(repo, { 'a.txt': 'AA\n' }));
    await bob.waitForEnvelope((e) => e.action.type === 'changeset/fileSet');
    expect(bob.state<ChangesetState>(uri)!.files.map((f) => f.reviewed ?? false)).toEqual([false, true]);

    // Review of a turn changeset survives a fresh computation (persisted by content).
    const turnUri = expandChangesetUri(changesetUriTemplate(SID, 'turn'), { turnId: 't1' });
    await ready(alice, turnUri);
    alice.dispatch(turnUri, { type: 'changeset/filesReviewChanged', files: [b], reviewed: true });
    await alice.waitForEnvelope((e) => e.channel === turnUri && e.action.type === 'changeset/filesReviewChanged');
    const owner = svc.service.changesets.of(svc.service.sessions.list()[0]!)!;
    owner.close(turnUri);
    const again = await ready(bob, turnUri);
    expect(again.files.map((f) => f.reviewed ?? false)).toEqual([false, true]);
  });

  it('follows working-tree edits in live changesets while subscribed', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    const uri = changesetUriTemplate(SID, 'uncommitted');
    expect((await ready(client, uri)).files).toEqual([]);
    writeFileSync(join(repo, 'a.txt'), 'edited\n');
    await client.waitForEnvelope((e) => e.channel === uri && e.action.type === 'changeset/fileSet', 10_000);
    expect(paths(client.state<ChangesetState>(uri)!)).toEqual(['a.txt']);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('edited\n');
  });

  it('refuses unknown sessions, turns and malformed URIs with precise errors', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const client = await svc.client();
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href });
    const cases: [string, number][] = [
      ['ahp-changeset:/nope/session', -32001],
      [`ahp-changeset:/${SID}/turn/missing`, -32008],
      [`ahp-changeset:/${SID}/turn`, -32602],
      [`ahp-changeset:/${SID}/session/extra`, -32602],
      [`ahp-changeset:/${SID}/dir/3/session`, -32008],
    ];
    for (const [uri, code] of cases) {
      const error = await client.requestError('subscribe', { channel: uri });
      expect(error.code, uri).toBe(code);
    }
  });
});
