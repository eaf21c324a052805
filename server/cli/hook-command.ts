import { parseArgs } from 'node:util';
import { runClaudeHook } from '../hook/claude-hook.js';
import { hookLog } from '../hook/hook-log.js';
import { defaultStateDir } from '../store/index.js';
import { DEFAULT_HOOK_IDLE_MS } from './idle-exit.js';
import { cliCommand } from './package-root.js';

export const HOOK_USAGE = [
  'Usage: changeset-server hook claude [--state-dir DIR] [--timeout MS] [--idle-timeout MS]',
  '',
  'Reads one Claude Code hook event (JSON) on stdin and records it: SessionStart,',
  'UserPromptSubmit, PreToolUse (Edit, Write, MultiEdit, NotebookEdit), Stop,',
  'SessionEnd. Starts a server for the workspace in the background when none runs.',
  'Never fails the agent: problems go to <state-dir>/logs/hook.log and the exit code is 0.',
  '',
  '  --state-dir DIR      state directory (default $XDG_STATE_HOME/changeset-server or ~/.local/state/changeset-server)',
  '  --timeout MS         give up after MS milliseconds (default 10000)',
  '  --idle-timeout MS    a server the hook starts stops after MS milliseconds with no turn being',
  '                       recorded and no client connected (default 600000); sessions stay resumable',
  '',
].join('\n');

/** Default bound on one hook invocation. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;

/** Largest hook input read from stdin. */
const MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** `changeset-server hook claude`: always exits 0 once the event is handled, failed, or timed out. */
export async function hookCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const startedAt = Date.now();
  let values: { 'state-dir'?: string | undefined; timeout?: string | undefined; 'idle-timeout'?: string | undefined; help?: boolean | undefined };
  let agent: string | undefined;
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { 'state-dir': { type: 'string' }, timeout: { type: 'string' }, 'idle-timeout': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values;
    agent = parsed.positionals[0];
    if (parsed.positionals.length > 1) throw new Error(`unexpected argument "${parsed.positionals[1]}"`);
  } catch (error) {
    // Exit code 2 would block a Claude Code tool call: a setup mistake exits 1.
    process.stderr.write(`changeset-server hook: ${(error as Error).message}\n\n${HOOK_USAGE}`);
    return 1;
  }
  if (values.help) {
    process.stdout.write(HOOK_USAGE);
    return 0;
  }
  if (agent !== 'claude') {
    process.stderr.write(`changeset-server hook: unknown agent ${agent === undefined ? '(none)' : `"${agent}"`}; supported: claude\n\n${HOOK_USAGE}`);
    return 1;
  }
  const timeoutMs = values.timeout === undefined ? DEFAULT_HOOK_TIMEOUT_MS : Number(values.timeout);
  const stateDir = values['state-dir'] ?? defaultStateDir(env);
  const log = (line: string): void => hookLog(stateDir, `claude: ${line}`);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100) {
    log(`--timeout must be an integer of at least 100 ms, got "${values.timeout}"`);
    return 0;
  }
  const idleTimeoutMs = values['idle-timeout'] === undefined ? DEFAULT_HOOK_IDLE_MS : Number(values['idle-timeout']);
  if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 1) {
    log(`--idle-timeout must be a positive integer of milliseconds, got "${values['idle-timeout']}"`);
    return 0;
  }

  const deadline = startedAt + timeoutMs;
  const timer = setTimeout(() => {
    log(`gave up after ${timeoutMs} ms`);
    process.exit(0);
  }, timeoutMs);
  timer.unref();
  try {
    const input = await readStdin(MAX_INPUT_BYTES);
    await runClaudeHook(input, { stateDir, deadline: deadline - 500, command: cliCommand(), idleTimeoutMs, log });
  } catch (error) {
    log(`error: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
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
