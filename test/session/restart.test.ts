import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri, type ChatState } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { ChangesetService } from '../../server/service.js';
import { TestClient } from '../helpers/client.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
const running: ChangesetService[] = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((s) => s.stop()));
  temp.cleanup();
});

async function start(stateDir: string): Promise<{ service: ChangesetService; client: TestClient }> {
  const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
  running.push(service);
  const { url } = await service.start();
  const client = await TestClient.connect(url);
  await client.initialize();
  return { service, client };
}

const ready = subscribeReady;

describe('restart', () => {
  it('resumes the session with its turns, checkpoints, captures and review flags', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', '.gitignore': 'local.env\n' });
    writeFiles(repo, { 'local.env': 'X=1\n' });
    const stateDir = temp.make('state-');

    const first = await start(stateDir);
    const session = await first.service.openWorkspace([repo]);
    const sid = session.id;
    const turn = await session.startTurn({ id: 'one', message: 'first' });
    await turn.beforeEdit(['local.env'], { tool: 'Write' });
    writeFiles(repo, { 'a.txt': 'A\n', 'local.env': 'X=2\n' });
    await turn.end();
    await first.service.changesets.afterTurnEnded(session.uri, 'one');
    const turnUri = expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 'one' });
    const before = await ready(first.client, turnUri);
    expect(before.files.map((f) => (f._meta as { path: string }).path)).toEqual(['a.txt', 'local.env']);
    first.client.dispatch(turnUri, { type: 'changeset/filesReviewChanged', files: [before.files[0]!.id], reviewed: true });
    await first.client.waitForEnvelope((e) => e.action.type === 'changeset/filesReviewChanged');
    // A turn still running at shutdown is stored as cancelled.
    await session.startTurn({ id: 'two' });
    writeFiles(repo, { 'a.txt': 'AA\n' });
    await first.service.stop();
    running.splice(0);

    const second = await start(stateDir);
    const resumed = await second.service.openWorkspace([repo]);
    expect(resumed.id).toBe(sid);
    await second.client.subscribe(resumed.chatUri);
    const chat = second.client.state<ChatState>(resumed.chatUri)!;
    expect(chat.turns.map((t) => [t.id, t.state, t.message.text])).toEqual([
      ['one', 'complete', 'first'],
      ['two', 'cancelled', ''],
    ]);
    const after = await ready(second.client, turnUri);
    expect(after.files.map((f) => [(f._meta as { path: string }).path, f.reviewed ?? false])).toEqual([
      ['a.txt', true],
      ['local.env', false],
    ]);
    const two = await ready(second.client, expandChangesetUri(changesetUriTemplate(sid, 'turn'), { turnId: 'two' }));
    expect(two.files.map((f) => f.edit.diff)).toEqual([{ added: 1, removed: 1 }]);
    expect(resumed.turn('one')!.entries!.map((e) => [e.path, e.tool])).toEqual([
      ['a.txt', 'shell'],
      ['local.env', 'Write'],
    ]);
    // Checkpoints can be read with stock git.
    const shadow = resumed.files.root(0).store.layout.shadowDir;
    expect(
      git(repo, ['--git-dir', shadow, 'for-each-ref', '--format=%(refname)'])
        .split('\n')
        .filter((r) => r.includes('/turns/')),
    ).toHaveLength(6);
  });

  it('does not resume a disposed session', async () => {
    const dir = temp.make();
    writeFiles(dir, { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    const first = await start(stateDir);
    const session = await first.service.openWorkspace([dir]);
    await first.service.sessions.dispose(session.uri);
    const again = await first.service.openWorkspace([dir]);
    expect(again.id).not.toBe(session.id);
    expect(pathToFileURL(dir).href).toBe(again.sessionState.workingDirectory);
  });
});
