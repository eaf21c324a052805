import type { ParsedChangesetUri } from '../../protocol/index.js';
import { captureFile, type CapturedSide } from '../changes/capture.js';
import type { RootTrees } from '../changes/collect-changes.js';
import { classify, type FileChange } from '../changes/file-change.js';
import { detectRenames } from '../changes/renames.js';
import type { SessionDelta } from '../changes/session-delta.js';
import { LeftWorkingDirectoryError } from '../disk/contained-read.js';
import type { RecordingSession } from '../session/recording-session.js';
import { ChangesetUnavailable, resolveSides, sessionEndTrees } from './changeset-sides.js';

/**
 * The file changes of one changeset. `current` is a fresh snapshot shared by
 * every live changeset recomputed at the same moment; `delta`, when given,
 * follows the whole session's changes from one state to the next.
 */
export async function produceChanges(
  session: RecordingSession,
  parsed: ParsedChangesetUri,
  current?: RootTrees[],
  delta?: SessionDelta,
): Promise<FileChange[]> {
  // A session's first snapshot may still be running (`serve` records it in the background): every side starts from it.
  await session.started;
  const inScope = (c: FileChange) => parsed.dir === undefined || c.root === parsed.dir;
  if (parsed.kind === 'session' && parsed.dir === undefined && delta) {
    const changes = await detectRenames(await delta.changesAt(sessionEndTrees(session) ?? current ?? (await session.currentTrees())));
    changes.push(...(await capturedSinceStart(session)));
    return changes;
  }
  if (parsed.kind === 'turn') {
    const turn = session.turn(parsed.turnId!);
    if (!turn) throw new ChangesetUnavailable(`no turn ${JSON.stringify(parsed.turnId)} in session ${session.id}`, 'missing');
    if (!turn.after) throw new ChangesetUnavailable(`turn ${JSON.stringify(parsed.turnId)} is still in progress`, 'pending');
    return (await session.turnChanges(turn)).filter(inScope);
  }
  const sides = await resolveSides(session, parsed, current);
  const changes = await session.files.changesBetween(sides.before, sides.after);
  if (parsed.kind === 'session') changes.push(...(await capturedSinceStart(session)).filter(inScope));
  return changes;
}

/**
 * Paths snapshots cannot see (captured by `beforeEdit`) changed since the
 * session began: their first captured content against what is on disk now,
 * or for an ended session against what its last turn to touch them left.
 */
async function capturedSinceStart(session: RecordingSession): Promise<FileChange[]> {
  const first = new Map<string, FileChange>();
  const last = new Map<string, CapturedSide>();
  for (const turn of session.turns) {
    if (!turn.after) continue;
    for (const change of await session.turnChanges(turn)) {
      if (!change.captured) continue;
      if (!first.has(change.oldAbsPath ?? change.absPath)) first.set(change.oldAbsPath ?? change.absPath, change);
      if (change.oldAbsPath) last.set(change.oldAbsPath, undefined);
      last.set(change.absPath, change.after);
    }
  }
  const ended = session.isEnded;
  const out: FileChange[] = [];
  for (const [absPath, change] of first) {
    const store = session.files.root(change.root).store;
    let now: CapturedSide;
    let left = false;
    try {
      now = ended ? last.get(absPath) : await captureFile(session.workingDirectories, absPath, store);
    } catch (error) {
      if (!(error instanceof LeftWorkingDirectoryError)) throw error;
      // A folder on its way now links elsewhere: what it leads to is not the workspace's, and is not read.
      now = undefined;
      left = true;
    }
    const kind = classify(change.before, now);
    if (!kind) continue;
    const fc: FileChange = { kind, root: change.root, path: change.oldPath ?? change.path, absPath, captured: true };
    if (left) fc.leftWorkingDirectory = true;
    if (change.before) fc.before = change.before;
    if (now) fc.after = now;
    out.push(fc);
  }
  await session.files.flush();
  return out;
}
