// The viewer's write-ahead mirror, run in Node: it imports only the shared reducers.
import { describe, expect, it } from 'vitest';
import type { ActionEnvelope, ChangesetFile, ChangesetState } from '../../protocol/index.js';
import { ChannelMirror } from '../../viewer/src/mirror.js';

const URI = 'ahp-changeset:/s/session';
const file = (id: string): ChangesetFile => ({ id, edit: { after: { uri: id, content: `c:${id}` } } });
const review = (files: string[], reviewed: boolean) => ({ type: 'changeset/filesReviewChanged' as const, files, reviewed });

function mirrorWith(): ChannelMirror {
  const mirror = new ChannelMirror(() => 'me');
  const state: ChangesetState = { status: 'ready', files: [file('a'), file('b')] };
  mirror.adopt({ resource: URI, state, fromSeq: 10 });
  return mirror;
}
const reviewed = (m: ChannelMirror) => m.state(URI, 'changeset')!.files.map((f) => f.reviewed === true);

describe('viewer write-ahead mirror', () => {
  it('shows our action at once and confirms it on the echo', () => {
    const m = mirrorWith();
    m.addPending(URI, { clientSeq: 1, action: review(['a'], true) });
    expect(reviewed(m)).toEqual([true, false]);
    const echo: ActionEnvelope = { channel: URI, action: review(['a'], true), serverSeq: 11, origin: { clientId: 'me', clientSeq: 1 } };
    expect(m.apply(echo).changed).toBe(true);
    expect(m.pendingOf(URI)).toEqual([]);
    expect(reviewed(m)).toEqual([true, false]);
  });

  it('rebases pending actions on foreign ones and lets the server win on the same file', () => {
    const m = mirrorWith();
    m.addPending(URI, { clientSeq: 1, action: review(['a'], true) });
    m.apply({ channel: URI, action: review(['b'], true), serverSeq: 11, origin: { clientId: 'other', clientSeq: 7 } });
    expect(reviewed(m)).toEqual([true, true]);
    // A file removed by the server stays removed under the pending tick.
    m.apply({ channel: URI, action: { type: 'changeset/fileRemoved', fileId: 'a' }, serverSeq: 12, origin: undefined });
    expect(m.state(URI, 'changeset')!.files.map((f) => f.id)).toEqual(['b']);
    expect(m.pendingOf(URI)).toHaveLength(1);
  });

  it('reverts a rejected action and reports why', () => {
    const m = mirrorWith();
    m.addPending(URI, { clientSeq: 1, action: review(['a'], true) });
    const outcome = m.apply({
      channel: URI,
      action: review(['a'], true),
      serverSeq: 11,
      origin: { clientId: 'me', clientSeq: 1 },
      rejectionReason: 'no review here',
    });
    expect(outcome.rejected?.reason).toBe('no review here');
    expect(reviewed(m)).toEqual([false, false]);
  });

  it('skips envelopes already contained in the snapshot', () => {
    const m = mirrorWith();
    m.apply({ channel: URI, action: review(['a'], true), serverSeq: 10, origin: undefined });
    expect(reviewed(m)).toEqual([false, false]);
  });
});
