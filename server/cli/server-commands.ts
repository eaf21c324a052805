import { spawn } from 'node:child_process';
import { ROOT_CHANNEL } from '../../protocol/common/channels.js';
import type { ListSessionsResult } from '../../protocol/root/commands.js';
import { SessionStatus, type SessionSummary } from '../../protocol/session/state.js';
import { findServerFor, isProcessAlive, removeServerEntry } from '../registry/server-registry.js';
import { defaultStateDir } from '../store/state-dir.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { Output } from '../client/output.js';

import { connect, realDir } from '../client/target.js';
import { CommandError, UsageError } from '../client/errors.js';

export const SESSIONS_USAGE = [
  'Usage: changeset-server sessions [options]',
  '',
  'Lists the sessions recording now and the past ones kept for review.',
  '',
  TARGET_USAGE,
  '',
].join('\n');
export const FORGET_USAGE = [
  'Usage: changeset-server forget SESSION [options]',
  '',
  'Removes a session and its history for good (ending a session keeps it for',
  'review until retention reclaims it). SESSION is its URI or id, as "sessions" shows.',
  '',
  TARGET_USAGE,
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

/** `changeset-server sessions`. */
export async function sessionsCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, []);
  if (values.help) return help(SESSIONS_USAGE);
  const { client } = await connect({ ...targetOf(values), startForHistory: true });
  try {
    const items: SessionSummary[] = [];
    let cursor: string | undefined;
    do {
      const page: ListSessionsResult = await client.request('listSessions', { channel: ROOT_CHANNEL, ...(cursor ? { cursor } : {}) });
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    const past = (s: SessionSummary) => (s.status & SessionStatus.IsArchived) !== 0;
    const lines: string[] = [];
    for (const [heading, group] of [
      ['Recording', items.filter((s) => !past(s))],
      ['Past sessions', items.filter(past)],
    ] as const) {
      if (group.length === 0) continue;
      lines.push(`${heading}:`);
      for (const s of group) {
        const meta = (s._meta ?? {}) as { turnCount?: number };
        const c = s.changes;
        const totals = c ? `, ${c.files ?? 0} files +${c.additions ?? 0} -${c.deletions ?? 0}` : '';
        lines.push(`  ${s.title}`, `    ${s.resource}  started ${s.createdAt}, ${meta.turnCount ?? 0} turns${totals}`);
      }
    }
    new Output(values.json === true).result(lines.length ? lines.join('\n') : 'no sessions', { sessions: items });
    return 0;
  } finally {
    await client.close();
  }
}

/** `changeset-server forget SESSION`. */
export async function forgetCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseClientArgs(argv, [], { positionals: 1 });
  if (values.help) return help(FORGET_USAGE);
  const given = positionals[0];
  if (given === undefined) throw new UsageError('forget needs the session (its URI or id; see "changeset-server sessions")');
  const channel = given.startsWith('ahp-session:') ? given : `ahp-session:/${given}`;
  const { client } = await connect({ ...targetOf(values), startForHistory: true });
  try {
    await client.request('forgetSession', { channel });
    new Output(values.json === true).result(`Forgot ${channel}: its history is removed from the store.`, { forgotten: channel });
    return 0;
  } finally {
    await client.close();
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
  const { client, viewer } = await connect({ ...targetOf(values), startForHistory: true });
  await client.close();
  if (!viewer) throw new CommandError('the server did not say where its viewer is');
  const opened = values.json ? false : openInBrowser(viewer);
  new Output(values.json === true).result(opened ? `${viewer}\n(opened in your browser)` : viewer, { viewer, opened });
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
