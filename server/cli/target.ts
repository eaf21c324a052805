import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { SessionStatusInfo, StatusResult } from '../harness/status.js';
import { isInsideDir } from '../paths.js';
import { findServerFor } from '../registry/index.js';
import { TOKEN_ENV } from '../security/index.js';
import { defaultStateDir } from '../store/index.js';
import { RpcClient } from './rpc-client.js';

/** How a client command finds its server and session. */
export interface TargetOptions {
  /** `--url`: the server's WebSocket URL; found in the registry when omitted. */
  url?: string;
  /** `--token`: bearer token; `CHANGESET_SERVER_TOKEN`, else the registry's, when omitted. */
  token?: string;
  /** `--state-dir`: where the registry is. */
  stateDir?: string;
  /** `--session`: the session URI; the one recording the directory when omitted. */
  session?: string;
  /** The workspace directory the command is about (the current directory by default). */
  cwd?: string;
  /** Bound on each request, in milliseconds. */
  timeoutMs?: number;
}

/** A command's failure to print (exit code 1). */
export class CommandError extends Error {}

/** Connects to the server for the options: `--url`, or the registry entry for the directory. */
export async function connectTarget(options: TargetOptions, env: NodeJS.ProcessEnv = process.env): Promise<RpcClient> {
  const cwd = realDir(options.cwd);
  let url = options.url;
  let token = options.token ?? (env[TOKEN_ENV] || undefined);
  if (url === undefined) {
    const stateDir = options.stateDir ?? defaultStateDir(env);
    const entry = await findServerFor(stateDir, cwd);
    if (!entry) {
      throw new CommandError(`no running changeset-server records ${cwd} (registry: ${stateDir}); start one with "changeset-server serve" or pass --url`);
    }
    url = entry.url;
    token = options.token ?? entry.token;
  }
  return RpcClient.connect(url, {
    ...(token !== undefined ? { token } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
}

/**
 * The session a command acts on: `--session`, else the session whose
 * working directory most closely contains the directory, else the only
 * session.
 */
export async function pickSession(client: RpcClient, options: TargetOptions): Promise<SessionStatusInfo> {
  const status = await client.request<StatusResult>('harness/status', options.session !== undefined ? { channel: options.session } : {});
  if (options.session !== undefined) return status.sessions[0]!;
  const cwd = realDir(options.cwd);
  let best: { session: SessionStatusInfo; depth: number } | undefined;
  for (const session of status.sessions) {
    for (const dir of session.workingDirectories) {
      if (isInsideDir(dir, cwd) && (!best || dir.length > best.depth)) best = { session, depth: dir.length };
    }
  }
  if (best) return best.session;
  if (status.sessions.length === 1) return status.sessions[0]!;
  if (status.sessions.length === 0) throw new CommandError('the server has no sessions');
  throw new CommandError(`${status.sessions.length} sessions and none records ${cwd}; pick one with --session (see "changeset-server status")`);
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
