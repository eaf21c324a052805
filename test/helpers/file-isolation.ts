import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, vi } from 'vitest';
import { endLeftoverServers } from './leftover-servers.js';

/**
 * Runs before every server test file (the server project's `setupFiles`).
 * The server test files share their worker process one after another
 * (`isolate: false`), so what one file changes in the process must not reach
 * the next: after the file's own hooks, this puts back the environment, the
 * working directory and the file mode mask as they were when the file
 * started, ends fake timers and mocks, and fails the file when it had left
 * any of the first three changed, naming what, so that the file restores it
 * itself (an `afterEach`/`afterAll`).
 *
 * With `CHANGESET_TEST_CPU_LOG=<file>` set, it also appends a line per test
 * file to that file: the processor time (user + system, seconds) the file
 * used, counting the processes it started and waited for (servers, CLI
 * commands, git), and its path.
 */

const env = { ...process.env };
const cwd = process.cwd();
const umask = readUmask();
const signals = ['exit', 'SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection'] as const;
const listeners = new Map(signals.map((signal) => [signal, process.listeners(signal as 'exit')]));
const cpuLog = process.env['CHANGESET_TEST_CPU_LOG'];
const cpuAtStart = cpuLog ? processorTicks() : 0;

/** utime + stime + cutime + cstime of this process from /proc, in clock ticks (1/100 s). */
function processorTicks(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 to 17 of proc(5), counted from the state (field 3) here.
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
}

function readUmask(): number {
  // process.umask() without an argument is deprecated: set one and put it back.
  const mask = process.umask(0o022);
  process.umask(mask);
  return mask;
}

// biome-ignore lint/correctness/noEmptyPattern: vitest hands a hook its fixtures by destructuring first, the suite (here the file) second.
afterAll(async ({}, file) => {
  const path = 'filepath' in file ? file.filepath : file.name;
  const servers = await endLeftoverServers();
  if (cpuLog) appendFileSync(cpuLog, `${((processorTicks() - cpuAtStart) / 100).toFixed(2)} ${path}\n`);
  vi.useRealTimers();
  vi.restoreAllMocks();
  const left: string[] = [];
  for (const name of new Set([...Object.keys(env), ...Object.keys(process.env)])) {
    if (process.env[name] === env[name]) continue;
    left.push(`environment variable ${name}`);
    if (env[name] === undefined) delete process.env[name];
    else process.env[name] = env[name];
  }
  if (process.cwd() !== cwd) {
    left.push('working directory');
    process.chdir(cwd);
  }
  if (readUmask() !== umask) {
    left.push('file mode mask (umask)');
    process.umask(umask);
  }
  for (const signal of signals) {
    const before = listeners.get(signal) ?? [];
    for (const listener of process.listeners(signal as 'exit')) {
      if (before.includes(listener)) continue;
      left.push(`a process '${signal}' listener`);
      process.removeListener(signal, listener);
    }
  }
  if (servers.length > 0) {
    left.push(`${servers.length} server process${servers.length === 1 ? '' : 'es'} still running, now killed (${servers.join('; ')})`);
  }
  if (left.length > 0) {
    throw new Error(`${path} left the process changed for the next file: ${left.join(', ')}. Restore or stop it in an afterEach or afterAll.`);
  }
});
