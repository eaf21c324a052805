import type { RetentionStatus, SnapshotTrackingStatus, StatusResult, TurnStatus } from '../../protocol/index.js';
import { parseClientArgs, TARGET_USAGE, targetOf } from './client-args.js';
import { formatMirrorStatus, requestMirrorStatus } from '../mirror/mirror-status-text.js';
import { Output } from '../client/output.js';

import { connect } from '../client/target.js';
import { UsageError } from '../client/errors.js';

export const STATUS_USAGE = [
  'Usage: changeset-server status [--turns N] [options]',
  '',
  'Shows the viewer link, the sessions of the running server, the turn being',
  'recorded and the last turns, numbered as --turn takes them.',
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
  const target = { ...targetOf(values), startForHistory: true };
  const { client, viewer } = await connect(target);
  try {
    const wanted = target.session === undefined ? undefined : target.session.startsWith('ahp-session:') ? target.session : `ahp-session:/${target.session}`;
    const status = await client.request('harness/status', { turns, ...(wanted !== undefined ? { channel: wanted } : {}) });
    const mirror = await requestMirrorStatus(client);
    new Output(values.json === true).result(`${formatStatus(status, viewer)}${mirror ? formatMirrorStatus(mirror) : ''}`, {
      ...status,
      ...(viewer ? { viewer } : {}),
      ...(mirror ? { mirror } : {}),
    });
    return 0;
  } finally {
    await client.close();
  }
}

/** The human-readable status listing. */
export function formatStatus(status: StatusResult, viewer?: string): string {
  const lines: string[] = [];
  if (viewer) lines.push(`viewer: ${viewer}`, '');
  if (status.sessions.length === 0) lines.push('no sessions');
  for (const s of status.sessions) {
    lines.push(`${s.title}${s.endedAt ? '  (ended: kept for review)' : ''}`);
    lines.push(`  session:     ${s.channel}`);
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
          ? `  recording:   turn ${s.activeTurn.index} (${s.activeTurn.turnId})${quote(s.activeTurn.message)} since ${s.activeTurn.startedAt}`
          : '  recording:   no active turn',
      );
    const ended = s.turns.filter((t) => t.state !== undefined);
    lines.push(`  turns:       ${s.turnCount}${ended.length > 0 ? ' (latest last)' : ''}`);
    for (const t of ended) lines.push(`    ${formatTurn(t)}`);
    for (const a of s.userActions ?? []) lines.push(`    you: ${a.text}`);
  }
  return `${lines.join('\n')}\n`;
}

function formatTracking(t: SnapshotTrackingStatus): string {
  const parts = [`${t.incremental} followed the watcher`, `${t.reused} unchanged`, `${t.fullWalks} full walk${t.fullWalks === 1 ? '' : 's'}`];
  const missed = `${t.verifications} verification${t.verifications === 1 ? '' : 's'}, ${t.missed} change${t.missed === 1 ? '' : 's'} missed by the watcher`;
  return `${parts.join(', ')}; ${missed}${t.missed > 0 ? ` (latest: ${t.lastMissed.slice(0, 3).join(', ')})` : ''}`;
}

function formatRetention(r: RetentionStatus): string {
  const dropped = `${r.sessionsDropped} ended session${r.sessionsDropped === 1 ? '' : 's'} dropped`;
  const kept = r.sessionsKept > 0 ? `, ${r.sessionsKept} kept (nothing of theirs removable yet)` : '';
  const over = r.overBudget ? '; still over budget' : '';
  return `${r.at}: ${formatBytes(r.bytesBefore)} → ${formatBytes(r.bytesAfter)}, ${dropped}${kept}, ${r.objectsRemoved} objects removed, ${r.packsBefore} → ${r.packsAfter} packs${over}`;
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
  const changes = t.changes ? `${t.changes.files} file${t.changes.files === 1 ? '' : 's'} +${t.changes.added} -${t.changes.deleted}` : '';
  return `#${t.index} ${t.turnId} ${t.state}  ${changes}${quote(t.automatic ? t.title : t.message)}`;
}

function quote(message: string | undefined): string {
  if (!message) return '';
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return ` "${oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine}"`;
}
