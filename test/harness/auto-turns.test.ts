import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AutoTurns, startAutoTurns } from '../../server/auto-turns/index.js';
import type { RecordingSession } from '../../server/session/recording-session.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { TestClient } from '../helpers/client.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { nextEvent } from '../helpers/next-event.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

async function nextTurnEnded(auto: AutoTurns): Promise<[string, TurnSummary]> {
  const { turnId, summary } = await nextEvent(auto.onTurnEnded);
  return [turnId, summary];
}

describe('automatic turns', () => {
  const temp = new TempDirs();
  let t: TestService;
  let repo: string;
  let session: RecordingSession;
  let auto: AutoTurns | undefined;

  beforeEach(async () => {
    repo = makeRepo(temp.make('cs-auto-'), { '.gitignore': 'build/\n', 'a.txt': 'one\n', 'b.txt': 'two\n' });
    t = await startTestService();
    session = await t.service.sessions.create({ workingDirectories: [repo] });
  });

  afterEach(async () => {
    auto?.stop();
    await auto?.idle();
    auto = undefined;
    await t.stop();
    temp.cleanup();
  });

  for (const mode of ['watch', 'poll'] as const) {
    it(`(${mode}) starts a turn at the first change from the state before it, and ends it after the quiet period`, async () => {
      // The second file is written as soon as the turn has started, well within the quiet period.
      auto = startAutoTurns(t.service.sessions, session, { quietMs: 500, mode, pollIntervalMs: 100, ignoreDirs: [t.stateDir] });
      const started = nextEvent(auto.onTurnStarted);
      const ended = nextTurnEnded(auto);
      writeFileSync(join(repo, 'a.txt'), 'one\nmore\n');
      const id = await started;
      writeFileSync(join(repo, 'b.txt'), 'TWO\n');
      const [endedId, summary] = await ended;
      expect(endedId).toBe(id);
      expect(summary.files.map((f) => [f.path, f.added, f.deleted])).toEqual([
        ['a.txt', 1, 0],
        ['b.txt', 1, 1],
      ]);
      expect(summary.snapshot!.before).toBe(git(repo, ['rev-parse', 'HEAD^{tree}']));
      const turn = session.turn(id)!;
      expect(turn.state).toBe('complete');
      expect(turn.message).toBe('File changes (automatic turn)');

      // The next turn starts from where the last one ended.
      const next = nextTurnEnded(auto);
      writeFileSync(join(repo, 'a.txt'), 'one\n');
      const [, second] = await next;
      expect(second.files.map((f) => [f.path, f.added, f.deleted])).toEqual([['a.txt', 0, 1]]);
      expect(second.snapshot!.before).toBe(summary.snapshot!.after);
    });
  }

  it('starts no turn for changes to ignored files', async () => {
    auto = startAutoTurns(t.service.sessions, session, { quietMs: 300, ignoreDirs: [t.stateDir] });
    const checked = nextEvent(auto.onChecked);
    mkdirSync(join(repo, 'build'), { recursive: true });
    writeFileSync(join(repo, 'build', 'out.js'), 'x');
    expect(await checked).toBe(false);
    expect(session.turns).toHaveLength(0);
  });

  it('hands over to a harness: the automatic turn ends complete and no more are recorded', async () => {
    auto = startAutoTurns(t.service.sessions, session, { quietMs: 60_000, ignoreDirs: [t.stateDir] });
    const started = nextEvent(auto.onTurnStarted);
    writeFileSync(join(repo, 'a.txt'), 'typed by a person\n');
    const autoId = await started;

    const client = await TestClient.connect(t.url);
    await client.initialize();
    const { turnId } = await client.request<{ turnId: string }>('harness/turnStarted', { channel: session.uri, turnId: 'agent-1' });
    expect(turnId).toBe('agent-1');
    expect(auto.isStopped).toBe(true);
    const autoTurn = session.turn(autoId)!;
    expect(autoTurn.state).toBe('complete');
    expect(autoTurn.summary!.files.map((f) => f.path)).toEqual(['a.txt']);

    writeFileSync(join(repo, 'b.txt'), 'by the agent\n');
    const { summary } = await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: session.uri, turnId: 'agent-1' });
    expect(summary.files.map((f) => f.path)).toEqual(['b.txt']);
    expect(session.turns.map((turn) => turn.id)).toEqual([autoId, 'agent-1']);
    await client.close();
  });
});
