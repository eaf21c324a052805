import type { RootTrees } from '../changes/collect-changes.js';
import type { BlobRef, FileChange } from '../changes/file-change.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SafetyRecord } from '../session/session-journal.js';
import type { TurnRecord } from '../session/turn-record.js';
import { reverseMerge, type RangeSelection, type Version } from './reverse-merge.js';
import { readDiskFile, type DiskFile } from './workspace-file.js';

/** One file an operation will write (or delete, when `next` is undefined). */
export interface PlannedWrite {
  absPath: string;
  /** Working-directory index, or -1 outside every one. */
  root: number;
  /** The label users see. */
  display: string;
  /** What is on disk now (recorded by the safety checkpoint). */
  current: DiskFile;
  /** What the file becomes; undefined deletes it. */
  next: Version;
}

/** What an invocation would do. */
export interface Plan {
  writes: PlannedWrite[];
  /** Paths that cannot be written without losing edits; any conflict means nothing is written. */
  conflicts: { path: string; reason: string }[];
  /** Paths already in the wanted state. */
  unchanged: string[];
  /** Paths an operation leaves alone on purpose (e.g. outside the working directories). */
  skipped: { path: string; reason: string }[];
  /** Paths with edits no recorded turn made, which a restore overwrites (undo brings them back). */
  userEdited: string[];
}

export function emptyPlan(): Plan {
  return { writes: [], conflicts: [], unchanged: [], skipped: [], userEdited: [] };
}

/**
 * Reverse-merges each change into today's file (revert on turn and session
 * changesets, discard on uncommitted): the file goes back to the change's
 * old side, keeping later edits to other lines.
 */
export async function planReverse(session: RecordingSession, changes: readonly FileChange[], selection?: RangeSelection): Promise<Plan> {
  const plan = emptyPlan();
  for (const change of changes) {
    const display = session.display(change);
    if (change.before?.mode === '160000' || change.after?.mode === '160000') {
      plan.skipped.push({ path: display, reason: 'a submodule commit change is not reverted (the submodule is its own repository)' });
      continue;
    }
    if (change.before?.oversized || change.after?.oversized) {
      plan.conflicts.push({ path: display, reason: 'too large: its content was not recorded' });
      continue;
    }
    const before = await version(change.before);
    const after = await version(change.after);
    if (change.kind === 'renamed' && change.oldAbsPath) {
      // Undo a rename as two paths: the new one goes away, the old one comes back.
      const oldDisplay = session.display({ absPath: change.oldAbsPath, root: change.root, path: change.oldPath ?? '' });
      await addOutcome(plan, change.absPath, change.root, display, undefined, after);
      await addOutcome(plan, change.oldAbsPath, change.root, oldDisplay, before, undefined);
      continue;
    }
    await addOutcome(plan, change.absPath, change.root, display, before, after, selection);
  }
  return plan;
}

/** Brings every file back to a recorded state (restore-checkpoint): overwrites by design. */
export async function planRestore(session: RecordingSession, target: readonly RootTrees[], from: TurnRecord): Promise<Plan> {
  const plan = emptyPlan();
  const current = await session.snapshotInQueue();
  const changes = await session.changesBetween(current, target);
  const wanted = new Map<string, { root: number; display: string; next: Version }>();
  for (const change of changes) {
    if (change.before?.mode === '160000' || change.after?.mode === '160000') {
      plan.skipped.push({ path: session.display(change), reason: 'submodule commits are not restored' });
      continue;
    }
    if (change.kind === 'renamed' && change.oldAbsPath) {
      const oldDisplay = session.display({ absPath: change.oldAbsPath, root: change.root, path: change.oldPath ?? '' });
      wanted.set(change.oldAbsPath, { root: change.root, display: oldDisplay, next: undefined });
    }
    wanted.set(change.absPath, { root: change.root, display: session.display(change), next: await version(change.after) });
  }
  // Captured paths (ignored by snapshots) go back to what they held before this turn first touched them.
  const fromIndex = session.turns.indexOf(from);
  for (const turn of session.turns.slice(fromIndex)) {
    for (const capture of turn.captures.values()) {
      if (wanted.has(capture.absPath)) continue;
      const change = (await session.turnChanges(turn)).find((c) => c.captured && c.absPath === capture.absPath);
      if (!change) continue;
      if (capture.before?.oversized) {
        plan.conflicts.push({ path: session.display(change), reason: 'too large: its content was not recorded' });
        continue;
      }
      wanted.set(capture.absPath, { root: capture.root, display: session.display(change), next: await version(capture.before) });
    }
  }
  const last = [...session.turns].reverse().find((t) => t.after);
  const userEdited = last?.after ? new Set((await session.changesBetween(last.after, current)).flatMap((c) => [c.absPath, c.oldAbsPath ?? ''])) : new Set<string>();
  for (const [absPath, w] of wanted) {
    if (w.root < 0) {
      plan.skipped.push({ path: w.display, reason: 'outside the working directories' });
      continue;
    }
    const disk = await readDiskFile(absPath);
    if (sameVersion(disk, w.next)) {
      plan.unchanged.push(w.display);
      continue;
    }
    plan.writes.push({ absPath, root: w.root, display: w.display, current: disk, next: w.next });
    if (userEdited.has(absPath)) plan.userEdited.push(w.display);
  }
  return plan;
}

/** Puts back what an operation changed, from its safety checkpoint (undo). */
export async function planUndo(session: RecordingSession, record: SafetyRecord): Promise<Plan> {
  const plan = emptyPlan();
  for (const p of record.details.paths) {
    const store = session.roots[Math.max(p.root, 0)]!.store;
    const next: Version = p.oid && p.mode ? { content: (await store.readObject(p.oid)).content, mode: p.mode } : undefined;
    const display = session.display({ absPath: p.absPath, root: p.root, path: '' });
    const disk = await readDiskFile(p.absPath);
    if (sameVersion(disk, next)) plan.unchanged.push(display);
    else plan.writes.push({ absPath: p.absPath, root: p.root, display, current: disk, next });
  }
  return plan;
}

async function addOutcome(
  plan: Plan,
  absPath: string,
  root: number,
  display: string,
  before: Version,
  after: Version,
  selection?: RangeSelection,
): Promise<void> {
  if (root < 0) {
    plan.skipped.push({ path: display, reason: 'outside the working directories' });
    return;
  }
  const current = await readDiskFile(absPath);
  const outcome = reverseMerge(before, after, current, selection);
  if (outcome.kind === 'conflict') plan.conflicts.push({ path: display, reason: outcome.reason });
  else if (outcome.kind === 'unchanged') plan.unchanged.push(display);
  else plan.writes.push({ absPath, root, display, current, next: outcome.next });
}

async function version(ref: BlobRef | undefined): Promise<Version> {
  if (!ref) return undefined;
  return { content: (await ref.store.readObject(ref.oid)).content, mode: ref.mode };
}

function sameVersion(disk: DiskFile, next: Version): boolean {
  if (!disk || !next) return !disk && !next;
  return disk.mode === next.mode && Buffer.compare(Buffer.from(disk.content), Buffer.from(next.content)) === 0;
}
