import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelStore } from '../../server/channels/index.js';
import { collectTreeChanges, type RootTrees } from '../../server/changes/collect-changes.js';
import type { FileChange } from '../../server/changes/file-change.js';
import { SessionDelta } from '../../server/changes/session-delta.js';
import { RecordingSession } from '../../server/session/recording-session.js';
import { makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
const sessions: RecordingSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.dispose()));
  temp.cleanup();
});

/** What a reviewer sees of a change: kind and both sides. */
const shape = (c: FileChange) => [c.root, c.path, c.kind, c.before?.oid, c.before?.mode, c.after?.oid, c.after?.mode];

/** A small deterministic generator, so a failure replays. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** Turns of random edits: 12 in `npm test`, more in `npm run soak` (SESSION_DELTA_TURNS=100). */
const TURNS = Number(process.env['SESSION_DELTA_TURNS'] ?? 12);

describe('SessionDelta', () => {
  it('follows a session turn by turn to exactly what diffing its start against each state gives', async () => {
    const initial: Record<string, string> = {};
    for (let i = 0; i < 30; i++) initial[`d${i % 4}/sub${i % 3}/f${i}.txt`] = `file ${i}\n`;
    const repo = makeRepo(temp.make(), initial);
    const session = await RecordingSession.create({ workingDirectories: [repo], stateDir: temp.make('state-'), channels: new ChannelStore() });
    sessions.push(session);
    const delta = new SessionDelta(session.files.treeSources(), () => session.startTrees);
    const rand = random(7);
    const pick = (n: number) => Math.floor(rand() * n);
    const paths = Object.keys(initial);

    for (let t = 0; t < TURNS; t++) {
      const turn = await session.startTurn({ id: `t${t}` });
      for (let k = 0; k < 4; k++) {
        const path = join(repo, paths[pick(paths.length)]!);
        switch (pick(6)) {
          case 0: // back to what it was at the start: the path leaves the session's changes
            mkdirSync(dirname(path), { recursive: true });
            if (existsSync(path)) rmSync(path, { recursive: true });
            writeFileSync(path, initial[paths.find((p) => join(repo, p) === path)!]!);
            chmodSync(path, 0o644);
            break;
          case 1:
            if (existsSync(path)) rmSync(path, { recursive: true });
            break;
          case 2: // a file becomes a directory
            if (existsSync(path)) rmSync(path, { recursive: true });
            mkdirSync(path, { recursive: true });
            writeFileSync(join(path, 'inside.txt'), `turn ${t}\n`);
            break;
          case 3:
            if (existsSync(path)) chmodSync(path, 0o755);
            break;
          default:
            mkdirSync(dirname(path), { recursive: true });
            if (existsSync(path)) rmSync(path, { recursive: true });
            writeFileSync(path, `turn ${t} ${k}\n`);
        }
      }
      writeFileSync(join(repo, `added-${t % 5}.txt`), `turn ${t}\n`);
      await turn.end();
      // Edits between turns are part of the session too.
      if (t % 3 === 0) writeFileSync(join(repo, 'between.txt'), `after turn ${t}\n`);
      const state: RootTrees[] = t % 3 === 0 ? await session.currentTrees() : session.turn(`t${t}`)!.after!;
      const followed = await delta.changesAt(state);
      const direct = await collectTreeChanges(session.files.treeSources(), session.startTrees, state);
      expect(followed.map(shape)).toEqual(direct.map(shape));
    }
  }, 300_000);
});
