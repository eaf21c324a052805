import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { isProcessAlive, listServers } from '../../server/registry/index.js';
import { ownServer } from '../helpers/leftover-servers.js';

/** Runs the built binary (`npm test` builds first; run `npm run build` before running these files alone). */
export const BIN = 'bin/changeset-server.js';

/** What `serve --json` prints. */
export interface Ready {
  url: string;
  token: string | null;
  sessions: string[];
  viewer: string;
}

/** A `serve` child process that printed its ready line. */
export interface ServeProcess {
  child: ChildProcess;
  ready: Ready;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** Starts `serve ... --json` and waits for the ready line. Always pass a temporary `--state-dir`. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--json', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  // One left running after the test file fails it (file-isolation.ts).
  ownServer(child.pid);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (l) => {
      lines.close();
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before its ready line: ${stderr}`)));
  });
  return {
    child,
    ready: JSON.parse(line) as Ready,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const done = exitCode(child);
      child.kill(signal);
      return done;
    },
  };
}

/** Runs the binary to completion. */
export function run(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; nodeArgs?: string[] } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), `${process.cwd()}/${BIN}`, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    // 'close', not 'exit': a loaded machine can tell of the exit before the last output is read from the pipes.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Stops every server registered in the state directory (those commands started in the background) and waits until each is gone. */
export async function stopRegistered(stateDir: string): Promise<void> {
  for (const entry of await listServers(stateDir)) {
    try {
      process.kill(entry.pid, 'SIGTERM');
    } catch {
      continue;
    }
    const deadline = Date.now() + 20_000;
    while (isProcessAlive(entry.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
