import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import type { StatusResult } from '../../server/harness/status.js';
import { findServerFor, isProcessAlive, type ServerEntry } from '../../server/registry/index.js';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { it } from '../helpers/per-test.js';
import { makeRepo } from '../helpers/workspace.js';
import { run, startServe } from '../cli/serve-process.js';
import { fixture as recordedEvent, hookInProcess, stopServer, waitFor } from './hook-fixtures.js';

const SESSION_ID = '3f1c2a9e-7b4d-4c1e-9a8f-0d2b6e5c4a71';

const fixture = (name: string, cwd: string): string => recordedEvent(name, SESSION_ID, cwd);

// Each test has its own workspace, state directory and server: they run side by side. A hook event goes through the
// binary (`run`), as the agent runs it, where that is what is checked: each event's first run in the recorded session,
// the server that goes away when idle, the modules a hook loads, a bad input's answer. The others run the same command
// in the test's process (`hookInProcess`, the same answer).
describe.concurrent('Claude Code hook', { timeout: 120_000 }, () => {
  /** A server the hook started in the background, stopped after the test. */
  const started = (defer: (cleanup: () => unknown) => void, entry: ServerEntry): ServerEntry => {
    defer(() => stopServer(entry));
    return entry;
  };

  it('records a Claude Code session from its hook events, starting a server in the background', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make('cs-hook-ws-'), {
      '.gitignore': '.env\n',
      'hello.txt': 'hi\n',
      'analysis.ipynb': '{"cells": []}\n',
    });
    writeFileSync(join(workspace, '.env'), 'KEY=\n');
    const state = temp.make('cs-hook-state-');
    // The first event of each name goes through the binary; its repeats run in this process.
    const spawned = new Set<string>();
    const hook = async (name: string, timeout = '10000'): Promise<void> => {
      const input = fixture(name, workspace);
      const event = (JSON.parse(input) as { hook_event_name: string }).hook_event_name;
      const args = ['hook', 'claude', '--state-dir', state, '--timeout', timeout];
      const result = spawned.has(event) ? await hookInProcess(args, input) : await run(args, { input, cwd: workspace });
      spawned.add(event);
      expect(result, name).toEqual({ code: 0, stdout: '', stderr: '' });
    };

    // No server runs for the workspace: the first event starts one.
    await hook('01-session-start.json', '30000');
    const entry = started(defer, await waitFor(() => findServerFor(state, workspace), 'the server to register'));
    expect(entry.directories).toEqual([workspace]);

    await hook('02-user-prompt-submit.json');
    await hook('03-pre-tool-use-bash.json');
    await hook('04-pre-tool-use-edit.json');
    writeFileSync(join(workspace, 'hello.txt'), 'hello, friend\n');
    await hook('05-pre-tool-use-write.json');
    mkdirSync(join(workspace, 'notes'));
    writeFileSync(join(workspace, 'notes/todo.md'), '# Todo\n- greet\n');
    await hook('06-pre-tool-use-notebook-edit.json');
    writeFileSync(join(workspace, 'analysis.ipynb'), '{"cells": [1]}\n');
    await hook('07-stop.json');

    await hook('08-user-prompt-submit-with-id.json');
    await hook('09-pre-tool-use-multi-edit-with-id.json');
    writeFileSync(join(workspace, '.env'), 'KEY=abc\n');
    await hook('10-stop-with-id.json');

    const channel = `ahp-session:/${SESSION_ID}`;
    const client = await TestClient.connect(entry.url, { token: entry.token! });
    await client.initialize();
    const status = await client.request<StatusResult>('harness/status', { channel });
    const session = status.sessions[0]!;
    expect(session.workingDirectories).toEqual([workspace]);
    expect(session.activeTurn).toBeUndefined();
    expect(session.turns.map((t) => [t.message, t.state, t.changes])).toEqual([
      ['Make hello.txt friendlier and add notes', 'complete', { files: 3, added: 4, deleted: 2 }],
      ['Put the API key in .env', 'complete', { files: 1, added: 1, deleted: 1 }],
    ]);
    expect(session.turns[1]!.turnId).toBe('prompt-2');
    const chat = await client.subscribe(session.chat);
    const turns = (chat.snapshot!.state as { turns: { id: string; _meta?: unknown }[] }).turns;
    expect(turns.map((t) => t.id)).toEqual(session.turns.map((t) => t.turnId));
    // Each file-tool and shell event recorded a step checkpoint before its tool ran.
    const stepUri = (vars: Record<string, string>) => expandChangesetUri(changesetUriTemplate(SESSION_ID, 'step'), vars);
    expect(session.turns[0]!.steps?.map((s) => [s.tool, s.paths])).toEqual([
      ['Bash', []],
      ['Edit', ['hello.txt']],
      ['Write', ['notes/todo.md']],
      ['NotebookEdit', ['analysis.ipynb']],
    ]);
    const write = await subscribeReady(client, stepUri({ turnId: session.turns[0]!.turnId, step: '3' }));
    expect(write.files.map((f) => (f._meta as { path: string }).path)).toEqual(['notes/todo.md']);
    const last = await client.request<StatusResult>('harness/status', { channel, turns: 1 });
    expect(last.sessions[0]!.turnCount).toBe(2);
    expect(last.sessions[0]!.turns.map((t) => t.turnId)).toEqual(['prompt-2']);

    await hook('11-session-end.json');
    // Ended, not gone: still listed, with its turns, and it records no more.
    const ended = (await client.request<StatusResult>('harness/status', { channel })).sessions[0]!;
    expect(ended.endedAt).toEqual(expect.any(String));
    expect(ended.title).toBe('Claude Code — Make hello.txt friendlier and add notes');
    expect(ended.turns.map((t) => t.turnId)).toEqual(session.turns.map((t) => t.turnId));
    await client.close();
    expect(existsSync(join(state, 'hooks', 'claude', `${SESSION_ID}.json`))).toBe(false);
  });

  it('lets the server it started go away when idle, and picks the session up again at the next event', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make('cs-hook-ws-'), { 'hello.txt': 'hi\n' });
    const state = temp.make('cs-hook-state-');
    // Through the binary: the hook's own process reaches the server it started before that goes idle (a test's process,
    // busy with the tests beside it, may come too late).
    const hook = (name: string) =>
      run(['hook', 'claude', '--state-dir', state, '--timeout', '30000', '--idle-timeout', '1500'], { input: fixture(name, workspace), cwd: workspace });
    expect((await hook('02-user-prompt-submit.json')).code).toBe(0);
    const first = started(defer, await waitFor(() => findServerFor(state, workspace), 'the server to register'));
    writeFileSync(join(workspace, 'hello.txt'), 'hello\n');
    expect((await hook('07-stop.json')).code).toBe(0);
    // No turn being recorded and no client: it stops by itself.
    await waitFor(async () => (isProcessAlive(first.pid) ? undefined : true), 'the idle server to exit', 20_000);
    expect(await findServerFor(state, workspace)).toBeUndefined();

    expect((await hook('08-user-prompt-submit-with-id.json')).code).toBe(0);
    const second = started(defer, await waitFor(() => findServerFor(state, workspace), 'a new server to register'));
    expect(second.pid).not.toBe(first.pid);
    const client = await TestClient.connect(second.url, { token: second.token! });
    await client.initialize();
    const status = await client.request<StatusResult>('harness/status', { channel: `ahp-session:/${SESSION_ID}` });
    expect(status.sessions[0]!.turns.map((t) => [t.state, t.changes?.files])).toEqual([
      ['complete', 1],
      [undefined, undefined],
    ]);
    await client.close();
  });

  it('records an edit even when the prompt event was missed', async ({ temp, defer, expect }) => {
    const workspace = makeRepo(temp.make('cs-hook-ws-'), { 'hello.txt': 'hi\n', 'analysis.ipynb': '{}\n' });
    const state = temp.make('cs-hook-state-');
    const hook = (name: string) => hookInProcess(['hook', 'claude', '--state-dir', state], fixture(name, workspace));
    expect((await hook('04-pre-tool-use-edit.json')).code).toBe(0);
    const entry = started(defer, await waitFor(() => findServerFor(state, workspace), 'the server to register'));
    writeFileSync(join(workspace, 'hello.txt'), 'hello\n');
    expect((await hook('07-stop.json')).code).toBe(0);
    const client = await TestClient.connect(entry.url, { token: entry.token! });
    await client.initialize();
    const status = await client.request<StatusResult>('harness/status', { channel: `ahp-session:/${SESSION_ID}` });
    expect(status.sessions[0]!.turns.map((t) => [t.state, t.changes?.files])).toEqual([['complete', 1]]);
    await client.close();
  });

  it('exits 0 with nothing on stdout for garbage input, and logs why', async ({ temp, expect }) => {
    const state = temp.make('cs-hook-state-');
    const inputs = ['', 'not json', '[1,2]', '{"hook_event_name":"Stop"}', '{"hook_event_name":"Stop","session_id":"../x","cwd":"/"}'];
    // The first through the binary, the others in this process.
    await Promise.all(
      inputs.map(async (input, i) => {
        const args = ['hook', 'claude', '--state-dir', state];
        const result = i === 0 ? await run(args, { input }) : await hookInProcess(args, input);
        expect(result, input).toEqual({ code: 0, stdout: '', stderr: '' });
      }),
    );
    const log = readFileSync(join(state, 'logs', 'hook.log'), 'utf8');
    expect(log).toContain('hook input is not JSON');
    expect(log).toContain('hook input must be a JSON object');
    expect(log).toContain('no usable session_id');
  });

  it('exits 0 when no server can start, and when the state directory is unusable', async ({ temp, expect }) => {
    const state = temp.make('cs-hook-state-');
    const missing = join(temp.make(), 'does-not-exist');
    const result = await hookInProcess(['hook', 'claude', '--state-dir', state], fixture('01-session-start.json', missing));
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(state, 'logs', 'hook.log'), 'utf8')).toMatch(/error: the server for .*does-not-exist (could not start|exited)/);

    const file = join(temp.make(), 'a-file');
    writeFileSync(file, '');
    const unusable = await hookInProcess(['hook', 'claude', '--state-dir', file], fixture('02-user-prompt-submit.json', temp.make()));
    expect(unusable).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('records an edit with the server running without loading ws, vscode-jsonrpc, isomorphic-git, the MCP SDK or the server', async ({ temp, expect }) => {
    const workspace = makeRepo(temp.make('cs-hook-ws-'), { 'hello.txt': 'hi\n' });
    const state = temp.make('cs-hook-state-');
    const serve = await startServe([workspace, '--no-session', '--state-dir', state]);
    try {
      const hook = (name: string) => hookInProcess(['hook', 'claude', '--state-dir', state], fixture(name, workspace));
      expect(await hook('02-user-prompt-submit.json')).toEqual({ code: 0, stdout: '', stderr: '' });
      // The edit, whose modules are looked at, goes through the binary.
      const log = join(temp.make(), 'modules.log');
      const edit = await run(['hook', 'claude', '--state-dir', state], {
        input: fixture('04-pre-tool-use-edit.json', workspace),
        cwd: workspace,
        env: { CHANGESET_SERVER_TEST_MODULE_LOG: log },
        nodeArgs: ['--import', join(process.cwd(), 'test', 'cli', 'module-log.mjs')],
      });
      expect(edit).toEqual({ code: 0, stdout: '', stderr: '' });
      const loaded = readFileSync(log, 'utf8')
        .split('\n')
        .filter((url) => url.startsWith('file:'))
        .map((url) => relative(process.cwd(), fileURLToPath(url)));
      expect(loaded).toContain(join('dist', 'server', 'hook', 'agent-hook.js'));
      expect(loaded.filter((m) => /(^|\/)node_modules\/(ws|vscode-jsonrpc|isomorphic-git|@modelcontextprotocol)\//.test(m))).toEqual([]);
      // No dependency at all, nor the protocol's validators or any part of the server (but where the state directory is).
      expect(loaded.filter((m) => m.includes('node_modules'))).toEqual([]);
      expect(
        loaded.filter((m) =>
          /^dist\/(protocol\/(index|validate)|server\/(store\/(?!state-dir\.js)|transport|connection|session|channels|security)\/?)/.test(m),
        ),
      ).toEqual([]);

      writeFileSync(join(workspace, 'hello.txt'), 'hello, friend\n');
      expect(await hook('07-stop.json')).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(readFileSync(join(state, 'logs', 'hook.log'), 'utf8')).not.toContain('error');
      const client = await TestClient.connect(serve.ready.url, { token: serve.ready.token! });
      await client.initialize();
      const session = (await client.request<StatusResult>('harness/status', { channel: `ahp-session:/${SESSION_ID}` })).sessions[0]!;
      expect(session.turns.map((t) => [t.message, t.state, t.changes])).toEqual([
        ['Make hello.txt friendlier and add notes', 'complete', { files: 1, added: 1, deleted: 1 }],
      ]);
      expect(session.turns[0]!.steps?.map((s) => [s.tool, s.paths])).toEqual([['Edit', ['hello.txt']]]);
      await client.close();
    } finally {
      await serve.stop();
    }
  });

  it('ignores events it does not record without starting a server', async ({ temp, expect }) => {
    const state = temp.make('cs-hook-state-');
    const workspace = temp.make('cs-hook-ws-');
    const result = await hookInProcess(['hook', 'claude', '--state-dir', state], fixture('03-pre-tool-use-bash.json', workspace));
    expect(result.code).toBe(0);
    expect(await findServerFor(state, workspace)).toBeUndefined();
    expect(existsSync(join(state, 'servers'))).toBe(false);
  });
});
