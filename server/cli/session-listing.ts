import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionStatus, type SessionSummary } from '../../protocol/session/state.js';

/** One session as `sessions` lists it, whether a server told it or the store was read. */
export interface SessionListing {
  /** What `--session` and `forget` take. */
  id: string;
  title: string;
  /** Still recording (resumed when a server starts), or ended and kept for review. */
  state: 'recording' | 'ended';
  /** A turn is being recorded now. */
  turnInProgress?: true;
  turns: number;
  startedAt: string;
  /** The files its turns changed, with lines added and deleted, when the server counted them. */
  changes?: { files: number; added: number; deleted: number };
  /** The folder it records. */
  directory?: string;
}

/** A session summary of `listSessions` as a listing. */
export function listingOf(s: SessionSummary): SessionListing {
  const meta = (s._meta ?? {}) as { turnCount?: number };
  const c = s.changes;
  let directory: string | undefined;
  try {
    directory = s.workingDirectory ? fileURLToPath(s.workingDirectory) : undefined;
  } catch {
    directory = undefined;
  }
  return {
    id: s.resource.replace(/^ahp-session:\/+/, ''),
    title: s.title,
    state: (s.status & SessionStatus.IsArchived) !== 0 ? 'ended' : 'recording',
    ...((s.status & SessionStatus.InProgress) !== 0 ? { turnInProgress: true as const } : {}),
    turns: meta.turnCount ?? 0,
    startedAt: new Date(s.createdAt).toISOString(),
    ...(c ? { changes: { files: c.files ?? 0, added: c.additions ?? 0, deleted: c.deletions ?? 0 } } : {}),
    ...(directory ? { directory } : {}),
  };
}

/** The lines `sessions` prints: sessions recording, then past ones. */
export function formatListing(items: readonly SessionListing[]): string {
  const lines: string[] = [];
  for (const [heading, state] of [
    ['Recording', 'recording'],
    ['Past sessions', 'ended'],
  ] as const) {
    const group = items.filter((s) => s.state === state);
    if (group.length === 0) continue;
    lines.push(`${heading}:`);
    for (const s of group) {
      const c = s.changes;
      const totals = c ? `, ${plural(c.files, 'file')} +${c.added} -${c.deleted}` : '';
      const now = s.turnInProgress ? ', a turn being recorded now' : '';
      lines.push(`  ${s.title}`, `    ${plural(s.turns, 'turn')}${totals}${now}; started ${localTime(s.startedAt)}; --session ${s.id}`);
    }
  }
  return lines.length ? lines.join('\n') : 'no sessions';
}

/** "1 turn", "2 turns". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** "2026-01-01 10:00", local time, as session titles give it. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The folder's name, as a title without an agent names it. */
export function folderName(dir: string): string {
  return basename(dir) || dir;
}
