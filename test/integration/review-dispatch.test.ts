import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { TestClient } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createChangeset } from './fixtures.js';

const ROOT = 'ahp-root://';
const REVIEWABLE = 'ahp-changeset:/s1/session';
const PLAIN = 'ahp-changeset:/s1/uncommitted';
const A = 'file:///w/a.ts';
const B = 'file:///w/b.ts';

describe('dispatchAction changeset/filesReviewChanged', () => {
  let t: TestServer;
  let sender: TestClient;
  let watcher: TestClient;

  beforeEach(async () => {
    t = await startTestServer();
    createChangeset(t.server.store, REVIEWABLE, ['a.ts', 'b.ts'], true);
    createChangeset(t.server.store, PLAIN, ['a.ts'], false);
    sender = await TestClient.connect(t.url, { clientId: 'reviewer' });
    await sender.initialize({ initialSubscriptions: [ROOT, REVIEWABLE, PLAIN] });
    watcher = await TestClient.connect(t.url);
    await watcher.initialize({ initialSubscriptions: [REVIEWABLE, PLAIN] });
  });

  afterEach(async () => {
    await sender.close();
    await watcher.close();
    await t.stop();
  });

  it('applies, echoes to the sender with origin and broadcasts to other subscribers', async () => {
    const seqBefore = t.server.store.serverSeq;
    const clientSeq = sender.dispatch(REVIEWABLE, { type: 'changeset/filesReviewChanged', files: [A], reviewed: true });
    const echo = await sender.waitForEnvelope((e) => e.channel === REVIEWABLE);
    expect(echo).toEqual({
      channel: REVIEWABLE,
      action: { type: 'changeset/filesReviewChanged', files: [A], reviewed: true },
      serverSeq: seqBefore + 1,
      origin: { clientId: 'reviewer', clientSeq },
    });
    const seen = await watcher.waitForEnvelope((e) => e.channel === REVIEWABLE);
    expect(seen).toEqual(echo);
    const files = (t.server.store.getState(REVIEWABLE) as ChangesetState).files;
    expect(files.map((f) => [f.id, f.reviewed])).toEqual([
      [A, true],
      [B, undefined],
    ]);
    expect(sender.state(REVIEWABLE)).toEqual(t.server.store.getState(REVIEWABLE));
    expect(watcher.state(REVIEWABLE)).toEqual(t.server.store.getState(REVIEWABLE));
  });

  const refusals: [string, string, Record<string, unknown>][] = [
    ['another action type', REVIEWABLE, { type: 'changeset/cleared' }],
    ['an unknown action type', REVIEWABLE, { type: 'changeset/nope', files: [A] }],
    ['a malformed payload', REVIEWABLE, { type: 'changeset/filesReviewChanged', files: A, reviewed: true }],
    ['a missing reviewed flag', REVIEWABLE, { type: 'changeset/filesReviewChanged', files: [A] }],
    ['an empty files list', REVIEWABLE, { type: 'changeset/filesReviewChanged', files: [], reviewed: true }],
    ['a changeset without review', PLAIN, { type: 'changeset/filesReviewChanged', files: [A], reviewed: true }],
    ['an action for another channel kind', ROOT, { type: 'changeset/filesReviewChanged', files: [A], reviewed: true }],
  ];

  for (const [name, channel, action] of refusals) {
    it(`rejects ${name} to the sender only, without a state change`, async () => {
      const before = t.server.store.getState(channel);
      const seqBefore = t.server.store.serverSeq;
      const clientSeq = sender.dispatch(channel, action);
      const echo = await sender.waitForEnvelope((e) => e.origin?.clientSeq === clientSeq);
      expect(echo.rejectionReason).toEqual(expect.any(String));
      expect(echo).toMatchObject({ channel, action, serverSeq: seqBefore, origin: { clientId: 'reviewer', clientSeq } });
      expect(t.server.store.getState(channel)).toBe(before);
      expect(t.server.store.serverSeq).toBe(seqBefore);
      // The other subscriber never hears of it: a later real change is the first thing it sees.
      sender.dispatch(REVIEWABLE, { type: 'changeset/filesReviewChanged', files: [B], reviewed: true });
      const next = await watcher.waitForEnvelope(() => true);
      expect(next.action).toMatchObject({ files: [B] });
    });
  }

  it('ignores actions on channels that do not exist', async () => {
    sender.dispatch('ahp-changeset:/missing', { type: 'changeset/filesReviewChanged', files: [A], reviewed: true });
    await sender.request('ping', { channel: ROOT });
    expect(sender.envelopes).toEqual([]);
  });

  it('ignores a review toggle that came before initialize', async () => {
    const early = await TestClient.connect(t.url);
    early.dispatch(REVIEWABLE, { type: 'changeset/filesReviewChanged', files: [A], reviewed: true });
    await early.request('ping', { channel: ROOT });
    expect(t.server.store.serverSeq).toBe(0);
    await early.close();
  });

  it('asks a reviewable function each time (catalogue may change)', async () => {
    let review = false;
    const uri = 'ahp-changeset:/s1/turn/t1';
    t.server.store.createChannel(uri, 'changeset', { status: 'ready', files: [] }, { reviewable: () => review });
    await sender.subscribe(uri);
    const first = sender.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [A], reviewed: true });
    expect((await sender.waitForEnvelope((e) => e.origin?.clientSeq === first)).rejectionReason).toBeDefined();
    review = true;
    const second = sender.dispatch(uri, { type: 'changeset/filesReviewChanged', files: [A], reviewed: true });
    expect((await sender.waitForEnvelope((e) => e.origin?.clientSeq === second)).rejectionReason).toBeUndefined();
  });
});
