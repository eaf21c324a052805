import type { ChangesetOperationTarget, ParsedChangesetUri } from '../../protocol/index.js';
import type { RecordingSession } from './recording-session.js';

/** What the timeline needs to know about a finished operation. */
export interface FinishedOperation {
  /** The operation id (`revert`, `discard`, `restore-checkpoint`, `restore-checkpoint-and-turns`, `undo`). */
  operation: string;
  /** The changeset it was invoked on. */
  parsed: ParsedChangesetUri;
  target: ChangesetOperationTarget | undefined;
  /** Display paths it wrote. */
  files: readonly string[];
  /** For undo: the timeline line of the action it undid; for redo, of the action it did again. */
  undid?: string;
}

/**
 * The line a timeline shows for something the user did, in the words a
 * person uses: "Reverted lines 3–9 of src/app.ts (turn 2)", "Undid:
 * Reverted turn 3". Line numbers are 1-based, as editors show them.
 */
export function userActionText(session: RecordingSession, op: FinishedOperation): string {
  const where = scopeOf(session, op.parsed);
  const file = op.target ? fileLabel(session, op.target, op.files) : undefined;
  switch (op.operation) {
    case 'revert':
    case 'discard': {
      const verb = op.operation === 'discard' ? 'Discarded changes to' : 'Reverted';
      if (op.target?.kind === 'range') {
        const start = op.target.range.start.line + 1;
        const end = Math.max(start, op.target.range.end.line + 1);
        const lines = start === end ? `line ${start}` : `lines ${start}–${end}`;
        return `${verb} ${lines} of ${file}${where}`;
      }
      if (file) return `${verb} ${file}${where}`;
      return `${verb} ${where ? where.slice(2, -1) : 'the changes'}${filesSuffix(op.files)}`;
    }
    case 'restore-checkpoint':
      if (op.parsed.step !== undefined)
        return `Restored the files to before step ${op.parsed.step} of ${turnLabel(session, op.parsed.turnId!)}${filesSuffix(op.files)}`;
      return `Restored the files to the start of ${where.slice(2, -1) || 'the turn'}${filesSuffix(op.files)}`;
    case 'restore-checkpoint-and-turns':
      return `Restored the start of ${where.slice(2, -1) || 'the turn'} and removed it and the turns after it${filesSuffix(op.files)}`;
    case 'undo':
      return op.undid ? `Undid: ${op.undid}` : `Undid the last operation${filesSuffix(op.files)}`;
    case 'redo':
      return op.undid ? `Redid: ${op.undid}` : `Redid the last undo${filesSuffix(op.files)}`;
    default:
      return `${op.operation}${filesSuffix(op.files)}`;
  }
}

/** " (turn 2)", " (session changes)", or "" when the changeset names no scope worth saying. */
function scopeOf(session: RecordingSession, parsed: ParsedChangesetUri): string {
  switch (parsed.kind) {
    case 'turn':
      return ` (${turnLabel(session, parsed.turnId!)})`;
    case 'step':
      return ` (${turnLabel(session, parsed.turnId!)}, step ${parsed.step})`;
    case 'since':
      return parsed.step === undefined
        ? ` (changes since the start of ${turnLabel(session, parsed.turnId!)})`
        : ` (changes since step ${parsed.step} of ${turnLabel(session, parsed.turnId!)})`;
    case 'session':
      return ' (session changes)';
    case 'uncommitted':
      return ' (uncommitted changes)';
    case 'branch':
      return ' (branch changes)';
    default:
      return '';
  }
}

function turnLabel(session: RecordingSession, turnId: string): string {
  const index = session.turns.findIndex((t) => t.id === turnId);
  return index >= 0 ? `turn ${index + 1}` : `turn ${turnId}`;
}

function fileLabel(session: RecordingSession, target: ChangesetOperationTarget, files: readonly string[]): string {
  if (files.length === 1) return files[0]!;
  try {
    const path = decodeURIComponent(new URL(target.resource).pathname);
    const root = session.files.rootIndexOf(path);
    return session.files.display({ absPath: path, root, path: root >= 0 ? path.slice(session.files.root(root).dir.length + 1) : path });
  } catch {
    return target.resource;
  }
}

function filesSuffix(files: readonly string[]): string {
  if (files.length === 0) return ' (no file needed a change)';
  if (files.length <= 3) return `: ${files.join(', ')}`;
  return `: ${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;
}
