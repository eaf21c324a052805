import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive, type ServerEntry } from '../../server/registry/index.js';

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
