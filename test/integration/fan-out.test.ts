import type { Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ActionEnvelope, type ChangesetState } from '../../protocol/index.js';
import { ChannelStore } from '../../server/channels/channel-store.js';
import type { ChannelSubscriber } from '../../server/channels/types.js';
import { frameText, type OutboundFrame } from '../../server/channels/frames.js';
import type { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';
import { createChangeset, file } from './fixtures.js';

function recorder(id: string): ChannelSubscriber & { frames: OutboundFrame[] } {
  const frames: OutboundFrame[] = [];
  return { id, frames, sendFrame: (frame) => frames.push(frame), channelRemoved: () => undefined };
}

describe('fan-out', () => {
  it('serialises and encodes an envelope once, however many subscribe', () => {
    const store = new ChannelStore();
    const uri = 'ahp-changeset:/s1/session';
    createChangeset(store, uri, [], true);
    const subscribers = Array.from({ length: 50 }, (_, i) => recorder(`c${i}`));
    for (const s of subscribers) store.subscribe(s, uri);
    const envelope = store.dispatch(uri, { type: 'changeset/fileSet', file: file('x.ts') });
    const frame = subscribers[0]!.frames[0]!;
    // The very same bytes go to every subscriber: nothing was encoded per subscriber.
    expect(frame).toBeInstanceOf(Uint8Array);
    for (const s of subscribers) {
      expect(s.frames).toHaveLength(1);
      expect(s.frames[0]).toBe(frame);
    }
    expect(JSON.parse(frameText(frame))).toEqual({ jsonrpc: '2.0', method: 'action', params: envelope });
  });
});

describe('turn end with subscribers', () => {
  const temp = new TempDirs();
  let t: TestService | undefined;
  const clients: TestClient[] = [];

  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await t?.stop();
    t = undefined;
    temp.cleanup();
  });

  it('harness/turnEnded answers while a subscriber that stopped reading has not drained; every reader gets the same changeset', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`src/f${i}.ts`] = `export const v${i} = ${i};\n`;
    const repo = makeRepo(temp.make('cs-fanout-'), files);
    t = await startTestService();
    const harness = await t.client();
    clients.push(harness);
    const session = 'ahp-session:/fanout';
    await harness.request('createSession', { channel: session, workingDirectory: pathToFileURL(repo).href });
    await harness.request('harness/turnStarted', { channel: session, turnId: 'wide' });
    const uri = expandChangesetUri(changesetUriTemplate('fanout', 'turn'), { turnId: 'wide' });

    const readers: TestClient[] = [];
    for (let i = 0; i < 5; i++) readers.push(await t.client());
    const slow = await t.client();
    clients.push(...readers, slow);
    for (const c of [...readers, slow]) await c.subscribe(uri);
    const slowSocket = (slow.socket as unknown as { _socket: Socket })._socket;
    slowSocket.pause();
    const slowReceivedBefore = slow.received.length;

    for (let i = 0; i < 400; i++) writeFileSync(join(repo, `src/f${i}.ts`), `export const v${i} = ${i + 1}; // ${'changed '.repeat(20)}\n`);
    const ended = await harness.request<{ summary: { total: number } }>('harness/turnEnded', { channel: session, turnId: 'wide' }, { timeoutMs: 30_000 });
    const seqAtAnswer = t.service.server.store.serverSeq;
    expect(ended.summary.total).toBe(400);

    const isReady = (e: ActionEnvelope) =>
      e.channel === uri && e.action.type === 'changeset/statusChanged' && (e.action as { status?: string }).status === 'ready';
    for (const c of readers) await c.waitForEnvelope(isReady, 30_000);
    const states = readers.map((c) => c.state<ChangesetState>(uri));
    expect(states[0]!.files).toHaveLength(400);
    for (const s of states) expect(s).toEqual(states[0]);

    slowSocket.resume();
    await slow.waitForEnvelope(isReady, 30_000);
    expect(slow.state<ChangesetState>(uri)).toEqual(states[0]);
    // The server had sent the paused subscriber the changeset, ready status included, before it answered
    // the harness: those messages were still waiting for it then, so the answer did not wait for them.
    const pendingAtAnswer = slow.received.slice(slowReceivedBefore).filter((m) => {
      const e = (m as { params?: ActionEnvelope }).params;
      return e?.channel === uri && e.serverSeq <= seqAtAnswer;
    });
    expect(pendingAtAnswer.some((m) => isReady((m as { params: ActionEnvelope }).params))).toBe(true);
  });
});
