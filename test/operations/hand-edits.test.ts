import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { run } from '../cli/serve-process.js';
import type { TestClient } from '../helpers/client.js';
import { callTool, mcpAgent, servedWorkspace } from '../helpers/mcp-agent.js';
import { subscribeReady } from '../helpers/changesets.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { makeRepo, TempDirs, writeFiles } from '../helpers/workspace.js';
import { useMemoryTempDir } from '../helpers/memory-temp.js';

useMemoryTempDir();

const temp = new TempDirs();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  temp.cleanup();
});

const BETWEEN = { path: 'b.txt', reason: expect.stringContaining('edited between turn 1 and turn 2') };

/**
 * Turn 1 edits a.txt in two tool calls, the user then edits b.txt by hand,
 * and turn 2 edits c.txt: the hand edit is in no turn's changes.
 */
async function handEditBetweenTurns(client: TestClient, session: string, repo: string): Promise<void> {
  const turn = async (turnId: string, edits: Record<string, string>[]) => {
    await client.request('harness/turnStarted', { channel: session, turnId }, { timeoutMs: 30_000 });
    for (const files of edits) {
      await client.request('harness/beforeEdit', { channel: session, turnId, paths: Object.keys(files), tool: 'Edit' }, { timeoutMs: 30_000 });
      writeFiles(repo, files);
    }
    await client.request('harness/turnEnded', { channel: session, turnId }, { timeoutMs: 60_000 });
  };
  await turn('t1', [{ 'a.txt': 'a1\n' }, { 'a.txt': 'a2\n' }]);
  writeFiles(repo, { 'b.txt': 'b by hand\n' });
  await turn('t2', [{ 'c.txt': 'c by turn 2\n' }]);
}

const START = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };

describe('edits no turn made, over the protocol', () => {
  let svc: TestService;

  it('a restore names a hand edit made between two turns, for the turn and for one of its steps, dry run and real', async () => {
    svc = await startTestService();
    cleanups.push(() => svc.stop());
    const client = await svc.client();
    const repo = makeRepo(temp.make(), START);
    const session = 'ahp-session:/hand';
    await client.request('createSession', { channel: session, workingDirectory: pathToFileURL(repo).href });
    await handEditBetweenTurns(client, session, repo);
    const t1 = expandChangesetUri(changesetUriTemplate('hand', 'turn'), { turnId: 't1' });
    await subscribeReady(client, t1);
    const invoke = (meta: Record<string, unknown>, operationId = 'restore-checkpoint') =>
      client.request<{ message: string; _meta?: Record<string, unknown> }>(
        'invokeChangesetOperation',
        { channel: t1, operationId, _meta: meta },
        { timeoutMs: 30_000 },
      );

    const dry = await invoke({ dryRun: true });
    expect(dry._meta?.['userEdited']).toEqual(['b.txt']);
    expect(dry._meta?.['userEdits']).toEqual([BETWEEN]);
    expect(dry.message).toContain('1 file had edits no turn made: b.txt');

    const step = await invoke({ dryRun: true, step: 2 });
    expect(step._meta?.['userEdits']).toEqual([BETWEEN]);
    expect(step.message).toContain('1 file had edits no turn made: b.txt');

    // A revert of turn 1 merges: the hand edit is not the turn's and stays; the dry run says so.
    const revert = await invoke({ dryRun: true }, 'revert');
    expect(revert._meta?.['files']).toEqual([{ path: 'a.txt', action: 'write' }]);
    expect(revert._meta?.['userEdits']).toEqual([]);

    const done = await invoke({});
    expect(done._meta?.['userEdits']).toEqual([BETWEEN]);
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b\n');
  });
});

describe('edits no turn made, named by the command line and the MCP tools', () => {
  // Both tests only read (dry runs): one server over one recorded workspace for the two of them.
  const shared = new TempDirs();
  const stops: (() => unknown)[] = [];
  let repo: string;
  let stateDir: string;
  beforeAll(async () => {
    repo = makeRepo(shared.make(), START);
    stateDir = shared.make('state-');
    const { client, session } = await servedWorkspace(repo, stateDir, (stop) => stops.push(stop));
    await handEditBetweenTurns(client, session, repo);
  }, 120_000);
  afterAll(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    shared.cleanup();
  });

  it('restore --turn 1 --dry-run names the file, in text and in --json', async () => {
    const text = await run(['restore', '--turn', '1', '--dry-run', '--state-dir', stateDir], { cwd: repo });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('write  b.txt');
    expect(text.stdout).toMatch(/edits no turn made.*\n.*b\.txt: edited between turn 1 and turn 2/);

    const json = await run(['restore', '--turn', '1', '--dry-run', '--json', '--state-dir', stateDir], { cwd: repo });
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(report['userEdited']).toEqual(['b.txt']);
    expect(report['userEdits']).toEqual([BETWEEN]);
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b by hand\n');
  }, 120_000);

  it('restore_checkpoint with a step and dry_run names the file', async () => {
    const mcp = await mcpAgent(repo, stateDir, (close) => cleanups.push(close));
    const result = await callTool(mcp, 'restore_checkpoint', { turn: 1, step: 2, dry_run: true });
    expect(result.isError).not.toBe(true);
    expect(result.data['userEdited']).toEqual(['b.txt']);
    expect(result.data['userEdits']).toEqual([BETWEEN]);
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b by hand\n');
  }, 120_000);
});
