import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  changesetUriTemplate,
  channelKindOf,
  expandChangesetUri,
  ROOT_CHANNEL,
  type ActionEnvelope,
  type ChangesetState,
  type ChannelKind,
  type ChannelState,
  type SessionState,
  type Snapshot,
  type StateAction,
  type URI,
} from '../../protocol/index.js';
import { reduce } from '../../reducers/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

/**
 * A client that subscribes once and follows every channel's stream through
 * reducers that behave as AHP's ends with the state a fresh subscribe gives:
 * nothing the server says rides where AHP's reducers drop it.
 */
const temp = new TempDirs();
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
  temp.cleanup();
});

const SID = 'stream';
const SESSION = `ahp-session:/${SID}`;
const uriOf = (kind: Parameters<typeof changesetUriTemplate>[1], vars: Record<string, string> = {}) =>
  expandChangesetUri(changesetUriTemplate(SID, kind), vars);

/**
 * One action as AHP's reducers apply it. The project's reducers pass AHP's
 * reducer fixtures; where they keep more, AHP's behaviour is what a client
 * has: `changeset/contentChanged` replaces files, operations and error and
 * leaves the rest of the state as it was (AHP's `ChangesetState` has no
 * `_meta`, and its reducer never reads one from the action).
 */
function ahpReduce(kind: ChannelKind, state: ChannelState, action: StateAction): ChannelState {
  const next = reduce(kind, state, action);
  if (kind !== 'changeset' || action.type !== 'changeset/contentChanged') return next;
  const { _meta: _dropped, ...rest } = next as ChangesetState & { _meta?: unknown };
  const before = (state as ChangesetState & { _meta?: unknown })._meta;
  return (before === undefined ? rest : { ...rest, _meta: before }) as ChannelState;
}

/** The follower's copy of every channel, rebuilt from what it received: snapshots, then envelopes after them. */
function followed(client: TestClient): Map<URI, ChannelState> {
  const mirror = new Map<URI, { state: ChannelState; fromSeq: number }>();
  const adopt = (s: Snapshot) => mirror.set(s.resource, { state: s.state, fromSeq: s.fromSeq });
  for (const message of client.received) {
    const result = message['result'] as { snapshot?: Snapshot; snapshots?: Snapshot[] } | null | undefined;
    if (result && typeof result === 'object') {
      if (result.snapshot) adopt(result.snapshot);
      for (const s of result.snapshots ?? []) adopt(s);
    }
    if (message['method'] !== 'action') continue;
    const envelope = message['params'] as ActionEnvelope;
    if (envelope.rejectionReason !== undefined) continue;
    const held = mirror.get(envelope.channel);
    const kind = channelKindOf(envelope.channel);
    if (!held || !kind || envelope.serverSeq <= held.fromSeq) continue;
    if (envelope.action.type === 'changeset/cleared' && kind === 'changeset') {
      mirror.delete(envelope.channel);
      continue;
    }
    held.state = ahpReduce(kind, held.state, envelope.action);
    held.fromSeq = envelope.serverSeq;
  }
  return new Map([...mirror].map(([uri, m]) => [uri, m.state]));
}

/** Resolves once the client has received nothing for `quietMs` (live changesets follow the disk after a debounce). */
async function settled(client: TestClient, quietMs = 1500, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  let count = client.received.length;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, quietMs));
    if (client.received.length === count) return;
    count = client.received.length;
  }
}

/**
 * AHP's chat reducer stamps `modifiedAt` with the receiving client's clock
 * when a turn starts or ends, so a follower's stamp is its own: the one
 * field of a chat state that is not the server's to give.
 */
function comparable(uri: URI, state: ChannelState): unknown {
  const copy = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
  if (channelKindOf(uri) === 'chat') delete copy['modifiedAt'];
  return copy;
}

async function turn(client: TestClient, turnId: string, message: string, body: () => Promise<void>): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId, message }, { timeoutMs: 60_000 });
  await body();
  await client.request('harness/turnEnded', { channel: SESSION, turnId }, { timeoutMs: 120_000 });
}

async function step(client: TestClient, turnId: string, tool: string, dir: string, files: Record<string, string>): Promise<void> {
  await client.request('harness/beforeEdit', { channel: SESSION, turnId, paths: Object.keys(files), tool }, { timeoutMs: 60_000 });
  writeFiles(dir, files);
}

describe('following the stream', () => {
  it('ends every channel with the state a fresh subscribe gives: turns with steps and presented files, an operation, review ticks, a hunk revert', async () => {
    svc = await startTestService();
    const dir = makeRepo(temp.make('stream-'), { 'a.txt': 'a1\na2\na3\na4\na5\na6\na7\na8\na9\na10\n', 'b.txt': 'b\n', 'keep.txt': 'keep\n' });
    const outside = temp.make('stream-presented-');
    writeFileSync(join(outside, 'report.md'), '# Report\n');
    const follower = await svc.client();
    const driver = await svc.client();
    await driver.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 60_000 });
    const session = (await follower.subscribe(SESSION)).snapshot!.state as SessionState;
    await follower.subscribe(session.defaultChat!);
    for (const uri of [uriOf('session'), uriOf('uncommitted')]) await subscribeReady(follower, uri);

    await turn(driver, 't1', 'first', async () => {
      await step(driver, 't1', 'Edit', dir, { 'a.txt': 'a1\nA2\na3\na4\na5\na6\na7\na8\na9\na10\n' });
      await step(driver, 't1', 'Write', dir, { 'b.txt': 'b\nmore\n', 'c.txt': 'new\n' });
      await driver.request('harness/presentFiles', { channel: SESSION, turnId: 't1', files: [{ path: join(outside, 'report.md'), description: 'Findings' }] });
    });
    for (const uri of [
      uriOf('turn', { turnId: 't1' }),
      uriOf('step', { turnId: 't1', step: '1' }),
      uriOf('step', { turnId: 't1', step: '2' }),
      uriOf('since', { turnId: 't1', step: 'start' }),
    ]) {
      await subscribeReady(follower, uri);
    }

    await turn(driver, 't2', 'second', async () => {
      await step(driver, 't2', 'MultiEdit', dir, { 'a.txt': 'a1\nA2\na3\na4\na5\na6\na7\na8\nA9\na10\n', 'b.txt': 'b\nmore\nand more\n' });
      await driver.request('harness/presentFiles', { channel: SESSION, turnId: 't2', files: [{ path: 'c.txt' }] });
    });
    const t2 = uriOf('turn', { turnId: 't2' });
    const t2State = await subscribeReady(follower, t2);
    await subscribeReady(follower, uriOf('compare-turns', { originalTurnId: 't1', modifiedTurnId: 't2' }));

    // Review ticks, one of them taken back.
    const ids = t2State.files.map((f) => f.id);
    follower.dispatch(t2, { type: 'changeset/filesReviewChanged', files: ids, reviewed: true });
    follower.dispatch(t2, { type: 'changeset/filesReviewChanged', files: [ids[0]!], reviewed: false });
    await follower.waitForEnvelope((e) => e.channel === t2 && e.origin?.clientSeq === 2);

    // A hunk revert: the A9 line of turn 2 (zero-based line 8 on the after side).
    const aId = t2State.files.find((f) => (f._meta as { path: string }).path === 'a.txt')!.id;
    await driver.request(
      'invokeChangesetOperation',
      {
        channel: t2,
        operationId: 'revert',
        target: { kind: 'range', resource: aId, range: { start: { line: 8, character: 0 }, end: { line: 9, character: 0 } } },
      },
      { timeoutMs: 60_000 },
    );
    // An operation on a whole file, then its undo.
    const bId = follower.state<ChangesetState>(uriOf('session'))!.files.find((f) => (f._meta as { path: string }).path === 'b.txt')!.id;
    await driver.request(
      'invokeChangesetOperation',
      { channel: uriOf('session'), operationId: 'revert', target: { kind: 'resource', resource: bId } },
      { timeoutMs: 60_000 },
    );
    await driver.request('invokeChangesetOperation', { channel: uriOf('session'), operationId: 'undo' }, { timeoutMs: 60_000 });

    await turn(driver, 't3', 'third', async () => {
      await step(driver, 't3', 'Edit', dir, { 'keep.txt': 'kept\n' });
    });
    await subscribeReady(follower, uriOf('turn', { turnId: 't3' }));
    await settled(follower);

    const mine = followed(follower);
    const channels = [...mine.keys()].sort();
    expect(channels).toContain(ROOT_CHANNEL);
    expect(channels.filter((uri) => uri.startsWith('ahp-changeset:')).length).toBeGreaterThanOrEqual(9);
    const fresh = await svc.client();
    const differing: string[] = [];
    for (const uri of channels) {
      const snapshot = uri === ROOT_CHANNEL ? fresh.state(ROOT_CHANNEL)! : (await fresh.subscribe(uri)).snapshot!.state;
      if (JSON.stringify(comparable(uri, mine.get(uri)!)) !== JSON.stringify(comparable(uri, snapshot))) differing.push(uri);
      expect.soft(comparable(uri, mine.get(uri)!), uri).toEqual(comparable(uri, snapshot));
    }
    expect(differing).toEqual([]);

    // What the stream carried is there: each turn's steps and presented files, the review ticks.
    const meta = (mine.get(SESSION) as SessionState)._meta as {
      turns: Record<string, { steps?: { tool?: string }[]; presentedFiles?: { description?: string }[] }>;
    };
    expect(meta.turns['t1']!.steps!.map((s) => s.tool)).toEqual(['Edit', 'Write']);
    expect(meta.turns['t1']!.presentedFiles!.map((f) => f.description)).toEqual(['Findings']);
    expect(meta.turns['t2']!.presentedFiles!.length).toBe(1);
    expect((mine.get(t2) as ChangesetState).files.filter((f) => f.reviewed).length).toBe(ids.length - 1);
    follower.assertValid();
    fresh.assertValid();
    driver.assertValid();
  }, 120_000);
});
