import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe } from 'vitest';
import type { StatusResult } from '../../server/harness/status.js';
import { findServerFor, type ServerEntry } from '../../server/registry/index.js';
import { changesetUriTemplate, expandChangesetUri } from '../../protocol/index.js';
import { subscribeReady } from '../helpers/changesets.js';
import { TestClient } from '../helpers/client.js';
import { it } from '../helpers/per-test.js';
import { makeRepo, type TempDirs } from '../helpers/workspace.js';
import { run } from '../cli/serve-process.js';
import { fixture, hookInProcess, stopServer, waitFor } from './hook-fixtures.js';

const SESSION_ID = '5b7d9e1f-2a4c-4e6a-8c0e-1f3b5d7f9a12';

/** A file an agent's tool writes between two hook events. */
interface Write {
  path: string;
  content: string;
}

const HELLO: Write = { path: 'hello.txt', content: 'hello, friend\n' };
const NOTES: Write = { path: 'notes/todo.md', content: '# Todo\n- greet\n' };
const NOTEBOOK: Write = { path: 'analysis.ipynb', content: '{"cells": [1]}\n' };
const ENV: Write = { path: '.env', content: 'KEY=abc\n' };

/** One agent's recorded session (fixtures/<agent>/, shapes cited in its README.md) and what the agent expects back. */
interface Recording {
  agent: 'cursor' | 'gemini';
  /** The agent's name in session titles. */
  title: string;
  /** Hook events (fixture names) and the writes its tools made between them, up to before the session ends. */
  steps: readonly (string | Write)[];
  sessionEnd: string;
  /** The shell tool of the first turn's first step, which names no file. */
  shell: string;
  /** The tool each later step checkpoint of the first turn names. */
  tools: readonly string[];
  /** What the agent reads on stdout after an event, by event name; `*` for the others. */
  answers: Readonly<Record<string, string>>;
}

const CURSOR: Recording = {
  agent: 'cursor',
  title: 'Cursor',
  steps: [
    'cursor/01-session-start.json',
    'cursor/02-before-submit-prompt.json',
    'cursor/03-pre-tool-use-shell.json',
    'cursor/04-pre-tool-use-write-hello.json',
    HELLO,
    'cursor/05-after-file-edit-hello.json',
    'cursor/06-pre-tool-use-write-notes.json',
    NOTES,
    'cursor/07-after-file-edit-notes.json',
    'cursor/08-pre-tool-use-write-notebook.json',
    NOTEBOOK,
    'cursor/09-after-file-edit-notebook.json',
    'cursor/10-stop.json',
    'cursor/11-before-submit-prompt-env.json',
    'cursor/12-pre-tool-use-write-env.json',
    ENV,
    'cursor/13-after-file-edit-env.json',
    'cursor/14-stop-env.json',
  ],
  sessionEnd: 'cursor/15-session-end.json',
  shell: 'Shell',
  tools: ['Write', 'Write', 'Write'],
  answers: { beforeSubmitPrompt: '{"continue":true}\n', '*': '{}\n' },
};

const GEMINI: Recording = {
  agent: 'gemini',
  title: 'Gemini CLI',
  steps: [
    'gemini/01-session-start.json',
    'gemini/02-before-agent.json',
    'gemini/03-before-tool-shell.json',
    'gemini/04-before-tool-replace-hello.json',
    HELLO,
    'gemini/05-after-tool-replace-hello.json',
    'gemini/06-before-tool-write-notes.json',
    NOTES,
    'gemini/07-before-tool-replace-notebook.json',
    NOTEBOOK,
    'gemini/08-after-agent.json',
    'gemini/09-before-agent-env.json',
    'gemini/10-before-tool-replace-env.json',
    ENV,
    'gemini/11-after-agent-env.json',
  ],
  sessionEnd: 'gemini/12-session-end.json',
  shell: 'run_shell_command',
  tools: ['replace', 'write_file', 'replace'],
  answers: { '*': '{}\n' },
};

function expectedAnswer(recording: Recording, input: string): string {
  const name = (JSON.parse(input) as { hook_event_name: string }).hook_event_name;
  return recording.answers[name] ?? recording.answers['*']!;
}

function write(workspace: string, file: Write): void {
  mkdirSync(dirname(join(workspace, file.path)), { recursive: true });
  writeFileSync(join(workspace, file.path), file.content);
}

/** The workspace the Claude Code recording (claude-hook.test.ts) runs in. */
function claudeWorkspace(temp: TempDirs): string {
  const workspace = makeRepo(temp.make('cs-hook-ws-'), { '.gitignore': '.env\n', 'hello.txt': 'hi\n', 'analysis.ipynb': '{"cells": []}\n' });
  writeFileSync(join(workspace, '.env'), 'KEY=\n');
  return workspace;
}

/** The event's name, as the hook reads it from the event. */
function eventName(input: string): string {
  return (JSON.parse(input) as { hook_event_name: string }).hook_event_name;
}

// Each test has its own workspace, state directory and server: they run side by side. A hook event goes through the
// binary (`run`), as the agent runs it, the first time the agent's answer to it is checked; the repeats (and the events
// whose answers the first test checked) run the same command in the test's process (`hookInProcess`, the same answer).
describe.concurrent('Cursor and Gemini CLI hooks', { timeout: 120_000 }, () => {
  it.for([CURSOR, GEMINI])('records the same turns from a $title session as from the Claude Code one', async (recording, { temp, defer, expect }) => {
    const started: ServerEntry[] = [];
    const workspace = claudeWorkspace(temp);
    const state = temp.make('cs-hook-state-');
    // The first event of each name goes through the binary, the agent's way; its repeats run in this process.
    const spawned = new Set<string>();
    const hook = async (name: string, timeout = '10000'): Promise<void> => {
      const input = fixture(name, SESSION_ID, workspace);
      const args = ['hook', recording.agent, '--state-dir', state, '--timeout', timeout];
      const first = !spawned.has(eventName(input));
      spawned.add(eventName(input));
      const result = first ? await run(args, { input, cwd: workspace }) : await hookInProcess(args, input);
      expect(result, name).toEqual({ code: 0, stdout: expectedAnswer(recording, input), stderr: '' });
    };

    for (const step of recording.steps) {
      if (typeof step !== 'string') {
        write(workspace, step);
        continue;
      }
      const first = started.length === 0;
      await hook(step, first ? '30000' : '10000');
      // No server ran for the workspace: the first event started one.
      if (first) {
        const entry = await waitFor(() => findServerFor(state, workspace), 'the server to register');
        defer(() => stopServer(entry));
        started.push(entry);
      }
    }

    const channel = `ahp-session:/${SESSION_ID}`;
    const client = await TestClient.connect(started[0]!.url, { token: started[0]!.token! });
    await client.initialize();
    const session = (await client.request<StatusResult>('harness/status', { channel })).sessions[0]!;
    expect(session.workingDirectories).toEqual([workspace]);
    expect(session.activeTurn).toBeUndefined();
    // The same turns, messages and figures as the Claude Code recording.
    expect(session.turns.map((t) => [t.message, t.state, t.changes])).toEqual([
      ['Make hello.txt friendlier and add notes', 'complete', { files: 3, added: 4, deleted: 2 }],
      ['Put the API key in .env', 'complete', { files: 1, added: 1, deleted: 1 }],
    ]);
    const stepUri = (vars: Record<string, string>) => expandChangesetUri(changesetUriTemplate(SESSION_ID, 'step'), vars);
    expect(session.turns[0]!.steps?.map((s) => [s.tool, s.paths])).toEqual([
      [recording.shell, []],
      [recording.tools[0], ['hello.txt']],
      [recording.tools[1], ['notes/todo.md']],
      [recording.tools[2], ['analysis.ipynb']],
    ]);
    const second = await subscribeReady(client, stepUri({ turnId: session.turns[0]!.turnId, step: '3' }));
    expect(second.files.map((f) => (f._meta as { path: string }).path)).toEqual(['notes/todo.md']);

    await hook(recording.sessionEnd);
    const ended = (await client.request<StatusResult>('harness/status', { channel })).sessions[0]!;
    expect(ended.endedAt).toEqual(expect.any(String));
    expect(ended.title).toBe(`${recording.title} — Make hello.txt friendlier and add notes`);
    expect(ended.turns.map((t) => t.turnId)).toEqual(session.turns.map((t) => t.turnId));
    await client.close();
    expect(existsSync(join(state, 'hooks', recording.agent, `${SESSION_ID}.json`))).toBe(false);
  });

  it('records a Cursor turn from afterFileEdit alone: the baseline holds the file as it was; a missed prompt starts a turn there', async ({
    temp,
    defer,
    expect,
  }) => {
    const workspace = claudeWorkspace(temp);
    const state = temp.make('cs-hook-state-');
    // Every event and its answer went through the binary in the test above: these run in this process.
    const hook = async (name: string): Promise<void> => {
      const result = await hookInProcess(['hook', 'cursor', '--state-dir', state], fixture(name, SESSION_ID, workspace));
      expect(result.code, name).toBe(0);
    };
    await hook('cursor/02-before-submit-prompt.json');
    const entry = await waitFor(() => findServerFor(state, workspace), 'the server to register');
    defer(() => stopServer(entry));
    write(workspace, HELLO);
    await hook('cursor/05-after-file-edit-hello.json');
    await hook('cursor/10-stop.json');
    // The prompt of the next turn is missed: its first afterFileEdit starts a turn, which records what follows.
    write(workspace, NOTES);
    await hook('cursor/07-after-file-edit-notes.json');
    write(workspace, NOTEBOOK);
    await hook('cursor/09-after-file-edit-notebook.json');
    await hook('cursor/14-stop-env.json');

    const client = await TestClient.connect(entry.url, { token: entry.token! });
    await client.initialize();
    const session = (await client.request<StatusResult>('harness/status', { channel: `ahp-session:/${SESSION_ID}` })).sessions[0]!;
    expect(session.turns.map((t) => [t.message, t.state, t.changes?.files])).toEqual([
      ['Make hello.txt friendlier and add notes', 'complete', 1],
      ['(turn started after an edit: its prompt was not recorded)', 'complete', 1],
    ]);
    const late = await subscribeReady(client, expandChangesetUri(changesetUriTemplate(SESSION_ID, 'turn'), { turnId: session.turns[1]!.turnId }));
    expect(late.files.map((f) => (f._meta as { path: string }).path)).toEqual(['analysis.ipynb']);
    await client.close();
  });

  it('exits 0 with the answer that lets the agent go on for bad input, grants no permission, logs why, and starts no server for events it does not record', async ({
    temp,
    expect,
  }) => {
    const state = temp.make('cs-hook-state-');
    const workspace = temp.make('cs-hook-ws-');
    const cases: [agent: string, input: string, stdout: string][] = [
      ['cursor', '', '{}\n'],
      ['cursor', '[1,2]', '{}\n'],
      ['cursor', '{"hook_event_name":"stop","workspace_roots":["/"]}', '{}\n'],
      ['cursor', '{"hook_event_name":"preToolUse","conversation_id":"../x","workspace_roots":["/"]}', '{}\n'],
      ['cursor', '{"hook_event_name":"beforeSubmitPrompt","conversation_id":"c1","workspace_roots":["relative/dir"]}', '{"continue":true}\n'],
      ['cursor', '{"hook_event_name":"stop","conversation_id":"c1"}', '{}\n'],
      ['gemini', 'not json', '{}\n'],
      ['gemini', '{"session_id":"s1","cwd":"/"}', '{}\n'],
      ['gemini', '{"hook_event_name":"BeforeAgent","cwd":"/"}', '{}\n'],
      ['gemini', '{"hook_event_name":"BeforeAgent","session_id":"s1","cwd":"relative"}', '{}\n'],
    ];
    // Each event is its own process, as the agent runs them: the first bad input of each agent goes through the binary
    // (side by side), the others run in this process.
    await Promise.all(
      cases.map(async ([agent, input, stdout], i) => {
        const args = ['hook', agent, '--state-dir', state];
        const result = cases.findIndex(([a]) => a === agent) === i ? await run(args, { input }) : await hookInProcess(args, input);
        expect(result, `${agent} ${input}`).toEqual({ code: 0, stdout, stderr: '' });
      }),
    );
    const log = readFileSync(join(state, 'logs', 'hook.log'), 'utf8');
    for (const reason of [
      'cursor: error: hook input is not JSON',
      'cursor: error: hook input must be a JSON object',
      'cursor: error: hook input has no usable conversation_id: undefined',
      'cursor: error: hook input has no usable conversation_id: "../x"',
      'cursor: error: hook input has no absolute workspace_roots[0]: "relative/dir"',
      'cursor: error: hook input has no workspace_roots',
      'gemini: error: hook input is not JSON',
      'gemini: error: hook input has no hook_event_name',
      'gemini: error: hook input has no usable session_id',
      'gemini: error: hook input has no absolute cwd: "relative"',
    ]) {
      expect(log).toContain(reason);
    }

    // Events (and tools) the recorder does not act on: answered, and no server is started for them.
    const thought = JSON.stringify({
      conversation_id: SESSION_ID,
      generation_id: 'g1',
      hook_event_name: 'afterAgentThought',
      workspace_roots: [workspace],
      text: 'Thinking',
    });
    const model = JSON.stringify({
      session_id: SESSION_ID,
      cwd: workspace,
      hook_event_name: 'BeforeModel',
      timestamp: '2026-01-01T10:00:00.000Z',
      llm_request: {},
    });
    // An observer grants nothing: Cursor's events that ask for a permission get no decision, so the user's own approvals apply.
    const asking = ['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile', 'beforeTabFileRead', 'subagentStart'].map((name) =>
      JSON.stringify({
        conversation_id: SESSION_ID,
        generation_id: 'g1',
        hook_event_name: name,
        workspace_roots: [workspace],
        command: 'rm -rf build',
        file_path: join(workspace, 'a.txt'),
      }),
    );
    const ignored = [
      ['cursor', thought, '{}\n'],
      ['cursor', fixture('cursor/03-pre-tool-use-shell.json', SESSION_ID, workspace), '{}\n'],
      ...asking.map((input) => ['cursor', input, '{}\n'] as const),
      ['gemini', model, '{}\n'],
      ['gemini', fixture('gemini/03-before-tool-shell.json', SESSION_ID, workspace), '{}\n'],
    ] as const;
    await Promise.all(
      ignored.map(async ([agent, input, stdout]) => {
        expect(await hookInProcess(['hook', agent, '--state-dir', state], input)).toEqual({ code: 0, stdout, stderr: '' });
      }),
    );
    expect(await findServerFor(state, workspace)).toBeUndefined();
    expect(existsSync(join(state, 'servers'))).toBe(false);

    // A setup mistake is not a block: exit 1 (2 would refuse the agent's action), saying what is supported.
    const unknown = await run(['hook', 'codex', '--state-dir', state], { input: '{}' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown agent "codex"; supported: claude, cursor, gemini');
  });
});
