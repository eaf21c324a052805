/**
 * `serve` answers before its first snapshot is read: the session is listed
 * at once (lifecycle `creating`), a turn started meanwhile waits for the
 * snapshot and says so with `root/progress`, and files changed while the
 * snapshot runs are never lost: each change is either in the session's
 * starting state or in what the first turn starts from, so the first turn
 * shows exactly what real git sees change during it.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProgressParams, SessionState } from '../../protocol/index.js';
import type { StatusResult } from '../../server/harness/status.js';
import type { TurnSummary } from '../../server/session/turn-summary.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { git, makeRepo, TempDirs } from '../helpers/workspace.js';

const temp = new TempDirs();
let service: TestService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
  temp.cleanup();
});

/** 2,000 files in 200 directories: `pkg<d % 8>/dir<d>/f<i>.ts` with d = i % 200. */
const FILES = 2000;
const DIRS = 200;
const fileAt = (i: number): string => `pkg${i % 8}/dir${i % DIRS}/f${i}.ts`;

/** What real git records for the working tree now (a private index, the repository's own untouched). */
function gitTree(repo: string): string {
  const env = { GIT_INDEX_FILE: join(temp.make('cs-index-'), 'index') };
  git(repo, ['add', '-A'], undefined, env);
  return git(repo, ['write-tree'], undefined, env);
}

/**
 * Changes spread over the whole tree, so that the watcher's set-up or the
 * walk has read some of them and not others; `part` 0 and 1 change
 * different files.
 */
function changeEverywhere(repo: string, part: 0 | 1): void {
  for (let i = part * 50; i < FILES; i += 100) writeFileSync(join(repo, fileAt(i)), `line ${i}\nchanged while the first snapshot ran\n`);
  for (let i = 25 + part * 50; i < FILES; i += 400) rmSync(join(repo, fileAt(i)));
  for (let d = 5 + part; d < DIRS; d += 20) writeFileSync(join(repo, `pkg${d % 8}/dir${d}/new${d}.ts`), `new in dir ${d}\n`);
  mkdirSync(join(repo, `pkg${part}/brand-new/deep`), { recursive: true });
  writeFileSync(join(repo, `pkg${part}/brand-new/a.ts`), 'a\n');
  writeFileSync(join(repo, `pkg${part}/brand-new/deep/b.ts`), 'b\n');
  renameSync(join(repo, `pkg${2 + part}/dir${2 + part}`), join(repo, `pkg${2 + part}/dir${2 + part}-renamed`));
}

describe('the first snapshot in the background', () => {
  it('keeps every change made while it runs: a turn started meanwhile waits, says so, and shows what git sees change', async () => {
    const repo = temp.make('cs-first-snapshot-');
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[fileAt(i)] = `line ${i}\n`;
    makeRepo(repo, files);

    let midWalk = false;
    service = await startTestService({
      sessionDefaults: {
        // Called from inside the walk (before it yields) when it takes a while: more files change while it runs.
        onProgress: (done, total) => {
          if (midWalk || (total !== undefined && done >= total)) return;
          midWalk = true;
          changeEverywhere(repo, 1);
        },
      },
    });
    const client = await service.client();
    await client.subscribe('ahp-root://');
    const session = await service.service.openWorkspace([repo], { startInBackground: true });
    expect(session.preparing).toBeDefined();
    // Asked for at once: it waits for the first snapshot, which the files change under.
    const turnStarted = client.request<{ turnId: string }>(
      'harness/turnStarted',
      { channel: session.uri, turnId: 'turn-1', progressToken: 'first-turn' },
      { timeoutMs: 100_000 },
    );
    changeEverywhere(repo, 0);
    const listed = await client.request<{ items: { resource: string }[] }>('listSessions', { channel: 'ahp-root://' });
    expect(listed.items.map((s) => s.resource)).toContain(session.uri);

    await session.started;
    await turnStarted;
    const state = (await client.subscribe(session.uri)).snapshot!.state as SessionState;
    expect(state.lifecycle).toBe('ready');
    const frames = client.received
      .filter((m) => m['method'] === 'root/progress')
      .map((m) => m['params'] as ProgressParams)
      .filter((p) => p.progressToken === 'first-turn');
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(frames.at(-1)!.progress).toBe(frames.at(-1)!.total);
    expect(frames[0]!.message).toContain('before the turn starts');
    const status = await client.request<StatusResult>('harness/status', { channel: session.uri });
    expect(status.sessions[0]!.preparing).toBeUndefined();

    // The turn: what git sees change from its start to its end is what the turn shows, nothing the walk missed.
    const before = gitTree(repo);
    writeFileSync(join(repo, fileAt(0)), 'line 0\nchanged while the first snapshot ran\nand in the turn\n');
    writeFileSync(join(repo, fileAt(7)), 'rewritten in the turn\n');
    rmSync(join(repo, fileAt(9)));
    writeFileSync(join(repo, 'pkg0/brand-new/deep/c.ts'), 'c\nc\n');
    const after = gitTree(repo);
    const { summary } = await client.request<{ summary: TurnSummary }>('harness/turnEnded', { channel: session.uri, turnId: 'turn-1' }, { timeoutMs: 100_000 });
    const numstat = git(repo, ['diff', '--numstat', '--no-renames', before, after])
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([added, deleted, path]) => [path, Number(added), Number(deleted)]);
    expect(summary.files.map((f) => [f.path, f.added, f.deleted]).sort()).toEqual(numstat.sort());
    expect(summary.total).toBe(4);
  }, 240_000);
});
