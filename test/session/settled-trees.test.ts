import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelStore } from '../../server/channels/index.js';
import { RecordingSession } from '../../server/session/recording-session.js';
import { treesWithWrites } from '../../server/session/settled-trees.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

const temp = new TempDirs();
const sessions: RecordingSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.dispose()));
  temp.cleanup();
});

describe('the state an operation leaves', () => {
  it('is the recorded tree with exactly the written files, identical to a snapshot of the same files', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n', 'src/deep/x.ts': 'x\n', 'src/y.ts': 'y\n', 'only/gone.txt': 'g\n' });
    const session = await RecordingSession.create({ workingDirectories: [repo], stateDir: temp.make('state-'), channels: new ChannelStore() });
    sessions.push(session);
    const root = session.files.root(0);
    const sources = [{ dir: root.dir, store: root.store, reader: session.files.source(0).reader }];
    const text = (s: string) => Buffer.from(s);
    const edited = await treesWithWrites(sources, session.startTrees, [
      { absPath: join(repo, 'src/deep/x.ts'), root: 0, content: text('x2\n'), mode: '100644' },
      { absPath: join(repo, 'new/dir/n.sh'), root: 0, content: text('#!/bin/sh\n'), mode: '100755' },
      { absPath: join(repo, 'only/gone.txt'), root: 0 },
      { absPath: '/elsewhere/file', root: -1 },
    ]);
    writeFiles(repo, { 'src/deep/x.ts': 'x2\n', 'new/dir/n.sh': '#!/bin/sh\n' });
    chmodSync(join(repo, 'new/dir/n.sh'), 0o755);
    rmSync(join(repo, 'only'), { recursive: true });
    const snapshot = await session.currentTrees();
    expect(edited![0]!.tree).toBe(snapshot[0]!.tree);
  });
});
