import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, watch, type FSWatcher } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { findServerFor, registryDir, type ServerEntry } from '../registry/server-registry.js';
import { logDir } from './hook-log.js';

/** Default idle time after which a server started by the hook goes away (10 minutes). */
export const DEFAULT_HOOK_IDLE_MS = 10 * 60 * 1000;

/** Options of {@link ensureServer}. */
export interface EnsureServerOptions {
  /** The state directory the server registers in (passed to the server it starts). */
  stateDir: string;
  /** The workspace directory; a server recording it is looked up, or started over it. */
  cwd: string;
  /** Epoch milliseconds by which a started server must have registered. */
  deadline: number;
  /** How to run the command line: node and the `bin/changeset-server.js` script. */
  command: { node: string; script: string } | undefined;
  /** Receives what happened. */
  log: (line: string) => void;
  /** The started server stops after this long with no turn being recorded and no client connected. */
  idleTimeoutMs?: number;
}

/** How often the registry is looked at when nothing says it changed (a missed or unsupported file-system event). */
const POLL_MS = 100;
const STALE_LOCK_MS = 30_000;

/**
 * The running server recording `cwd`, starting one in the background when
 * none runs: `serve <cwd> --json --no-session` as a detached process whose
 * output goes to a log file under the state directory, waited for (until
 * `deadline`) through the registry. A lock keeps concurrent hooks from
 * starting two servers for the same directory.
 */
export async function ensureServer(given: EnsureServerOptions): Promise<ServerEntry> {
  // The server starts in `cwd`: a relative state directory would name another one there.
  const options = { ...given, stateDir: resolve(given.stateDir) };
  const found = await findServerFor(options.stateDir, options.cwd);
  if (found) return found;
  if (!options.command) throw new Error('cannot find the changeset-server command to start a server');
  const lockPath = await lockFile(options.stateDir, options.cwd);
  const locked = await acquire(lockPath);
  let exited: string | undefined;
  // Woken when the registry directory changes (the server registers by renaming its entry into it) or the child exits.
  let wake: (() => void) | undefined;
  const nudge = (): void => wake?.();
  let watcher: FSWatcher | undefined;
  try {
    // Another hook may have started one while this one looked.
    const again = locked ? await findServerFor(options.stateDir, options.cwd) : undefined;
    if (again) return again;
    watcher = await watchRegistry(options.stateDir, nudge);
    if (locked) {
      // Loaded only here: most hook events find the server running.
      const { spawn } = await import('node:child_process');
      const logPath = join(logDir(options.stateDir), `server-${Date.now()}-${process.pid}.log`);
      mkdirSync(logDir(options.stateDir), { recursive: true, mode: 0o700 });
      const out = openSync(logPath, 'a', 0o600);
      try {
        const child = spawn(
          options.command.node,
          [
            options.command.script,
            'serve',
            options.cwd,
            '--json',
            '--no-session',
            '--state-dir',
            options.stateDir,
            ...(options.idleTimeoutMs !== undefined ? ['--idle-timeout', String(options.idleTimeoutMs)] : []),
          ],
          { cwd: options.cwd, detached: true, stdio: ['ignore', out, out] },
        );
        child.once('error', (error) => {
          exited = `could not start: ${error.message}`;
          nudge();
        });
        child.once('exit', (code, signal) => {
          exited = `exited with ${signal ?? `code ${code}`} (log: ${logPath})`;
          nudge();
        });
        child.unref();
        options.log(`started a server for ${options.cwd} (pid ${child.pid}, log ${logPath})`);
      } finally {
        closeSync(out);
      }
    }
    for (;;) {
      const entry = await findServerFor(options.stateDir, options.cwd);
      if (entry) return entry;
      if (exited) throw new Error(`the server for ${options.cwd} ${exited}`);
      if (Date.now() >= options.deadline) throw new Error(`no server registered for ${options.cwd} in time`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve();
        }, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    }
  } finally {
    watcher?.close();
    if (locked) await rm(lockPath, { force: true });
  }
}

/** Watches the registry directory (made if missing); undefined where that cannot be done, and the registry is polled alone. */
async function watchRegistry(stateDir: string, onChange: () => void): Promise<FSWatcher | undefined> {
  try {
    await mkdir(registryDir(stateDir), { recursive: true, mode: 0o700 });
    const watcher = watch(registryDir(stateDir), onChange);
    watcher.on('error', () => undefined);
    return watcher;
  } catch {
    return undefined;
  }
}

async function lockFile(stateDir: string, cwd: string): Promise<string> {
  const dir = join(stateDir, 'hooks');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return join(dir, `start-${createHash('sha256').update(cwd).digest('hex').slice(0, 16)}.lock`);
}

/** Takes the lock; false when another process holds it (a stale lock is broken). */
async function acquire(path: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.close();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const info = await stat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs < STALE_LOCK_MS) return false;
      await rm(path, { force: true });
    }
  }
  return false;
}
