/**
 * A server killed (SIGKILL) while it writes comments leaves the list it
 * had before a write or the one after it, never a mix: after a restart
 * every comment it answered for is there, numbered without a gap, and the
 * list reads back. Run `npm run build` first: this starts the built binary.
 */
import { afterEach, expect, it } from 'vitest';
import type { ReviewComment } from '../../protocol/index.js';
import { startServe, type ServeProcess } from '../cli/serve-process.js';
import { recordTurn } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { commentsCheck } from './comment-check.js';

const temp = new TempDirs();
const started: ServeProcess[] = [];
const clients: TestClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const s of started.splice(0)) await s.stop('SIGKILL');
  temp.cleanup();
});

async function serve(workspace: string, state: string): Promise<{ serve: ServeProcess; client: TestClient }> {
  const s = await startServe([workspace, '--state-dir', state]);
  started.push(s);
  const client = await TestClient.connect(s.ready.url, { token: s.ready.token!, check: commentsCheck });
  await client.initialize();
  clients.push(client);
  return { serve: s, client };
}

it('keeps every answered comment, and no torn list, when the server is killed mid-write', async () => {
  const workspace = makeRepo(temp.make(), { 'app.ts': 'one\ntwo\nthree\n' });
  const state = temp.make();
  const first = await serve(workspace, state);
  const session = first.serve.ready.sessions[0]!;
  await recordTurn(first.client, session, 't1', () => writeFiles(workspace, { 'app.ts': 'one\nTWO\nthree\n' }));
  const answered: string[] = [];
  const writes = Array.from({ length: 60 }, (_, i) =>
    first.client
      .request<ReviewComment>('comments/add', { channel: session, anchor: { kind: 'turn', turnId: 't1' }, body: `comment ${i + 1}` }, { timeoutMs: 30_000 })
      .then((c) => {
        answered.push(c.id);
        if (answered.length === 10) first.serve.child.kill('SIGKILL');
      }),
  );
  await Promise.allSettled(writes);
  expect(answered.length).toBeGreaterThanOrEqual(10);
  await first.serve.stop('SIGKILL');

  const again = await serve(workspace, state);
  const { comments } = await again.client.request<{ comments: ReviewComment[] }>('comments/list', { channel: session, state: 'all' });
  const ids = comments.map((c) => Number(c.id));
  expect(ids).toEqual(ids.map((_, i) => i + 1));
  expect(ids.length).toBeGreaterThanOrEqual(answered.length);
  expect(comments.map((c) => c.body)).toEqual(ids.map((n) => `comment ${n}`));
}, 60_000);
