import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { removeServerEntry, removeServerEntrySync, writeServerEntry, type ServerEntry } from '../registry/index.js';
import { TOKEN_ENV } from '../security/index.js';
import { ChangesetService, ServiceSettingsError } from '../service.js';
import { defaultStateDir, workspaceLayout } from '../store/index.js';
import { defaultViewerDir } from '../client/package-root.js';
import { readEndpoint, writeEndpoint } from './endpoint-memory.js';
import { watchIdle } from './idle-exit.js';
import { progressLine } from './progress.js';
import { parseServeArgs, SERVE_USAGE, type ServeArgs } from './serve-args.js';
import { limitHeapGrowth } from './heap-growth.js';
import { UsageError } from '../client/errors.js';
import type { RecordingSession } from '../session/recording-session.js';
import { deferWatchersUntil } from '../watch/directory-watcher.js';

export { DEFAULT_AUTO_TURNS_MS, parseServeArgs, SERVE_USAGE, type ServeArgs } from './serve-args.js';

/** The facts `serve` prints once it is ready (`--json` prints exactly this object). */
export interface ReadyInfo {
  /** WebSocket URL. */
  url: string;
  /** Bearer token; null when the server runs without authentication. */
  token: string | null;
  /** URIs of the sessions created at start. */
  sessions: string[];
  /** Web viewer URL, token included. */
  viewer: string;
  /**
   * What is still being prepared, in plain words, when the server answers
   * before it (the first snapshot of a fresh state is read in the
   * background; a turn started meanwhile waits for it). Absent when nothing is.
   */
  preparing?: string;
}

/**
 * `changeset-server serve`: starts the server over the directories, prints
 * one ready line, registers itself for other commands to find, records
 * turns (from a harness, or automatically with `--auto-turns`), and on
 * SIGINT or SIGTERM ends the turns being recorded as cancelled, closes
 * every client and exits 0.
 */
export async function serve(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let args: ServeArgs;
  try {
    args = parseServeArgs(argv, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`changeset-server serve: ${err.message}\n\n${SERVE_USAGE}`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  limitHeapGrowth();
  if (args.directories.length === 0) args.directories.push(resolve('.'));
  for (const dir of args.directories) {
    const info = await stat(dir).catch(() => undefined);
    if (!info?.isDirectory()) {
      process.stderr.write(`changeset-server serve: not a directory: ${dir}\n`);
      return 2;
    }
  }

  const stateDir = args.stateDir ?? defaultStateDir(env);
  // The same workspace gets the same port and token across restarts, so open tabs reconnect and links keep working.
  const portGiven = argv.some((a) => a === '--port' || a.startsWith('--port='));
  const remembered = await readEndpoint(stateDir, args.directories);
  const envToken = env[TOKEN_ENV];
  const token = args.token ?? (args.noAuth ? undefined : envToken || remembered?.token);
  const progress = progressLine(process.stderr);
  let showProgress = true;
  // The working directory is read (the watcher set up, then the first snapshot) once the ready line is out, not while
  // the server gets there: that work would otherwise hold up every step of the start between its turns on the CPU.
  // Only where nothing is stored yet: a stored session may hold a turn a crash cut short, which is ended (a snapshot,
  // which waits for the watcher) as the session opens, before the ready line; held back, it would never come.
  let answered: () => void = () => undefined;
  if (!(await anythingStored(stateDir, args.directories))) deferWatchersUntil(new Promise<void>((resolveAnswered) => (answered = resolveAnswered)));
  // Everything the server runs with is built and connected by the service (security, viewer, mirror, automatic turns).
  const makeService = (port: number) =>
    new ChangesetService({
      host: args.host,
      port,
      stateDir,
      security: {
        host: args.host,
        noAuth: args.noAuth,
        allowedOrigins: args.allowedOrigins,
        ...(token !== undefined ? { token } : {}),
        ...(args.viewerDir !== undefined ? { staticDir: args.viewerDir } : withDefaultViewer()),
      },
      mirror: { url: args.mirror, env },
      ...(args.autoTurnsMs !== undefined ? { autoTurns: { quietMs: args.autoTurnsMs } } : {}),
      serveOutsideFiles: args.serveOutsideFiles,
      ...(args.notes ? { notes: true } : {}),
      sessionDefaults: {
        onProgress: (done, total) => showProgress && progress.update(done, total),
        ...(args.storeBudgetBytes !== undefined ? { storeBudgetBytes: args.storeBudgetBytes } : {}),
        ...(args.retainDays !== undefined ? { retainDays: args.retainDays } : {}),
      },
    });
  const port = portGiven ? args.port : (remembered?.port ?? args.port);
  let service: ChangesetService;
  try {
    service = makeService(port);
  } catch (err) {
    if (!(err instanceof ServiceSettingsError)) throw err;
    process.stderr.write(`changeset-server serve: ${err.message}\n`);
    return 2;
  }

  // Handlers go in before anything is printed, so a signal sent right after
  // the ready line is never handled by the default (kill) action; they stay
  // until serve returns, whichever way it does.
  const stopSignals = listenForStop(stopGraceMs(env));
  try {
    return await runUntilStopped(args, stateDir, progress, service, makeService, {
      portGiven,
      port,
      stopRequested: stopSignals.requested,
      answered,
      stopShowingProgress: () => (showProgress = false),
    });
  } finally {
    stopSignals.dispose();
  }
}

/** What {@link runUntilStopped} needs from the start of {@link serve}. */
interface StartState {
  portGiven: boolean;
  port: number;
  /** Settles at the first SIGINT or SIGTERM. */
  stopRequested: Promise<void>;
  /** Lets the watchers set themselves up: the ready line is out (or serve gives up). */
  answered: () => void;
  /** The first snapshot's progress is no longer shown. */
  stopShowingProgress: () => void;
}

/** Starts the service, prints the ready line, records until a stop is requested, then stops; resolves with the exit code. */
async function runUntilStopped(
  args: ServeArgs,
  stateDir: string,
  progress: ReturnType<typeof progressLine>,
  firstService: ChangesetService,
  makeService: (port: number) => ChangesetService,
  { portGiven, port, stopRequested, answered, stopShowingProgress: hideProgress }: StartState,
): Promise<number> {
  let service = firstService;
  let url: string;
  try {
    ({ url } = await service.start());
  } catch (err) {
    if (portGiven || port === 0) {
      process.stderr.write(`changeset-server serve: cannot listen on ${args.host}:${port}: ${(err as Error).message}\n`);
      return 1;
    }
    // The remembered port is taken by something else now: any free port will do.
    service = makeService(0);
    try {
      ({ url } = await service.start());
    } catch (again) {
      process.stderr.write(`changeset-server serve: cannot listen on ${args.host}: ${(again as Error).message}\n`);
      return 1;
    }
  }
  const boundPort = Number(new URL(url).port);
  const serverToken = service.security?.token;
  await writeEndpoint(stateDir, args.directories, { port: boundPort, ...(serverToken !== undefined ? { token: serverToken } : {}) }).catch((err: unknown) =>
    process.stderr.write(`changeset-server: cannot remember the endpoint in ${stateDir}: ${(err as Error).message}\n`),
  );
  const sessions: string[] = [];
  let session: RecordingSession | undefined;
  if (!args.noSession) {
    try {
      // The server answers at once; a new session's first snapshot is read in the background.
      session = await service.openWorkspace(args.directories, { startInBackground: true });
      sessions.push(session.uri);
    } catch (err) {
      progress.done();
      process.stderr.write(`changeset-server serve: cannot record ${args.directories.join(', ')}: ${(err as Error).message}\n`);
      answered();
      await service.stop({ mirrorGraceMs: 0 });
      return 1;
    }
  }
  try {
    await service.openHistory(args.directories);
  } catch (err) {
    process.stderr.write(`changeset-server: past sessions of ${args.directories.join(', ')} could not be opened: ${(err as Error).message}\n`);
  }
  // The first snapshot's progress stays on stderr until it is read; a resumed session has nothing to read.
  const preparing = session?.preparing !== undefined ? `reading ${args.directories.join(', ')} in the background` : undefined;
  const startFailed: Promise<Error> = session
    ? session.started.then(
        () => new Promise<never>(() => undefined),
        (error: unknown) => error as Error,
      )
    : new Promise<never>(() => undefined);
  const stopShowingProgress = (): void => {
    progress.done();
    hideProgress();
  };
  if (preparing) void session!.started.then(stopShowingProgress, () => undefined);
  else stopShowingProgress();

  const ready: ReadyInfo = {
    url,
    token: serverToken ?? null,
    sessions,
    viewer: viewerUrl(url, serverToken),
    ...(preparing !== undefined ? { preparing } : {}),
  };
  const entry: ServerEntry = {
    pid: process.pid,
    url,
    viewer: ready.viewer,
    directories: args.directories,
    startedAt: new Date().toISOString(),
    ...(serverToken !== undefined ? { token: serverToken } : {}),
  };
  const onExit = (): void => removeServerEntrySync(stateDir, process.pid);
  try {
    await writeServerEntry(stateDir, entry);
    process.on('exit', onExit);
  } catch (err) {
    process.stderr.write(`changeset-server serve: cannot register in ${stateDir}: ${(err as Error).message}\n`);
  }

  process.stdout.write(args.json ? `${JSON.stringify(ready)}\n` : banner(ready, args));
  answered();

  const idleWatch = args.idleTimeoutMs !== undefined ? watchIdle(service, args.idleTimeoutMs, () => process.kill(process.pid, 'SIGTERM')) : undefined;
  const failed = await Promise.race([stopRequested.then(() => undefined), startFailed]);
  idleWatch?.dispose();
  if (failed) {
    // The working directory could not be read: nothing can be recorded, as when this happened before the ready line.
    stopShowingProgress();
    process.stderr.write(`changeset-server serve: cannot record ${args.directories.join(', ')}: ${failed.message}\n`);
    await service.stop({ mirrorGraceMs: 0 });
    await removeServerEntry(stateDir, process.pid).catch(() => undefined);
    process.off('exit', onExit);
    return 1;
  }
  // Automatic turns, recording, clients, the mirror: the service's stop order.
  await service.stop();
  await removeServerEntry(stateDir, process.pid).catch(() => undefined);
  process.off('exit', onExit);
  return 0;
}

/** Whether the state directory holds a store for any of the directories (past sessions, maybe one to resume). */
async function anythingStored(stateDir: string, directories: readonly string[]): Promise<boolean> {
  for (const dir of directories) {
    const real = await realpath(dir).catch(() => dir);
    if (await stat(workspaceLayout(stateDir, real).root).catch(() => undefined)) return true;
  }
  return false;
}

/** How long `serve` may take to stop after SIGINT or SIGTERM before it exits without finishing (ms). */
export const STOP_GRACE_MS = 10_000;

/** {@link STOP_GRACE_MS}, or `CHANGESET_SERVER_STOP_GRACE_MS` when it is a positive whole number. */
function stopGraceMs(env: NodeJS.ProcessEnv): number {
  const value = Number(env['CHANGESET_SERVER_STOP_GRACE_MS']);
  return Number.isSafeInteger(value) && value > 0 ? value : STOP_GRACE_MS;
}

/** The SIGINT and SIGTERM handlers of {@link serve}. */
interface StopSignals {
  /** Settles at the first SIGINT or SIGTERM (the idle watch sends itself one). */
  readonly requested: Promise<void>;
  /** Removes the handlers; an exit already scheduled by a signal stays scheduled. */
  dispose(): void;
}

/**
 * The first SIGINT or SIGTERM asks the server to stop (turns end as
 * cancelled, clients are closed, the mirror pushes what is left) and gives
 * that `graceMs`: a process still there then exits with code 1, as does one
 * that receives a second signal meanwhile. Either way what the stores hold
 * stays as consistent as after a crash, which they are made to survive
 * (each write lands whole or not at all; a session resumes from what it
 * stored). The timer does not keep the process alive: a stop that finishes
 * exits at once.
 */
function listenForStop(graceMs: number): StopSignals {
  let resolveRequested: () => void = () => undefined;
  const requested = new Promise<void>((resolve) => (resolveRequested = resolve));
  let first: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (first !== undefined) {
      process.stderr.write(`changeset-server serve: ${signal} while stopping: exiting without finishing the stop\n`);
      process.exit(1);
    }
    first = signal;
    resolveRequested();
    setTimeout(() => {
      process.stderr.write(`changeset-server serve: not stopped ${graceMs} ms after ${signal}: exiting without finishing the stop\n`);
      process.exit(1);
    }, graceMs).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    requested,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

function withDefaultViewer(): { staticDir?: string } {
  const dir = defaultViewerDir();
  return dir ? { staticDir: dir } : {};
}

/** `http://HOST:PORT/?token=…` for a server at `ws://HOST:PORT/`. */
export function viewerUrl(wsUrl: string, token: string | undefined): string {
  const http = wsUrl.replace(/^ws:/, 'http:');
  return token === undefined ? http : `${http}?token=${encodeURIComponent(token)}`;
}

function banner(ready: ReadyInfo, args: ServeArgs): string {
  const dirs = args.directories.length === 1 ? '1 directory' : `${args.directories.length} directories`;
  const lines = [
    `changeset-server listening on ${ready.url} (${dirs}, ${ready.sessions.length} session${ready.sessions.length === 1 ? '' : 's'})`,
    `  viewer:     ${ready.viewer}`,
    ready.token === null ? '  token:      none (--no-auth)' : `  token:      ${ready.token}`,
    `  recording:  ${args.directories.join(', ')}`,
    ...(args.notes ? ['  notes:      who wrote each line goes on every new commit as a git note (refs/notes/ai)'] : []),
    ...(ready.preparing !== undefined ? [`  preparing:  ${ready.preparing}; a turn started meanwhile waits for it`] : []),
    args.autoTurnsMs !== undefined
      ? `  turns:      automatic, each ending after ${args.autoTurnsMs} ms without changes (a harness takes over)`
      : '  turns:      from a harness (harness/turnStarted, `changeset-server turn start`, or the Claude Code hook)',
    '',
  ];
  return `${lines.join('\n')}\n`;
}
