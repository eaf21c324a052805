import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProgressParams } from '../../protocol/index.js';
import { progressReporter } from '../../server/connection/progress.js';
import type { TestClient } from '../helpers/client.js';
import { serviceForEachTest, type TestService } from '../helpers/service.js';
import { TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
let svc: TestService;
let client: TestClient;
serviceForEachTest(temp, (s, c) => ((svc = s), (client = c)));

const FILES = 3000;

/** A tree big enough that its first snapshot reports progress, written once: the services only read it. */
const shared = new TempDirs();
let big: string | undefined;
afterAll(() => shared.cleanup());
function bigTree(): string {
  if (big) return big;
  const dir = shared.make('big-');
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`d${i % 40}/f${i}.txt`] = `file ${i}\n`;
  writeFiles(dir, files);
  big = dir;
  return dir;
}

const progressOf = (c: TestClient, token: string): ProgressParams[] =>
  c.received
    .filter((m) => m['method'] === 'root/progress' && (m['params'] as ProgressParams).progressToken === token)
    .map((m) => m['params'] as ProgressParams);

function lastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return i;
  return -1;
}

describe('createSession with a progressToken', () => {
  it('reports the first snapshot as root/progress to the requesting client: never backwards, ending at the total, before the response', async () => {
    const dir = bigTree();
    const other = await svc.client();
    const token = 'create-big-1';
    await client.request(
      'createSession',
      { channel: 'ahp-session:/big', workingDirectory: pathToFileURL(dir).href, progressToken: token },
      { timeoutMs: 60_000 },
    );
    const response = lastIndex(client.received, (m) => 'id' in m && 'result' in m);
    const frames = progressOf(client, token);
    expect(frames.length).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < frames.length; i++) expect(frames[i]!.progress).toBeGreaterThanOrEqual(frames[i - 1]!.progress);
    // Only the last frame completes the operation; earlier totals are ahead of the count.
    for (const frame of frames.slice(0, -1)) if (frame.total !== undefined) expect(frame.total).toBeGreaterThan(frame.progress);
    expect(frames.at(-1)).toMatchObject({ channel: 'ahp-root://', progressToken: token, progress: FILES, total: FILES });
    expect(frames.at(-1)!.message).toBe('Recording the working directory: 3,000 of 3,000 files');
    // Every frame arrived before the createSession response.
    const lastFrame = lastIndex(client.received, (m) => m['method'] === 'root/progress');
    expect(lastFrame).toBeLessThan(response);
    // The token is the requester's own: nobody else hears of it.
    expect(other.received.filter((m) => m['method'] === 'root/progress')).toEqual([]);
    client.assertValid();
  });

  it('sends no progress without a token', async () => {
    const dir = bigTree();
    await client.request('createSession', { channel: 'ahp-session:/quiet', workingDirectory: pathToFileURL(dir).href }, { timeoutMs: 60_000 });
    expect(client.received.filter((m) => m['method'] === 'root/progress')).toEqual([]);
  });

  it('refuses an empty progressToken with -32602', async () => {
    const dir = temp.make();
    const error = await client.requestError('createSession', { channel: 'ahp-session:/bad', workingDirectory: pathToFileURL(dir).href, progressToken: '' });
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('params.progressToken') });
  });
});

describe('progress reporter', () => {
  it('never goes back, sends a total only while it is ahead, and ends with one frame where progress equals total', () => {
    const sent: ProgressParams[] = [];
    const progress = progressReporter((p) => sent.push(p), 'tok');
    progress.update(10, 100);
    progress.update(5, 100);
    progress.update(150, 100);
    progress.update(150, 150);
    progress.finish();
    progress.update(160);
    progress.finish();
    expect(sent.map((p) => [p.progress, p.total])).toEqual([
      [10, 100],
      [10, 100],
      [150, undefined],
      [150, 150],
    ]);
  });

  it('sends nothing when nothing was reported', () => {
    const sent: ProgressParams[] = [];
    progressReporter((p) => sent.push(p), 'tok').finish();
    expect(sent).toEqual([]);
  });
});
