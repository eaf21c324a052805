import { Console } from 'node:console';
import { Readable, Writable } from 'node:stream';
import { main } from '../../server/cli/main.js';

/**
 * Runs a `changeset-server` command in the test's own process: `main()` of
 * `server/cli/main.ts`, as the binary runs it, with the same answer as
 * `run()` of `test/cli/serve-process.ts` (`{ code, stdout, stderr }`) but
 * without starting Node and loading the command line afresh for each call.
 *
 * For the duration of the call, and put back after it:
 * - the working directory is `cwd` (when given);
 * - the environment is the test's with `env` laid over it (a variable given
 *   as `undefined` is removed, as `spawn` leaves it out);
 * - `process.stdout`, `process.stderr` and `console` write into the result,
 *   and `process.stdin` reads `input` then ends; none is a terminal, as with
 *   the binary's pipes;
 * - `process.exitCode` starts unset; the code is what `main()` returns, else
 *   the `process.exitCode` the command set, else 0; a rejection of `main()`
 *   is its message on stderr and code 1, as `bin/changeset-server.js` does;
 * - `process.exit` throws instead of ending the test's process (the test
 *   fails saying which command called it).
 *
 * Calls run one at a time, in the order they were made: each has the
 * process's working directory, environment and standard streams to itself.
 *
 * What it does not cover, so a test of these spawns the binary (`run()`):
 * - the binary itself: `bin/changeset-server.js`, `dist/`, the exit code the
 *   process ends with, what is loaded at start-up (`--import` module logs);
 * - commands that run until a signal or the end of stdin, or that may
 *   `process.exit`: `serve` and `mcp` are refused here; `hook` runs, but its
 *   give-up after `--timeout` exits the process and fails the test here;
 * - a terminal on stdin or stdout (`script`), and signals sent to the command;
 * - a fresh process's module state: modules are loaded once per test worker
 *   and shared with the other test files of the worker, so whatever a module
 *   reads from the environment when it is first loaded (for example
 *   `CHANGESET_SERVER_PUBLIC_LSTAT`) keeps its first value, and a command
 *   sees caches other code of the worker filled;
 * - timers, sockets and child processes a command leaves behind: a process
 *   would wait for them (or end them when it exits); here the call returns
 *   when `main()` settles, and what they write later is not in the result;
 * - output written by other code of the test's process during the call
 *   (a server running in the test's process logging to stderr) lands in the
 *   result: the commands here talk to `serve` processes, not in-process servers;
 * - `process.pid` is the test's: the RPC client id and log file names a
 *   command derives from it are the same for every call.
 */

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** What the command reads on stdin (nothing: stdin ends at once). */
  input?: string;
  /** Variables laid over the test's environment; `undefined` removes one. */
  env?: NodeJS.ProcessEnv;
  /** The working directory of the command (the test's when not given). */
  cwd?: string;
}

/** Commands that serve until a signal or the end of stdin: they need a process of their own. */
const SPAWN_ONLY: ReadonlySet<string> = new Set(['serve', 'mcp']);

let queue: Promise<unknown> = Promise.resolve();

/** Runs `changeset-server <args>` in this process (see the top of this file for what that does not cover). */
export function run(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const result = queue.then(() => runNow(args, options));
  queue = result.catch(() => undefined);
  return result;
}

/** A stream that keeps what is written to it, synchronously, as the bytes came. */
class Capture extends Writable {
  private readonly chunks: Buffer[] = [];
  isTTY = undefined;

  constructor() {
    super({
      write: (chunk: Buffer, _encoding, callback) => {
        this.chunks.push(chunk);
        callback();
      },
    });
  }

  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const cb = typeof encoding === 'function' ? encoding : callback;
    const enc = typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8';
    this.chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, enc) : Buffer.from(chunk as Uint8Array));
    if (typeof cb === 'function') process.nextTick(cb as () => void);
    return true;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function replaceGetter(name: 'stdin' | 'stdout' | 'stderr', value: unknown): () => void {
  const saved = Object.getOwnPropertyDescriptor(process, name)!;
  Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => value });
  return () => Object.defineProperty(process, name, saved);
}

async function runNow(args: string[], options: CliOptions): Promise<CliResult> {
  const command = args[0];
  if (command !== undefined && SPAWN_ONLY.has(command)) {
    throw new Error(`changeset-server ${command} runs until stopped: start it with startServe() or run() of test/cli/serve-process.ts`);
  }
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin = Readable.from(options.input ? [Buffer.from(options.input)] : []);
  Object.assign(stdin, { isTTY: undefined });

  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const savedExitCode = process.exitCode;
  const savedExit = process.exit;
  const savedConsole = globalThis.console;
  const restores: (() => void)[] = [];
  try {
    for (const [name, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (options.cwd !== undefined) process.chdir(options.cwd);
    process.exitCode = undefined;
    process.exit = ((code?: number | string | null) => {
      throw new Error(
        `changeset-server ${args.join(' ')} called process.exit(${code ?? ''}) in the test's process: run it with run() of test/cli/serve-process.ts`,
      );
    }) as typeof process.exit;
    restores.push(replaceGetter('stdout', stdout), replaceGetter('stderr', stderr), replaceGetter('stdin', stdin));
    globalThis.console = new Console({ stdout, stderr });

    let code: number;
    try {
      const returned = await main([...args]);
      code = typeof returned === 'number' ? returned : Number(process.exitCode ?? 0);
    } catch (error) {
      // What bin/changeset-server.js does with a rejection.
      stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      code = 1;
    }
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    globalThis.console = savedConsole;
    for (const restore of restores.reverse()) restore();
    process.exit = savedExit;
    process.exitCode = savedExitCode;
    if (process.cwd() !== savedCwd) process.chdir(savedCwd);
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    for (const [name, value] of Object.entries(savedEnv)) if (process.env[name] !== value) process.env[name] = value;
    stdin.destroy();
  }
}
