/** Reading a session's turns: their figures from the session state, their counts, their titles. */
import type { SessionState } from '../../../protocol/index.js';
import type { TimelineMeta } from '../../../protocol/extensions/timeline.js';
import type { Counts } from '../files-model.js';

/** The session state's timeline figures (`_meta`), when the server sent them. */
export function timelineOf(session: SessionState | undefined): Partial<TimelineMeta> {
  const meta = session?._meta as Partial<TimelineMeta> | undefined;
  return meta ?? {};
}

/** A turn's counts: from its opened changeset (`opened`), else from the session state. */
export function turnCountsOf(opened: ReadonlyMap<string, Counts>, session: SessionState | undefined, turnId: string): Counts | undefined {
  const counts = opened.get(turnId);
  if (counts) return counts;
  const stats = timelineOf(session).turns?.[turnId];
  return stats ? { files: stats.files, additions: stats.added, deletions: stats.deleted, truncated: false } : undefined;
}

/** The first line of a message, for list labels. */
export function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n', 1)[0]!.trim();
}
