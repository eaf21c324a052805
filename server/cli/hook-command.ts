import { parseArgs } from 'node:util';
import { runAgentHook } from '../hook/agent-hook.js';
import { claudeAgent } from '../hook/claude-event.js';
import { cursorAgent } from '../hook/cursor-event.js';
import { geminiAgent } from '../hook/gemini-event.js';
import { peekHookEventName, type HookAgent } from '../hook/hook-event.js';
import { hookLog } from '../client/hook-log.js';
import { defaultStateDir } from '../store/state-dir.js';
import { cliCommand } from '../client/package-root.js';

export const HOOK_USAGE = [
  'Usage: changeset-server hook claude|cursor|gemini [--comments] [--state-dir DIR] [--timeout MS] [--idle-timeout MS]',
  '',
  'Reads one hook event (JSON) on stdin and records it:',
  '  claude   Claude Code: SessionStart, UserPromptSubmit, PreToolUse (Edit, Write, MultiEdit,',
  '           NotebookEdit, Bash), Stop, SessionEnd',
  '  cursor   Cursor: sessionStart, beforeSubmitPrompt, preToolUse (Write, Delete, Shell),',
  '           afterFileEdit, stop, sessionEnd',
  '  gemini   Gemini CLI: SessionStart, BeforeAgent, BeforeTool (write_file, replace,',
  '           run_shell_command), AfterAgent, SessionEnd',
  'Starts a server for the workspace in the background when none runs.',
  'Never fails the agent: problems go to <state-dir>/logs/hook.log, the exit code is 0, and stdout',
  'holds the answer that lets the agent go on (nothing for Claude Code, JSON for Cursor and Gemini CLI).',
  '',
  '  --comments           at the prompt event, hand the open review comments to the agent as context',
  '                       (Claude Code and Gemini CLI; Cursor offers no way to add context there)',
  '  --state-dir DIR      state directory (default $XDG_STATE_HOME/changeset-server or ~/.local/state/changeset-server)',
  '  --timeout MS         give up after MS milliseconds (default 10000)',
  '  --idle-timeout MS    a server the hook starts stops after MS milliseconds with no turn being',
  '                       recorded and no client connected (default 600000); sessions stay resumable',
  '',
].join('\n');

/** The agents whose hook events the command reads, by the name it is given. */
const AGENTS: ReadonlyMap<string, HookAgent> = new Map([claudeAgent, cursorAgent, geminiAgent].map((agent) => [agent.name, agent]));

/** Default bound on one hook invocation. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;

/** Largest hook input read from stdin. */
const MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** `changeset-server hook <agent>`: always exits 0 once the event is handled, failed, or timed out. */
export async function hookCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const startedAt = Date.now();
  let values: {
    'state-dir'?: string | undefined;
    timeout?: string | undefined;
    'idle-timeout'?: string | undefined;
    comments?: boolean | undefined;
    help?: boolean | undefined;
  };
  let agentName: string | undefined;
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: {
        'state-dir': { type: 'string' },
        timeout: { type: 'string' },
        'idle-timeout': { type: 'string' },
        comments: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values;
    agentName = parsed.positionals[0];
    if (parsed.positionals.length > 1) throw new Error(`unexpected argument "${parsed.positionals[1]}"`);
  } catch (error) {
    // Exit code 2 blocks the action in Claude Code, Cursor and Gemini CLI alike: a setup mistake exits 1.
    process.stderr.write(`changeset-server hook: ${(error as Error).message}\n\n${HOOK_USAGE}`);
    return 1;
  }
  if (values.help) {
    process.stdout.write(HOOK_USAGE);
    return 0;
  }
  const agent = agentName === undefined ? undefined : AGENTS.get(agentName);
  if (!agent) {
    const supported = [...AGENTS.keys()].join(', ');
    process.stderr.write(
      `changeset-server hook: unknown agent ${agentName === undefined ? '(none)' : `"${agentName}"`}; supported: ${supported}\n\n${HOOK_USAGE}`,
    );
    return 1;
  }
  const stateDir = values['state-dir'] ?? defaultStateDir(env);
  const log = (line: string): void => hookLog(stateDir, `${agent.name}: ${line}`);
  const timeoutMs = values.timeout === undefined ? DEFAULT_HOOK_TIMEOUT_MS : Number(values.timeout);
  const idleTimeoutMs = values['idle-timeout'] === undefined ? undefined : Number(values['idle-timeout']);
  let problem: string | undefined;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100) problem = `--timeout must be an integer of at least 100 ms, got "${values.timeout}"`;
  else if (idleTimeoutMs !== undefined && (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 1))
    problem = `--idle-timeout must be a positive integer of milliseconds, got "${values['idle-timeout']}"`;
  const boundMs = problem ? DEFAULT_HOOK_TIMEOUT_MS : timeoutMs;

  // The answer goes out as soon as the event is known, so that giving up later still leaves it on stdout.
  let answered = false;
  let eventName: string | undefined;
  const answer = (hookEventName: string | undefined, context?: string): void => {
    if (answered) return;
    answered = true;
    const text =
      context !== undefined && hookEventName !== undefined && agent.contextAnswer ? agent.contextAnswer(hookEventName, context) : agent.answer(hookEventName);
    if (text) process.stdout.write(`${text}\n`);
  };
  const deadline = startedAt + boundMs;
  const timer = setTimeout(() => {
    log(`gave up after ${boundMs} ms`);
    answer(eventName);
    process.exit(0);
  }, boundMs);
  timer.unref();
  try {
    const input = await readStdin(MAX_INPUT_BYTES);
    eventName = peekHookEventName(input);
    // With --comments the prompt event's answer waits for the comments (briefly: a timeout answers without them).
    const withComments = values.comments === true && agent.contextAnswer !== undefined && eventName === agent.events.promptSubmit && !problem;
    if (!withComments) answer(eventName);
    if (problem) log(problem);
    else {
      const context = await runAgentHook(agent, input, {
        stateDir,
        deadline: deadline - 500,
        command: cliCommand(),
        ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
        ...(withComments ? { comments: true } : {}),
        log,
      });
      answer(eventName, context);
    }
  } catch (error) {
    log(`error: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    answer(eventName);
  }
  return 0;
}

function readStdin(maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        process.stdin.destroy();
        reject(new Error(`hook input is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    process.stdin.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.once('error', reject);
  });
}
