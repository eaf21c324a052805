import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { SessionStatusInfo } from '../../protocol/index.js';
import { isInsideDir } from '../paths.js';
import { findServerFor, type ServerEntry } from '../registry/server-registry.js';
import { TOKEN_ENV } from '../security/token.js';
import { defaultStateDir, workspaceLayout } from '../store/state-dir.js';
import { RpcClient } from './rpc-client.js';
import { CommandError } from './errors.js';
import { CLI_HINTS, type Hints } from './hints.js';
import type { Output } from './output.js';

/** How a client command finds its server and session. */
export interface TargetOptions {
  /** `--url`: the server's WebSocket URL; found in the registry when omitted. */
  url?: string;
  /** `--token`: bearer token; `CHANGESET_SERVER_TOKEN`, else the registry's, when omitted. */
  token?: string;
  /** `--state-dir`: where the registry is. */
  stateDir?: string;
  /** `--session`: the session URI (or id); the one recording the directory when omitted. */
  session?: string;
  /** The workspace directory the command is about (the current directory by default). */
  cwd?: string;
  /** Bound on each request, in milliseconds. */
  timeoutMs?: number;
  /**
   * When no server runs but this directory has recorded history, start one
   * in the background (it stops again when idle) so past sessions can be
   * reviewed and reverted.
   */
  startForHistory?: boolean;
  /** When no server runs for the directory, start one over it in the background (as the hook does; it stops when idle). */
  startServer?: boolean;
  /** Where errors send the reader next (the command line's by default). */
  hints?: Hints;
}

/** A connection to the server, with what the registry says about it. */
export interface Connected {
  client: RpcClient;
  /** The viewer URL, token included, when known. */
  viewer?: string;
  /** The registry entry, when the server was found there. */
  entry?: ServerEntry;
  /** Set when no server ran and one was started in the background for this command: what to tell the person. */
  started?: string;
}

/** Connects to the server for the options (`--url`, or the registry entry for the directory), also telling the viewer URL and registry entry. */
export async function connect(options: TargetOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connected> {
  const cwd = realDir(options.cwd);
  let url = options.url;
  let token = options.token ?? (env[TOKEN_ENV] || undefined);
  let entry: ServerEntry | undefined;
  let started: string | undefined;
  if (url === undefined) {
    const stateDir = resolve(options.stateDir ?? defaultStateDir(env));
    entry = await findServerFor(stateDir, cwd);
    if (!entry && (options.startForHistory || options.startServer)) {
      const recorded = recordedRoot(stateDir, cwd) ?? (options.startServer ? cwd : undefined);
      // Loaded only here: a command usually finds its server running.
      const [{ DEFAULT_HOOK_IDLE_MS, ensureServer }, { cliCommand }] = await Promise.all([import('./ensure-server.js'), import('./package-root.js')]);
      const command = cliCommand();
      if (recorded && command) {
        entry = await ensureServer({
          stateDir,
          cwd: recorded,
          deadline: Date.now() + 20_000,
          command,
          idleTimeoutMs: DEFAULT_HOOK_IDLE_MS,
          log: (line) => {
            if (line.startsWith('started '))
              started = `Started a server for ${recorded} in the background; it stops after 10 minutes with nothing to do ("changeset-server stop" stops it now).`;
          },
        });
      }
    }
    if (!entry) {
      throw new CommandError(`no running changeset-server records ${cwd}; start one with "changeset-server serve" in the project folder`);
    }
    url = entry.url;
    token = options.token ?? entry.token;
  }
  const client = await RpcClient.connect(url, {
    ...(token !== undefined ? { token } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const viewer = entry?.viewer ?? viewerUrlOf(url, token);
  return { client, viewer, ...(entry ? { entry } : {}), ...(started ? { started } : {}) };
}

/** The session a command acts on, and the other sessions that record the same folder. */
export interface Picked {
  session: SessionStatusInfo;
  others: SessionStatusInfo[];
}

/**
 * The session a command acts on: `--session`, else among the sessions whose
 * working directory contains the directory, the one recording a turn, else
 * the newest that has not ended, else the newest; else the only session.
 * Every turn is listed (`turns` numbers need them all).
 */
export async function pickSession(client: RpcClient, options: TargetOptions): Promise<Picked> {
  const status = await client.request('harness/status', { turns: 1000 });
  if (options.session !== undefined) {
    const wanted = options.session;
    const session = status.sessions.find((s) => s.channel === wanted || s.channel === `ahp-session:/${wanted}`);
    if (!session) throw new CommandError(`the server has no session "${wanted}" (see ${(options.hints ?? CLI_HINTS).sessions})`);
    return { session, others: [] };
  }
  const cwd = realDir(options.cwd);
  let depth = -1;
  let candidates: SessionStatusInfo[] = [];
  for (const session of status.sessions) {
    const d = Math.max(-1, ...session.workingDirectories.filter((dir) => isInsideDir(dir, cwd)).map((dir) => dir.length));
    if (d < 0) continue;
    if (d > depth) {
      depth = d;
      candidates = [session];
    } else if (d === depth) candidates.push(session);
  }
  if (candidates.length === 0) {
    if (status.sessions.length === 1) return { session: status.sessions[0]!, others: [] };
    if (status.sessions.length === 0) throw new CommandError('the server has no sessions yet');
    const hints = options.hints ?? CLI_HINTS;
    throw new CommandError(`${status.sessions.length} sessions and none records ${cwd}; ${hints.pickSession} (see ${hints.sessions})`);
  }
  const rank = (s: SessionStatusInfo) => (s.activeTurn ? 2 : s.endedAt === undefined ? 1 : 0);
  candidates.sort((a, b) => rank(b) - rank(a) || b.createdAt.localeCompare(a.createdAt));
  return { session: candidates[0]!, others: candidates.slice(1) };
}

/** A command's connection to the session it acts on. */
export interface SessionConnection {
  client: RpcClient;
  picked: Picked;
  /** What a `--json` answer carries besides the result: the notes said so far. */
  report: Record<string, unknown>;
}

/**
 * Connects for a command that acts on one session (starting a server when
 * none records the folder), picks the session, and says both — that a
 * server was started, and which session was used when several record the
 * folder — through `out`. `first` puts keys at the head of the report.
 */
export async function connectToSession(
  options: TargetOptions,
  out: Output,
  first: (picked: Picked) => Record<string, unknown> = () => ({}),
): Promise<SessionConnection> {
  const { client, started } = await connect(options);
  try {
    const picked = await pickSession(client, options);
    const report = first(picked);
    out.note(started, report);
    out.note(sessionNote(picked), report);
    return { client, picked, report };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** What a command says when several sessions record the folder: which it used, and how to pick another. */
export function sessionNote(picked: Picked): string | undefined {
  if (picked.others.length === 0) return undefined;
  const id = (channel: string) => channel.replace(/^ahp-session:\/+/, '');
  const lines = [`Using session "${picked.session.title}" (--session ${id(picked.session.channel)}). Also recording this folder:`];
  for (const o of picked.others) lines.push(`  "${o.title}"${o.endedAt ? ' (ended)' : ''}: add --session ${id(o.channel)}`);
  return lines.join('\n');
}

/** The real path of a directory (the current one by default), as sessions and the registry record it. */
export function realDir(dir: string | undefined): string {
  const abs = resolve(dir ?? process.cwd());
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/** The directory, or the closest parent, that has a store in the state directory (something was recorded there). */
export function recordedRoot(stateDir: string, dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(workspaceLayout(stateDir, d).root)) return d;
    if (dirname(d) === d) return undefined;
  }
}

function viewerUrlOf(wsUrl: string, token: string | undefined): string {
  const http = wsUrl.replace(/^ws:/, 'http:').replace(/^wss:/, 'https:');
  return token === undefined ? http : `${http}${http.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}
