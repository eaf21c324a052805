/**
 * Commits linked to turns: a recorded session, then the user commits with a
 * real `git commit`; the turns whose lines the commit added show it (the
 * session state's `_meta.turns`, `harness/status`, the `status` words), and
 * without `--notes` nothing is written into the user's repository.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SessionState, StatusResult, TimelineMeta } from '../../protocol/index.js';
import { formatStatus } from '../../server/cli/status-command.js';
import { formatStoredStatus, readStoredStatus } from '../../server/cli/stored-status.js';
import { ChangesetService } from '../../server/service.js';
import type { TestClient } from '../helpers/client.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';
import { serviceForEachTest } from '../helpers/service.js';
import { until } from '../helpers/wait.js';
import { git, makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';

useMemoryTempDir();

const temp = new TempDirs();
let client: TestClient;
serviceForEachTest(temp, (_svc, c) => {
  client = c;
});

const SESSION = 'ahp-session:/commits';

async function turn(id: string, message: string, paths: string[], edit: () => void): Promise<void> {
  await client.request('harness/turnStarted', { channel: SESSION, turnId: id, message }, { timeoutMs: 60_000 });
  await client.request('harness/beforeEdit', { channel: SESSION, turnId: id, paths, tool: 'Edit' }, { timeoutMs: 60_000 });
  edit();
  await client.request('harness/turnEnded', { channel: SESSION, turnId: id }, { timeoutMs: 60_000 });
}

/** `harness/status` once the turn lists a commit. */
async function statusWithCommit(turnIndex: number): Promise<StatusResult> {
  let status: StatusResult | undefined;
  const deadline = Date.now() + 20_000;
  for (;;) {
    status = await client.request<StatusResult>('harness/status', { channel: SESSION }, { timeoutMs: 60_000 });
    if (status.sessions[0]?.turns.find((t) => t.index === turnIndex)?.commits?.length) return status;
    if (Date.now() > deadline) throw new Error(`turn ${turnIndex} never listed a commit: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every object file and ref of the repository, and what `git count-objects -v` says. */
function repositoryWrites(repo: string): { refs: string; counts: string; packs: string[] } {
  return {
    refs: git(repo, ['for-each-ref', '--format=%(refname) %(objectname)']),
    counts: git(repo, ['count-objects', '-v']),
    packs: readdirSync(join(repo, '.git', 'objects', 'pack')),
  };
}

describe('commits linked to turns', () => {
  it('shows the commit on the turns whose lines it added, in status words, and writes nothing into the repository', async () => {
    const repo = makeRepo(temp.make(), { 'parser.ts': 'one\ntwo\nthree\n', 'notes.md': 'n\n' });
    await client.request('createSession', { channel: SESSION, workingDirectory: pathToFileURL(repo).href }, { timeoutMs: 60_000 });
    await turn('t1', 'Make the parser count', ['parser.ts'], () => writeFiles(repo, { 'parser.ts': 'one\ntwo\nthree\ncount()\nreturn\n' }));
    await turn('t2', 'Only touch the notes', ['notes.md'], () => writeFiles(repo, { 'notes.md': 'n\nmore\n' }));
    // The user's own line, typed after the turns; and only parser.ts goes into the commit.
    writeFiles(repo, { 'parser.ts': '// mine\none\ntwo\nthree\ncount()\nreturn\n' });
    git(repo, ['commit', '-q', '-m', 'Fix parser', '--', 'parser.ts']);
    const head = git(repo, ['rev-parse', 'HEAD']);

    const status = await statusWithCommit(1);
    const turns = status.sessions[0]!.turns;
    expect(turns.find((t) => t.index === 1)!.commits).toEqual([{ oid: head, summary: 'Fix parser', lines: 2, at: expect.any(String) }]);
    // Turn 2's lines are not in the commit.
    expect(turns.find((t) => t.index === 2)!.commits).toBeUndefined();
    expect(formatStatus(status)).toContain(`turn 1 landed in ${head.slice(0, 7)} "Fix parser"`);
    expect(formatStatus(status)).not.toContain('turn 2 landed');

    // The session state carries it for the viewer's turn row.
    const state = (await client.subscribe(SESSION)).snapshot!.state as SessionState;
    const meta = state._meta as unknown as TimelineMeta;
    expect(meta.turns['t1']!.commits).toEqual([expect.objectContaining({ oid: head, summary: 'Fix parser', lines: 2 })]);

    // Without --notes: no ref, no pack, no object beyond what git itself wrote.
    const writes = repositoryWrites(repo);
    expect(writes.refs).toBe(`refs/heads/main ${head}`);
    expect(writes.packs).toEqual([]);
    const reachable = git(repo, ['rev-list', '--objects', '--all']).split('\n').length;
    expect(writes.counts).toContain(`count: ${reachable}\n`);

    // A later commit of turn 2's lines links turn 2, and turn 1 keeps its commit.
    git(repo, ['commit', '-q', '-am', 'Notes']);
    const second = git(repo, ['rev-parse', 'HEAD']);
    const after = await statusWithCommit(2);
    expect(after.sessions[0]!.turns.find((t) => t.index === 2)!.commits).toEqual([expect.objectContaining({ oid: second, summary: 'Notes', lines: 1 })]);
    expect(after.sessions[0]!.turns.find((t) => t.index === 1)!.commits!.map((c) => c.oid)).toEqual([head]);
    await until(() => repositoryWrites(repo).refs === `refs/heads/main ${second}`, 'the branch alone');
  });

  it('keeps the link with the session: a restarted server shows it on the resumed turn', async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const stateDir = temp.make('state-');
    const start = async (): Promise<ChangesetService> => {
      const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir, log: () => undefined });
      await service.start();
      return service;
    };
    const first = await start();
    let head: string;
    try {
      const session = await first.openWorkspace([repo]);
      const handle = await session.startTurn({ id: 'one', message: 'Grow a' });
      writeFiles(repo, { 'a.txt': 'a\nb\n' });
      await handle.end();
      git(repo, ['commit', '-q', '-am', 'Grow a']);
      head = git(repo, ['rev-parse', 'HEAD']);
      await until(() => session.meta.turns['one']?.commits?.[0]?.oid === head, 'the link');
    } finally {
      await first.stop();
    }
    // status with no server running reads it from the store.
    const stored = await readStoredStatus(stateDir, realpathSync(repo), 5);
    expect(formatStoredStatus(stored)).toContain(`turn 1 landed in ${head.slice(0, 7)} "Grow a"`);
    const second = await start();
    try {
      const resumed = await second.openWorkspace([repo]);
      await until(() => resumed.meta.turns['one']?.commits?.[0]?.oid === head, 'the link after the restart');
      expect(resumed.meta.turns['one']!.commits).toEqual([{ oid: head, summary: 'Grow a', lines: 1, at: expect.any(String) }]);
    } finally {
      await second.stop();
    }
  });

  it("takes an agent's own commit once its turn has ended, and a stop does not wait for a turn that never ends", async () => {
    const repo = makeRepo(temp.make(), { 'a.txt': 'a\n' });
    const service = new ChangesetService({ host: '127.0.0.1', port: 0, stateDir: temp.make('state-'), log: () => undefined });
    await service.start();
    let stopped = false;
    try {
      const session = await service.openWorkspace([repo]);
      const first = await session.startTurn({ id: 'one', message: 'Grow a and commit' });
      writeFiles(repo, { 'a.txt': 'a\nb\n' });
      git(repo, ['commit', '-q', '-am', 'Grow a']);
      const head = git(repo, ['rev-parse', 'HEAD']);
      await first.end();
      await until(() => session.meta.turns['one']?.commits?.[0]?.oid === head, 'the link after the turn ended');
      expect(session.meta.turns['one']!.commits![0]!.lines).toBe(1);

      // A commit seen while the turn is being ended (its end snapshot taken, its row not shown yet) waits for the end too.
      const second = await session.startTurn({ id: 'two', message: 'Grow b and commit' });
      writeFiles(repo, { 'a.txt': 'a\nb\nb2\n' });
      const ending = second.end();
      await new Promise<void>((resolve) => {
        const poll = (): void => void (session.turns[1]?.after ? resolve() : setImmediate(poll));
        poll();
      });
      expect(session.meta.turns['two']).toBeUndefined();
      git(repo, ['commit', '-q', '-am', 'Grow b']);
      const next = git(repo, ['rev-parse', 'HEAD']);
      const checked = service.commits.check();
      await ending;
      await checked;
      expect(session.meta.turns['two']!.commits).toEqual([{ oid: next, summary: 'Grow b', lines: 1, at: expect.any(String) }]);

      // A commit during a turn still running when the server stops.
      await session.startTurn({ id: 'three', message: 'Grow more' });
      writeFiles(repo, { 'a.txt': 'a\nb\nb2\nc\n' });
      git(repo, ['commit', '-q', '-am', 'Grow more']);
      await new Promise((r) => setTimeout(r, 300));
      await service.stop();
      stopped = true;
    } finally {
      if (!stopped) await service.stop();
    }
  });
});
