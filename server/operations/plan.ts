import type { RootTrees } from '../changes/collect-changes.js';
import type { BlobRef, FileChange } from '../changes/file-change.js';
import type { UnreadReason } from '../snapshot/walker.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SafetyRecord } from '../session/session-journal.js';
import type { TurnRecord } from '../session/turn-record.js';
import { reverseMerge, type CurrentFile, type RangeSelection, type Version } from './reverse-merge.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { checkoutConversion, hashObject, type CheckoutConversion } from '../snapshot/index.js';
import { NotAFileError, readDiskFile, type DiskFile } from '../disk/workspace-file.js';
import { dirname, join, relative } from 'node:path';
import { readCoreSettings } from '../snapshot/git-config.js';
import { toSlashes } from '../paths.js';
import { refusedWrite, type WriteGuard } from './write-guard.js';
import { gapText, unrecordedEdits, type HistoryFrom, type UnrecordedGap } from './unrecorded-edits.js';

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
  /** Permissions and owner for a file recreated where none is now (from a safety checkpoint). */
  owner?: { perm: number; uid: number; gid: number };
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
  /** Paths the operation writes that hold edits no recorded turn made (see {@link noteUnrecordedEdits}). */
  userEdited: string[];
  /** The same files, each with when those edits were made and what the operation does with them (empty when absent). */
  userEdits?: { path: string; reason: string }[];
  /** Directories to remove once emptied: the restored state does not have them (absolute paths). */
  removeDirs?: string[];
}

function emptyPlan(): Plan {
  return { writes: [], conflicts: [], unchanged: [], skipped: [], userEdited: [], userEdits: [] };
}

/** What is on disk at a path, or 'blocked' (recorded as skipped, with why) when operations cannot read or must not write over it. */
async function readForPlan(session: RecordingSession, plan: Plan, absPath: string, display: string): Promise<DiskFile | 'blocked'> {
  try {
    return await readDiskFile(absPath, session.workingDirectories);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (error instanceof NotAFileError)
      plan.skipped.push({ path: display, reason: 'not a regular file now (a directory, FIFO or device is there): left as it is' });
    else if (code === 'EACCES' || code === 'EPERM') plan.skipped.push({ path: display, reason: 'cannot be read (permission denied): left as it is' });
    else throw error;
    return 'blocked';
  }
}

const UNREAD_REASONS: Record<UnreadReason, string> = {
  unreadable: 'could not be read when it was recorded',
  oversized: 'was over the size limit when it was recorded',
  'not-a-file': 'was not a regular file when it was recorded',
};

/** Why a change cannot be undone from what was recorded, when a side's content was not read. */
function unreadReason(change: FileChange): string | undefined {
  const reason = change.before?.unread ?? change.after?.unread;
  return reason ? `${UNREAD_REASONS[reason]}, so its content is not known: left as it is` : undefined;
}

/**
 * Reverse-merges each change into today's file (revert on turn and session
 * changesets, discard on uncommitted): the file goes back to the change's
 * old side, keeping later edits to other lines.
 */
export async function planReverse(
  session: RecordingSession,
  changes: readonly FileChange[],
  selection?: RangeSelection,
  restoredTrees?: readonly RootTrees[],
  guard?: WriteGuard,
): Promise<Plan> {
  const plan = emptyPlan();
  for (const change of changes) {
    const display = session.files.display(change);
    if (change.before?.mode === '160000' || change.after?.mode === '160000') {
      plan.skipped.push({ path: display, reason: 'a submodule commit change is not reverted (the submodule is its own repository)' });
      continue;
    }
    const unread = unreadReason(change);
    if (unread) {
      plan.skipped.push({ path: display, reason: unread });
      continue;
    }
    if (change.before?.oversized || change.after?.oversized) {
      plan.conflicts.push({ path: display, reason: 'too large: its content was not recorded' });
      continue;
    }
    // Merged as git stores them, then written as `git checkout` would write them; captures are raw disk copies.
    const before = await version(change.before);
    const after = await version(change.after);
    const convert = (absPath: string) => (change.captured ? undefined : conversionAt(session, change.root, absPath));
    if (change.kind === 'renamed' && change.oldAbsPath) {
      // Undo a rename as two paths: the new one goes away, the old one comes back.
      const oldDisplay = session.files.display({ absPath: change.oldAbsPath, root: change.root, path: change.oldPath ?? '' });
      await addOutcome(session, plan, change.absPath, change.root, display, undefined, after, undefined, guard, convert(change.absPath));
      await addOutcome(session, plan, change.oldAbsPath, change.root, oldDisplay, before, undefined, undefined, guard, convert(change.oldAbsPath));
      continue;
    }
    await addOutcome(session, plan, change.absPath, change.root, display, before, after, selection, guard, convert(change.absPath));
  }
  if (restoredTrees) plan.removeDirs = await dirsToRemove(session, plan, restoredTrees);
  return plan;
}

/** Parent directories of files the plan deletes that the restored state does not have. */
async function dirsToRemove(session: RecordingSession, plan: Plan, trees: readonly RootTrees[]): Promise<string[]> {
  const out = new Set<string>();
  for (const w of plan.writes) {
    if (w.next || w.root < 0 || !trees[w.root]) continue;
    const source = session.files.source(w.root);
    for (let dir = dirname(w.absPath); dir !== source.dir && dir.startsWith(source.dir); dir = dirname(dir)) {
      if (out.has(dir)) continue;
      if (await lookupPath(source.reader, trees[w.root]!.tree, toSlashes(relative(source.dir, dir)))) break;
      out.add(dir);
    }
  }
  return [...out];
}

/**
 * Brings every file back to a recorded state (restore-checkpoint): overwrites
 * by design. `fromStep`: the state is the one before that tool call of
 * `from`, not the turn's start.
 */
export async function planRestore(
  session: RecordingSession,
  target: readonly RootTrees[],
  from: TurnRecord,
  fromStep?: number,
  guard?: WriteGuard,
): Promise<Plan> {
  const plan = emptyPlan();
  const current = await session.snapshotInQueue();
  const changes = await session.files.changesBetween(current, target);
  const wanted = new Map<string, { root: number; display: string; next: Version }>();
  for (const change of changes) {
    if (change.before?.mode === '160000' || change.after?.mode === '160000') {
      plan.skipped.push({ path: session.files.display(change), reason: 'submodule commits are not restored' });
      continue;
    }
    const unread = unreadReason(change);
    if (unread) {
      plan.skipped.push({ path: session.files.display(change), reason: unread });
      continue;
    }
    if (change.kind === 'renamed' && change.oldAbsPath) {
      const oldDisplay = session.files.display({ absPath: change.oldAbsPath, root: change.root, path: change.oldPath ?? '' });
      wanted.set(change.oldAbsPath, { root: change.root, display: oldDisplay, next: undefined });
    }
    const stored = await version(change.after);
    const convert = change.captured ? undefined : conversionAt(session, change.root, change.absPath);
    const next = stored && convert && isPlainFile(stored) ? { ...stored, content: convert.smudge(stored.content) } : stored;
    wanted.set(change.absPath, { root: change.root, display: session.files.display(change), next });
  }
  // Captured paths (ignored by snapshots) go back to what they held before this turn first touched them.
  const captured = new Set<string>();
  const fromIndex = session.turns.indexOf(from);
  for (const turn of session.turns.slice(fromIndex)) {
    for (const capture of turn.captures.values()) {
      if (wanted.has(capture.absPath)) continue;
      const change = (await session.turnChanges(turn)).find((c) => c.captured && c.absPath === capture.absPath);
      if (!change) continue;
      const capturedAt = turn === from && fromStep !== undefined ? turn.steps?.find((s) => s.paths.includes(capture.absPath))?.index : undefined;
      if (capturedAt !== undefined && capturedAt < fromStep!) {
        // Its content was captured before an earlier tool call only: what it held at the step is not known.
        plan.skipped.push({
          path: session.files.display(change),
          reason: `captured before step ${capturedAt}; its content just before step ${fromStep} was not recorded: left as it is`,
        });
        continue;
      }
      if (capture.before?.oversized) {
        plan.conflicts.push({ path: session.files.display(change), reason: 'too large: its content was not recorded' });
        continue;
      }
      wanted.set(capture.absPath, { root: capture.root, display: session.files.display(change), next: await version(capture.before) });
      captured.add(capture.absPath);
    }
  }
  for (const [absPath, w] of wanted) {
    if (w.root < 0) {
      plan.skipped.push({ path: w.display, reason: 'outside the working directories' });
      continue;
    }
    const refused = refusedWrite(session, absPath, w.root, w.next, guard);
    if (refused) {
      plan.skipped.push({ path: w.display, reason: refused });
      continue;
    }
    const disk = await readForPlan(session, plan, absPath, w.display);
    if (disk === 'blocked') continue;
    if (sameVersion(disk, w.next)) {
      plan.unchanged.push(w.display);
      continue;
    }
    plan.writes.push({ absPath, root: w.root, display: w.display, current: disk, next: w.next });
  }
  await noteUnrecordedEdits(session, plan, from, current, () => 'overwritten, undo brings it back');
  // Directories later turns made go once emptied; not for captured (ignored) paths, whose directories no tree records.
  plan.removeDirs = await dirsToRemove(session, { ...plan, writes: plan.writes.filter((w) => !captured.has(w.absPath)) }, target);
  return plan;
}

/**
 * Names the files a plan writes that hold edits no turn made since `from`
 * (found by {@link unrecordedEdits}, once for every operation), each with
 * when they were made and what the operation does with them (`fate`).
 */
export async function noteUnrecordedEdits(
  session: RecordingSession,
  plan: Plan,
  from: HistoryFrom,
  current: readonly RootTrees[],
  fate: (gap: UnrecordedGap) => string,
): Promise<void> {
  if (plan.writes.length === 0) return;
  const edits = await unrecordedEdits(session, from, current);
  for (const w of plan.writes) {
    const gaps = edits.get(w.absPath);
    if (!gaps || plan.userEdited.includes(w.display)) continue;
    const byFate = new Map<string, UnrecordedGap[]>();
    for (const gap of gaps) byFate.set(fate(gap), [...(byFate.get(fate(gap)) ?? []), gap]);
    plan.userEdited.push(w.display);
    (plan.userEdits ??= []).push({ path: w.display, reason: [...byFate].map(([what, list]) => `${gapText(list)}: ${what}`).join('; ') });
  }
}

/** Puts back what an operation changed, from its safety checkpoint (undo). */
export async function planUndo(session: RecordingSession, record: SafetyRecord, guard?: WriteGuard): Promise<Plan> {
  const plan = emptyPlan();
  for (const p of record.details.paths) {
    const store = session.files.root(p.root).store;
    const next: Version = p.oid && p.mode ? { content: (await store.readObject(p.oid)).content, mode: p.mode } : undefined;
    const display = session.files.display({ absPath: p.absPath, root: p.root, path: '' });
    const refused = refusedWrite(session, p.absPath, p.root, next, guard);
    if (refused) {
      plan.skipped.push({ path: display, reason: refused });
      continue;
    }
    const disk = await readForPlan(session, plan, p.absPath, display);
    if (disk === 'blocked') continue;
    if (sameVersion(disk, next)) {
      plan.unchanged.push(display);
      continue;
    }
    // Only what the operation left is put back: a file edited since holds a version undo would otherwise lose.
    if (p.result !== undefined && !sameResult(disk, p.result)) {
      plan.conflicts.push({ path: display, reason: `changed since ${record.details.operation} wrote it` });
      continue;
    }
    const write: PlannedWrite = { absPath: p.absPath, root: p.root, display, current: disk, next };
    if (p.perm !== undefined && p.uid !== undefined && p.gid !== undefined) write.owner = { perm: p.perm, uid: p.uid, gid: p.gid };
    plan.writes.push(write);
  }
  return plan;
}

function sameResult(disk: DiskFile, result: { oid: string; mode: string } | null): boolean {
  if (!disk || !result) return !disk && !result;
  return disk.oid === result.oid && disk.mode === result.mode;
}

async function addOutcome(
  session: RecordingSession,
  plan: Plan,
  absPath: string,
  root: number,
  display: string,
  before: Version,
  after: Version,
  selection?: RangeSelection,
  guard?: WriteGuard,
  convert?: CheckoutConversion,
): Promise<void> {
  if (root < 0) {
    plan.skipped.push({ path: display, reason: 'outside the working directories' });
    return;
  }
  // What a revert writes is the change's old side (or a merge of it): that is the version judged.
  const refused = refusedWrite(
    session,
    absPath,
    root,
    before && convert && isPlainFile(before) ? { ...before, content: convert.smudge(before.content) } : before,
    guard,
  );
  if (refused) {
    plan.skipped.push({ path: display, reason: refused });
    return;
  }
  const current = await readForPlan(session, plan, absPath, display);
  if (current === 'blocked') return;
  // With core.fileMode=false the executable bit on disk means nothing: compare as the recorded mode, and leave the bit as it is.
  const ignoresBit = !trustsExecutableBit(session, root) && isPlainFile(current) && isPlainFile(after);
  const raw = ignoresBit ? { ...current!, mode: after!.mode } : current;
  // Compared and merged as git stores them: a file saved with other line endings than a checkout writes is not an edit.
  const compared = convert && raw && isPlainFile(raw) ? cleaned(convert, raw, after) : raw;
  const outcome = reverseMerge(before, after, compared, selection);
  if (outcome.kind === 'conflict') plan.conflicts.push({ path: display, reason: outcome.reason });
  else if (outcome.kind === 'unchanged') plan.unchanged.push(display);
  else {
    let next = outcome.next;
    if (next && convert && isPlainFile(next)) next = { ...next, content: convert.smudge(next.content) };
    if (ignoresBit && isPlainFile(next)) next = { ...next!, mode: current!.mode };
    plan.writes.push({ absPath, root, display, current, next });
  }
}

function isPlainFile(v: { mode: string } | undefined): boolean {
  return v !== undefined && (v.mode === '100644' || v.mode === '100755');
}

/** `core.fileMode` of the working directory's repository (true outside a repository, as git would). */
function trustsExecutableBit(session: RecordingSession, root: number): boolean {
  const repo = session.files.list()[root]?.repository;
  return repo ? readCoreSettings(process.env, join(repo.commonDir, 'config')).fileMode : true;
}

/** A recorded version as it is stored: tree blobs hold what git stores, captures the raw disk bytes. */
async function version(ref: BlobRef | undefined): Promise<Version> {
  if (!ref) return undefined;
  return { content: (await ref.store.readObject(ref.oid)).content, mode: ref.mode };
}

/** How git converts the file at `absPath` between the blob it stores and the bytes a checkout writes (line endings). */
function conversionAt(session: RecordingSession, root: number, absPath: string): CheckoutConversion | undefined {
  const dir = root >= 0 ? session.files.dirs[root] : undefined;
  return dir ? checkoutConversion(dir, toSlashes(relative(dir, absPath))) : undefined;
}

/**
 * The file on disk as `git add` would store it, to compare with and merge
 * into recorded blobs: its own bytes when they already are the blob
 * `stored` (or git keeps that blob's CRLF), else converted.
 */
function cleaned(convert: CheckoutConversion, disk: NonNullable<DiskFile>, stored: Version): NonNullable<CurrentFile> {
  if (stored && (disk.oid === hashObject('blob', stored.content) || convert.keepsCrlf(stored.content))) return disk;
  const content = convert.clean(disk.content);
  return content === disk.content ? disk : { content, mode: disk.mode, oid: hashObject('blob', content) };
}

function sameVersion(disk: DiskFile, next: Version): boolean {
  if (!disk || !next) return !disk && !next;
  return disk.mode === next.mode && disk.oid === hashObject('blob', next.content);
}
