import type { RetentionStatus, SnapshotTrackingStatus, StatusResult, TurnStatus } from '../../protocol/index.js';
import type { AlsoChangedBy } from '../../protocol/extensions/timeline.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { formatMirrorStatus, requestMirrorStatus } from '../mirror/mirror-status-text.js';
import { Output } from '../client/output.js';

import { connect, realDir, recordedRoot } from '../client/target.js';
import { findServerFor } from '../registry/server-registry.js';
import { defaultStateDir } from '../store/state-dir.js';
import { UsageError } from '../client/errors.js';

export const STATUS_USAGE = [
  'Usage: changeset-server status [--turns N] [options]',
  '',
  'Shows the viewer link, the sessions of the running server, the turn being',
  'recorded and the last turns, numbered as --turn takes them. With no server',
  'running it shows the stored record of this folder, and starts none.',
  '',
  '  --turns N            recent turns to list per session (default 5)',
  TARGET_USAGE,
  '',
].join('\n');

/** `changeset-server status`. */
export async function statusCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseClientArgs(argv, ['turns']);
  if (values.help) {
    process.stdout.write(STATUS_USAGE);
    return 0;
  }
  const turns = values.turns === undefined ? 5 : Number(values.turns);
  if (!Number.isInteger(turns) || turns < 0 || turns > 1000) throw new UsageError(`--turns must be an integer from 0 to 1000, got "${values.turns}"`);
  const target = targetOf(values);
  if (values.url === undefined) {
    const stateDir = values['state-dir'] ?? defaultStateDir(process.env);
    const cwd = realDir(undefined);
    const root = recordedRoot(stateDir, cwd);
    // Nothing recorded here: connecting fails with how to start a server.
    if (root && !(await findServerFor(stateDir, cwd))) return storedStatus(stateDir, root, turns, target.session, values.json === true);
  }
  const { client, viewer, started } = await connect(target);
  try {
    const out = new Output(values.json === true);
    const report: Record<string, unknown> = {};
    out.note(started, report);
    const wanted = target.session === undefined ? undefined : target.session.startsWith('ahp-session:') ? target.session : `ahp-session:/${target.session}`;
    const status = await client.request('harness/status', { turns, ...(wanted !== undefined ? { channel: wanted } : {}) });
    const mirror = await requestMirrorStatus(client);
    out.result(`${formatStatus(status, viewer)}${mirror ? formatMirrorStatus(mirror) : ''}`, {
      ...report,
      ...status,
      ...(viewer ? { viewer } : {}),
      ...(mirror ? { mirror } : {}),
    });
    return 0;
  } finally {
    await client.close();
  }
}

/** `status` with no server: the stored record of the folder, read without starting a server. */
async function storedStatus(stateDir: string, root: string, turns: number, session: string | undefined, json: boolean): Promise<number> {
  const out = new Output(json);
  const report: Record<string, unknown> = {};
  // Loaded only here: with a server running, the store is its business.
  const { readStoredStatus, formatStoredStatus } = await import('./stored-status.js');
  let sessions = await readStoredStatus(stateDir, root, turns);
  if (session !== undefined) {
    const id = session.replace(/^ahp-session:\/+/, '');
    sessions = sessions.filter((s) => s.id === id);
    if (sessions.length === 0) throw new UsageError(`no session "${id}" was recorded in ${root} ("changeset-server sessions" lists them)`);
  }
  out.note(`No server is running for ${root}; this is its stored record ("changeset-server serve" starts one).`, report);
  out.result(formatStoredStatus(sessions), { ...report, stored: true, sessions });
  return 0;
}

/** The human-readable status listing. */
export function formatStatus(status: StatusResult, viewer?: string): string {
  const lines: string[] = [];
  if (viewer) lines.push(`viewer: ${viewer}`, '');
  if (status.sessions.length === 0) lines.push('no sessions');
  for (const s of status.sessions) {
    lines.push(`${s.title}${s.endedAt ? '  (ended: kept for review)' : ''}`);
    lines.push(`  session id:  ${s.channel.replace(/^ahp-session:\/+/, '')}`);
    lines.push(`  directories: ${s.workingDirectories.join(', ')}`);
    for (const store of s.stores ?? []) {
      lines.push(`  store:       ${formatBytes(store.bytes)} of ${formatBytes(store.budgetBytes)} (${store.dir})`);
      if (store.lastRetention) lines.push(`  retention:   ${formatRetention(store.lastRetention)}`);
    }
    for (const t of s.snapshots ?? []) lines.push(`  snapshots:   ${formatTracking(t)} (${t.dir})`);
    if (s.preparing) {
      const { filesRead, filesExpected } = s.preparing;
      const of = filesExpected !== undefined && filesExpected > filesRead ? ` of ${filesExpected.toLocaleString('en-US')}` : '';
      lines.push(`  preparing:   reading the working directory, ${filesRead.toLocaleString('en-US')}${of} files so far; turns start once it is read`);
    }
    if (!s.endedAt)
      lines.push(
        s.activeTurn
          ? `  recording:   turn ${s.activeTurn.index}${quote(s.activeTurn.message)} since ${s.activeTurn.startedAt}`
          : '  recording:   no active turn',
      );
    const ended = s.turns.filter((t) => t.state !== undefined);
    lines.push(`  turns:       ${s.turnCount}${ended.length > 0 ? ' (latest last)' : ''}`);
    for (const t of ended) {
      lines.push(`    ${formatTurn(t)}`);
      for (const a of t.alsoChangedBy ?? []) lines.push(`      ${alsoChangedText(a)}`);
    }
    for (const t of ended) for (const c of t.commits ?? []) lines.push(`    turn ${t.index} landed in ${c.oid.slice(0, 7)}${quote(c.summary)}`);
    for (const a of s.userActions ?? []) lines.push(`    you: ${a.text}`);
  }
  return `${lines.join('\n')}\n`;
}

function formatTracking(t: SnapshotTrackingStatus): string {
  const taken = t.incremental + t.reused + t.fullWalks;
  const parts = [`${t.incremental} read only the files seen changing`, `${t.reused} found nothing changed`, `${t.fullWalks} read every file`];
  const checks = `${plural(t.verifications, 'check')} in quiet time found ${plural(t.missed, 'change')} the file watcher missed`;
  return `${plural(taken, 'snapshot')}: ${parts.join(', ')}; ${checks}${t.missed > 0 ? ` (latest: ${t.lastMissed.slice(0, 3).join(', ')})` : ''}`;
}

function formatRetention(r: RetentionStatus): string {
  const dropped = `${plural(r.sessionsDropped, 'ended session')} dropped`;
  const kept = r.sessionsKept > 0 ? `, ${r.sessionsKept} kept (nothing of theirs removable yet)` : '';
  const over = r.overBudget ? '; still over budget' : '';
  return `${r.at}: ${formatBytes(r.bytesBefore)} → ${formatBytes(r.bytesAfter)}, ${dropped}${kept}, ${plural(r.objectsRemoved, 'stored object')} removed, ${r.packsBefore} → ${plural(r.packsAfter, 'pack file')}${over}`;
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

function formatTurn(t: TurnStatus): string {
  const changes = t.changes ? `${plural(t.changes.files, 'file')} +${t.changes.added} -${t.changes.deleted}` : '';
  return `#${t.index} ${t.state}  ${changes}${quote(t.automatic ? t.title : t.message)}`;
}

/** "also changed by “Claude Code — fix the tests” (turn 2): src/app.ts, README.md": another session in the folder at the same time. */
function alsoChangedText(a: AlsoChangedBy): string {
  const more = a.files - a.paths.length;
  return `also changed by “${a.sessionTitle}” (turn ${a.turn}): ${a.paths.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function quote(message: string | undefined): string {
  if (!message) return '';
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return ` "${oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine}"`;
}
