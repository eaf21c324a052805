import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive, type ServerEntry } from '../../server/registry/index.js';
import { type CliResult, run as inProcess } from '../helpers/cli-in-process.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');

/** A recorded hook event (`fixtures/<name>`) with its session id and working directory filled in. */
export function fixture(name: string, sessionId: string, cwd: string): string {
  const text = readFileSync(join(FIXTURES, name), 'utf8');
  return text.replaceAll('${SESSION}', sessionId).replaceAll('${CWD}', JSON.stringify(cwd).slice(1, -1));
}

/** Polls `probe` (every 25 ms: a probe is one directory read or one signal 0) until it gives a value. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Stops a server a hook started in the background, and waits until it is gone. */
export async function stopServer(entry: ServerEntry): Promise<void> {
  if (isProcessAlive(entry.pid)) process.kill(entry.pid, 'SIGTERM');
  await waitFor(async () => (isProcessAlive(entry.pid) ? undefined : true), `server ${entry.pid} to exit`);
}

/**
 * Runs `changeset-server hook <args>` with the event `input` in the test's process: `main()` as the binary runs it, the
 * same answer, without starting Node again (test/helpers/cli-in-process.ts). For the events whose run through the binary
 * is not what is checked: each test keeps the binary for what the agent sees.
 *
 * Its give-up ends the process, so it is given 60 s (a `--timeout` in `args` is replaced): a test never waits on it. The
 * working directory is not changed: the hook reads the workspace from the event, and the tests beside it that spawn the
 * binary do so from the process's own.
 */
export function hookInProcess(args: readonly string[], input: string): Promise<CliResult> {
  const given = args.indexOf('--timeout');
  const rest = given === -1 ? [...args] : [...args.slice(0, given), ...args.slice(given + 2)];
  return inProcess([...rest, '--timeout', '60000'], { input });
}
