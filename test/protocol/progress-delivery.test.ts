import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT_CHANNEL, type ProgressParams } from '../../protocol/index.js';
import { TestClient } from '../helpers/client.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';

/**
 * `root/progress` is a protocol notification of the root channel: AHP sends
 * those only to clients subscribed to the channel they target, and a client
 * opts into progress by giving a `progressToken`. Only a connection that did
 * both hears of it.
 */
const temp = new TempDirs();
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
  temp.cleanup();
});

function tree(files: number): string {
  const dir = temp.make('progress-');
  const content: Record<string, string> = {};
  for (let i = 0; i < files; i++) content[`d${i % 20}/f${i}.txt`] = `file ${i}\n`;
  writeFiles(dir, content);
  return dir;
}

const progressFrames = (c: TestClient): ProgressParams[] => c.received.filter((m) => m['method'] === 'root/progress').map((m) => m['params'] as ProgressParams);

describe('root/progress delivery', () => {
  it('reaches only a connection subscribed to ahp-root:// that gave the token', async () => {
    svc = await startTestService();
    const dir = tree(300);
    // Gave a token, but is not subscribed to the root channel.
    const unsubscribed = await TestClient.connect(svc.url);
    await unsubscribed.initialize({ initialSubscriptions: [] });
    // Subscribed to the root channel, but asked for no progress.
    const bystander = await svc.client();
    await unsubscribed.request(
      'createSession',
      { channel: 'ahp-session:/unsubscribed', workingDirectory: pathToFileURL(dir).href, progressToken: 'u1' },
      { timeoutMs: 60_000 },
    );
    expect(progressFrames(unsubscribed)).toEqual([]);

    // The same connection, once subscribed to the root channel, hears of its own token.
    await unsubscribed.subscribe(ROOT_CHANNEL);
    await unsubscribed.request(
      'createSession',
      { channel: 'ahp-session:/subscribed', workingDirectory: pathToFileURL(tree(300)).href, progressToken: 'u2' },
      { timeoutMs: 60_000 },
    );
    const frames = progressFrames(unsubscribed);
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect(frames.every((f) => f.progressToken === 'u2' && f.channel === ROOT_CHANNEL)).toBe(true);
    expect(frames.at(-1)).toMatchObject({ progress: 300, total: 300 });

    expect(progressFrames(bystander)).toEqual([]);
    await unsubscribed.close();
  }, 120_000);

  it('sends nothing to a connection that unsubscribed from ahp-root://', async () => {
    svc = await startTestService();
    const client = await svc.client();
    client.unsubscribe(ROOT_CHANNEL);
    await client.request('ping', { channel: ROOT_CHANNEL });
    await client.request(
      'createSession',
      { channel: 'ahp-session:/left', workingDirectory: pathToFileURL(tree(300)).href, progressToken: 'left' },
      { timeoutMs: 60_000 },
    );
    expect(progressFrames(client)).toEqual([]);
  }, 120_000);
});
