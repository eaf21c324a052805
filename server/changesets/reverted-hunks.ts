/**
 * Which hunks of a recorded change today's files no longer hold: reverting
 * the hunk would write nothing, because it was reverted (from any client)
 * or its lines were edited back. The same plan a range Revert makes decides
 * it, so a hunk marked reverted is one whose Revert button would do nothing.
 */
import type { ParsedChangesetUri } from '../../protocol/index.js';
import type { DiffHunk } from '../../protocol/extensions/file-diff.js';
import type { FileChange } from '../changes/file-change.js';
import { readDiskFile } from '../disk/workspace-file.js';
import type { planReverse } from '../operations/plan.js';
import type { RecordingSession } from '../session/recording-session.js';

/** A file with more hunks than this is not checked hunk by hunk (each check reads the file and merges it). */
const MAX_CHECKED_HUNKS = 200;

/** Changeset kinds whose Revert takes a recorded change back out of today's files. */
const RECORDED_KINDS: ReadonlySet<string> = new Set(['turn', 'step', 'since', 'session']);

/**
 * Sets `reverted` on each hunk of a file's diff that today's file no longer
 * holds. Only for changes that end before today (a turn, a step, a
 * checkpoint's changes, an ended session): a live changeset's hunks are
 * today's file by definition.
 */
export async function markRevertedHunks(session: RecordingSession, parsed: ParsedChangesetUri, change: FileChange, hunks: DiffHunk[]): Promise<void> {
  if (!RECORDED_KINDS.has(parsed.kind) || (parsed.kind === 'session' && !session.isEnded)) return;
  if (!change.after || change.kind === 'renamed' || change.captured || hunks.length === 0 || hunks.length > MAX_CHECKED_HUNKS) return;
  // Today's file is still what the change left (the usual case): every hunk is there.
  const today = await readDiskFile(change.absPath, session.workingDirectories).catch(() => undefined);
  if (today && today.oid === change.after.oid && today.mode === change.after.mode) return;
  // The operations' planning (merges, write checks) loads here, at the first file whose hunks are checked, not at serve's start.
  const { planReverse } = await import('../operations/plan.js');
  for (const hunk of hunks) {
    let plan: Awaited<ReturnType<typeof planReverse>>;
    try {
      plan = await planReverse(session, [change], { range: rangeOf(hunk), side: 'after' });
    } catch {
      continue;
    }
    if (plan.unchanged.length === 1 && plan.writes.length === 0 && plan.conflicts.length === 0 && plan.skipped.length === 0) hunk.reverted = true;
  }
}

/** The lines of the new side a hunk covers, as a range Revert of it selects them (zero-based). */
function rangeOf(hunk: DiffHunk): { start: { line: number; character: number }; end: { line: number; character: number } } {
  const first = Math.max(0, hunk.newStart - 1);
  const last = hunk.newLines === 0 ? first : first + hunk.newLines - 1;
  return { start: { line: first, character: 0 }, end: { line: last, character: 0 } };
}
