import { spawn } from 'node:child_process';
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import type { ListSessionsResult } from '../../protocol/root/commands.js';
import type { SessionSummary } from '../../protocol/session/state.js';
import { AhpErrorCodes } from '../../protocol/common/errors.js';
import { findServerFor, isProcessAlive, removeServerEntry } from '../registry/server-registry.js';
import { defaultStateDir } from '../store/state-dir.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { Output } from '../client/output.js';

import { connect, realDir, recordedRoot } from '../client/target.js';
import { RemoteError } from '../client/remote-error.js';
import { formatListing, listingOf, localTime, plural, type SessionListing } from './session-listing.js';
import { CommandError, UsageError } from '../client/errors.js';

export const SESSIONS_USAGE = [
  'Usage: changeset-server sessions [options]',
  '',
  'Lists the sessions recording now and the past ones kept for review. With no',
  'server running it reads them from the store, and starts none.',
  '',
  TARGET_USAGE,
  '',
].join('\n');
export const FORGET_USAGE = [
  'Usage: changeset-server forget SESSION [--yes] [--dry-run] [options]',
  '',
  'Removes a session and its history for good (ending a session keeps it for',
  'review until retention reclaims it). SESSION is its id, as "sessions" lists it.',
  'Asks first; without a terminal to ask on, it needs --yes.',
  '',
  '  --yes                remove it without asking',
  '  --dry-run            say what would be removed (the session, its turns); remove nothing',
  "  --url URL            the server's WebSocket URL (default: the running server recording this directory)",
  "  --token TOKEN        bearer token (default: $CHANGESET_SERVER_TOKEN, else the registry's)",
  '  --state-dir DIR      where running servers register (default: the state directory)',
  '  --json               print everything, errors included, as JSON on stdout',
  '',
].join('\n');
export const STOP_USAGE = [
  'Usage: changeset-server stop [--state-dir DIR] [--json]',
  '',
  'Stops the server recording this folder. Sessions stay resumable.',
  '',
].join('\n');
export const OPEN_USAGE = [
  'Usage: changeset-server open [options]',
  '',
  'Prints the viewer link for this folder and, on a desktop, opens it. Starts a',
  'server in the background when none runs and something was recorded here.',
  '',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server sessions`: from the running server, else read from the folder's store without starting one. */
export async function sessionsCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseClientArgs(argv, []);
  if (values.help) return help(SESSIONS_USAGE);
  const out = new Output(values.json === true);
  const report: Record<string, unknown> = {};
  let items: SessionListing[];
  const stateDir = values['state-dir'] ?? defaultStateDir(env);
  const cwd = realDir(undefined);
  if (values.url === undefined && !(await findServerFor(stateDir, cwd))) {
    const root = recordedRoot(stateDir, cwd);
    // Loaded only here: with a server running, the store is its business.
    items = root ? await (await import('./stored-sessions.js')).readStoredSessions(stateDir, root) : [];
    out.note(
      root
        ? `No server is running for ${root}; these are read from its store ("changeset-server open" starts one to review them).`
        : `Nothing was recorded in ${cwd}, and no server records it.`,
      report,
    );
  } else {
    const { client } = await connect(targetOf(values));
    try {
      const summaries: SessionSummary[] = [];
      let cursor: string | undefined;
      do {
        const page: ListSessionsResult = await client.request('listSessions', { channel: ROOT_CHANNEL, ...(cursor ? { cursor } : {}) });
        summaries.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      items = summaries.map(listingOf);
    } finally {
      await client.close();
    }
  }
  out.result(formatListing(items), { ...report, sessions: items });
  return 0;
}

/** `changeset-server forget SESSION`: says what goes, asks (or takes --yes), then removes it. */
export async function forgetCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseClientArgs(argv, ['yes', 'dry-run'], { positionals: 1, without: ['session'] });
  if (values.help) return help(FORGET_USAGE);
  const given = positionals[0];
  if (given === undefined) throw new UsageError('forget needs the session (its id, as "changeset-server sessions" shows it)');
  const id = given.replace(/^ahp-session:\/+/, '');
  const channel = `ahp-session:/${id}`;
  const out = new Output(values.json === true);
  const report: Record<string, unknown> = {};
  const { client, started } = await connect({ ...targetOf(values), startForHistory: true });
  try {
    out.note(started, report);
    const status = await client.request('harness/status', { turns: 0 });
    const session = status.sessions.find((s) => s.channel === channel);
    if (!session) throw new RemoteError('forgetSession', AhpErrorCodes.SessionNotFound, `there is no session "${id}" here (see "changeset-server sessions")`);
    const what = `"${session.title}" (${session.endedAt ? 'ended' : 'still recording'}, started ${localTime(session.createdAt)}) and its ${plural(session.turnCount, 'turn')}`;
    const listed = { id, title: session.title, turns: session.turnCount, recording: session.endedAt === undefined };
    if (values['dry-run']) {
      const message = `Dry run, nothing removed: forget would remove 1 session, ${what}.`;
      out.result(message, { ...report, dryRun: true, session: listed, message });
      return 0;
    }
    if (values.yes !== true) {
      if (!process.stdin.isTTY) {
        throw new UsageError(`forget removes ${what} for good: add --yes to confirm (or --dry-run to see what would go)`);
      }
      if (!(await confirm(`Remove ${what} for good? [y/N] `))) {
        const message = 'Nothing removed.';
        out.result(message, { ...report, forgotten: null, message });
        return 1;
      }
    }
    await client.request('forgetSession', { channel });
    const message = `Forgot ${what}: its history is removed from the store.`;
    out.result(message, { ...report, forgotten: listed, message });
    return 0;
  } finally {
    await client.close();
  }
}

/** Asks a yes-or-no question on the terminal; only "y" or "yes" is a yes. */
async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once('close', () => resolve(''));
      rl.question(question, resolve);
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

/** `changeset-server stop`. */
export async function stopCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseClientArgs(argv, []);
  if (values.help) return help(STOP_USAGE);
  const stateDir = values['state-dir'] ?? defaultStateDir(env);
  const cwd = realDir(undefined);
  const entry = await findServerFor(stateDir, cwd);
  const out = new Output(values.json === true);
  if (!entry) {
    out.result(`No server records ${cwd}.`, { stopped: null });
    return 0;
  }
  process.kill(entry.pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (isProcessAlive(entry.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isProcessAlive(entry.pid)) throw new CommandError(`the server (pid ${entry.pid}) did not stop within 15 s`);
  await removeServerEntry(stateDir, entry.pid).catch(() => undefined);
  out.result(`Stopped the server for ${entry.directories.join(', ')} (pid ${entry.pid}). Its sessions resume when it starts again.`, {
    stopped: entry.pid,
    directories: entry.directories,
  });
  return 0;
}

/** `changeset-server open`. */
export async function openCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, []);
  if (values.help) return help(OPEN_USAGE);
  const { client, viewer, started } = await connect({ ...targetOf(values), startForHistory: true });
  await client.close();
  if (!viewer) throw new CommandError('the server did not say where its viewer is');
  const opened = values.json ? false : openInBrowser(viewer);
  const out = new Output(values.json === true);
  const report: Record<string, unknown> = { viewer, opened };
  out.note(started, report);
  out.result(opened ? `${viewer}\n(opened in your browser)` : viewer, report);
  return 0;
}

/** Opens a URL with the desktop's handler, when there is a desktop. */
function openInBrowser(url: string): boolean {
  const command =
    process.platform === 'darwin'
      ? 'open'
      : process.platform === 'win32'
        ? 'explorer'
        : process.env['DISPLAY'] || process.env['WAYLAND_DISPLAY']
          ? 'xdg-open'
          : undefined;
  if (!command) return false;
  try {
    spawn(command, [url], { detached: true, stdio: 'ignore' })
      .on('error', () => undefined)
      .unref();
    return true;
  } catch {
    return false;
  }
}

function help(text: string): number {
  process.stdout.write(text);
  return 0;
}
