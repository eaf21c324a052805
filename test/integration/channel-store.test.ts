import { describe, expect, it } from 'vitest';
import type { ChangesetState } from '../../protocol/index.js';
import { ChannelStore } from '../../server/channels/channel-store.js';
import type { ChannelSubscriber } from '../../server/channels/types.js';
import { frameText, type OutboundFrame } from '../../server/channels/frames.js';
import { createChangeset, file } from './fixtures.js';

const CS = 'ahp-changeset:/s1/session';

function recorder(id: string): ChannelSubscriber & { frames: OutboundFrame[]; removed: string[] } {
  const frames: OutboundFrame[] = [];
  const removed: string[] = [];
  return { id, frames, removed, sendFrame: (frame) => frames.push(frame), channelRemoved: (uri) => removed.push(uri) };
}

describe('channel store', () => {
  it('assigns one increasing serverSeq across channels and fans the same frame out', () => {
    const store = new ChannelStore();
    createChangeset(store, CS, [], true);
    createChangeset(store, 'ahp-changeset:/s1/other', [], true);
    const a = recorder('a');
    const b = recorder('b');
    store.subscribe(a, CS);
    store.subscribe(b, CS);
    const first = store.dispatch(CS, { type: 'changeset/fileSet', file: file('x.ts') });
    const second = store.dispatch('ahp-changeset:/s1/other', { type: 'changeset/fileSet', file: file('y.ts') });
    expect([first.serverSeq, second.serverSeq]).toEqual([1, 2]);
    expect(first).not.toHaveProperty('origin');
    expect(a.frames).toHaveLength(1);
    expect(a.frames[0]).toBe(b.frames[0]);
    expect(JSON.parse(frameText(a.frames[0]!))).toEqual({ jsonrpc: '2.0', method: 'action', params: first });
  });

  it('changes nothing when the reducer throws or the channel is unknown', () => {
    const store = new ChannelStore();
    createChangeset(store, CS, ['a.ts'], true);
    const before = store.getState(CS);
    expect(() => store.dispatch('ahp-changeset:/nope', { type: 'changeset/cleared' })).toThrow();
    expect(() => store.dispatch(CS, { type: 'changeset/fileSet', file: null } as never)).toThrow();
    expect(store.getState(CS)).toBe(before);
    expect(store.serverSeq).toBe(0);
  });

  it('replays from inside the log and refuses gaps older than it', () => {
    const store = new ChannelStore({ replayLogSize: 3 });
    createChangeset(store, CS, [], true);
    for (let i = 0; i < 5; i++) store.dispatch(CS, { type: 'changeset/fileSet', file: file(`f${i}.ts`) });
    // The log holds serverSeq 3, 4, 5.
    expect(store.replaySince(5)).toEqual([]);
    expect(store.replaySince(2)?.map((e) => e.serverSeq)).toEqual([3, 4, 5]);
    expect(store.replaySince(4)?.map((e) => e.serverSeq)).toEqual([5]);
    expect(store.replaySince(1)).toBeUndefined();
    expect(store.replaySince(6)).toBeUndefined();
  });

  it('replaying the log onto an old snapshot gives the current state', () => {
    const store = new ChannelStore();
    createChangeset(store, CS, ['a.ts', 'b.ts'], true);
    const old = store.snapshot(CS)!;
    store.dispatch(CS, { type: 'changeset/fileSet', file: file('c.ts') });
    store.dispatch(CS, { type: 'changeset/filesReviewChanged', files: ['file:///w/a.ts'], reviewed: true }, { clientId: 'c', clientSeq: 1 });
    store.dispatch(CS, { type: 'changeset/fileRemoved', fileId: 'file:///w/b.ts' });
    const replayed = new ChannelStore();
    replayed.createChannel(CS, 'changeset', old.state);
    for (const envelope of store.replaySince(old.fromSeq)!) replayed.dispatch(CS, envelope.action);
    expect(replayed.getState(CS)).toEqual(store.getState(CS));
    expect((store.getState(CS) as ChangesetState).files.map((f) => f.id)).toEqual(['file:///w/a.ts', 'file:///w/c.ts']);
  });

  it('removing a changeset clears it for subscribers, then unsubscribes them', () => {
    const store = new ChannelStore();
    createChangeset(store, CS, ['a.ts'], true);
    const a = recorder('a');
    store.subscribe(a, CS);
    expect(store.removeChannel(CS)).toBe(true);
    expect(JSON.parse(frameText(a.frames[0]!)).params.action).toEqual({ type: 'changeset/cleared' });
    expect(a.removed).toEqual([CS]);
    expect(store.hasChannel(CS)).toBe(false);
    expect(store.removeChannel(CS)).toBe(false);
  });

  it('produces lazy channels once for concurrent requests and reports resolver errors', async () => {
    const store = new ChannelStore();
    let calls = 0;
    store.registerResolver('ahp-changeset', async (uri) => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (uri.endsWith('/bad')) return { code: -32009, message: 'outside the workspace' };
      if (uri.endsWith('/boom')) throw new Error('boom');
      createChangeset(store, uri, [], false);
    });
    const results = await Promise.all([store.ensureChannel(CS), store.ensureChannel(CS)]);
    expect(results).toEqual([undefined, undefined]);
    expect(calls).toBe(1);
    expect(await store.ensureChannel('ahp-changeset:/bad')).toEqual({ code: -32009, message: 'outside the workspace' });
    expect((await store.ensureChannel('ahp-changeset:/boom'))?.code).toBe(-32603);
    expect((await store.ensureChannel('ahp-session:/none'))?.code).toBe(-32008);
  });
});
