import { dirname } from 'node:path';
import { AhpErrorCodes, JsonRpcErrorCodes } from '../../protocol/index.js';
import { DomainError } from '../domain-error.js';
import { isInsideDir } from '../paths.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SafetyDetails, SafetyPath } from '../session/session-journal.js';
import { hashObject } from '../snapshot/index.js';
import { ContainedDirs, DirectoryChangedError, OutsideWorkspaceError, realPath, removeEmptiedDirs } from '../disk/contained-dirs.js';
import { ChangedWhileRunningError, newSwapNames, type ExpectedVersion, type NewVersion, type SwapNames } from '../disk/file-swap.js';
import { describeWriter, fileKey, findOpenWriters } from '../disk/open-writers.js';
import { HeldOpenError, WriteBatch, type BatchWrite, type RollBackResult } from '../disk/write-batch.js';
import type { Plan, PlannedWrite } from './plan.js';
import { assertNoRefusedPaths } from './write-guard.js';
import { newIntentId, WriteIntent, type IntendedWrite } from '../disk/write-intent.js';

export { OutsideWorkspaceError } from '../disk/contained-dirs.js';

/** Test hook: milliseconds to pause between two file writes (fault tests kill the server there). */
const PAUSE_ENV = 'CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS';
/** Test hook: once this many files are written, the operation waits for good, so a test kills the process exactly there. */
const HOLD_ENV = 'CHANGESET_SERVER_TEST_HOLD_AFTER_WRITES';

/**
 * Test hook for a server in the test's own process: awaited before each
 * write after the first, with how many files are written, so a test changes
 * the workspace at an exact point of the operation rather than after a set time.
 */
export const executeTestHooks: { betweenWrites?: (written: number) => Promise<void> } = {};

/**
 * Error code of an operation stopped because a file changed while it ran:
 * AHP's AlreadyExists, like a conflict found while planning; `data.conflicts`
 * names the file.
 */
const CHANGED_WHILE_RUNNING = AhpErrorCodes.AlreadyExists;

interface Step {
  write: PlannedWrite;
  names: SwapNames;
  /** What the write expects on disk, and what it puts there. */
  expected: ExpectedVersion;
  next: NewVersion;
}

/**
 * Carries out a plan without losing a byte: a safety checkpoint of every
 * path about to be written (what `undo` restores), a write-ahead intent
 * (what a restart cleans up), then one compare-and-swap per file in a
 * directory reached without leaving the working directories. A file that
 * changed since it was planned stops the operation, and what was already
 * written is put back. Returns the safety checkpoint's index.
 */
export async function executePlan(session: RecordingSession, plan: Plan, details: Omit<SafetyDetails, 'paths'>): Promise<number> {
  assertNoRefusedPaths(session, plan.writes);
  for (const w of plan.writes) await assertInside(session, w.absPath);
  await refuseFilesHeldOpen(plan);
  const steps = [...plan.writes].sort((a, b) => (a.absPath < b.absPath ? -1 : 1)).map(stepFor);
  // The intent goes first and names the safety checkpoint: a restart finishes an operation only once that checkpoint exists.
  const intentId = newIntentId();
  const intents = await beginIntents(session, steps, intentId, plan.removeDirs);
  const index = await writeSafetyCheckpoint(session, steps, { ...details, intent: intentId }).catch(async (error: unknown) => {
    await Promise.all(intents.map((i) => i.end()));
    throw error;
  });
  const dirs = new ContainedDirs(session.workingDirectories);
  const batch = new WriteBatch(dirs);
  const pause = Number(process.env[PAUSE_ENV] ?? 0);
  const hold = Number(process.env[HOLD_ENV] ?? 0);
  const stop = async (write: PlannedWrite, error: unknown): Promise<never> => {
    const written = batch.count;
    const putBack = await batch.rollBack();
    if (putBack.failed.length === 0) {
      await session.safety.write({
        operation: 'rollback',
        changeset: details.changeset,
        paths: [],
        undoes: index,
        message: `${details.operation} stopped`,
      });
    }
    throw failure(session, write, error, written, putBack);
  };
  try {
    for (const step of steps) {
      if (batch.count > 0) {
        if (pause > 0) await new Promise((r) => setTimeout(r, pause));
        if (batch.count === hold) await new Promise(() => undefined);
        if (executeTestHooks.betweenWrites) await executeTestHooks.betweenWrites(batch.count);
      }
      await batch.write(batchWriteOf(step)).catch((error: unknown) => stop(step.write, error));
    }
    // Settling names the file it found written to or held open.
    await batch.settle().catch((error: HeldOpenError | ChangedWhileRunningError) => stop(steps.find((s) => s.write.absPath === error.absPath)!.write, error));
    await batch.release();
    await removeEmptiedDirs(dirs, plan.removeDirs ?? []);
    await dirs.sync();
    return index;
  } finally {
    await dirs.close();
    await Promise.all(intents.map((i) => i.end()));
  }
}

function batchWriteOf(step: Step): BatchWrite {
  return { absPath: step.write.absPath, display: step.write.display, names: step.names, expected: step.expected, next: step.next };
}

/**
 * Refuses, before anything is written, files another process holds open
 * for writing: what it writes after the file is replaced would land in a
 * file no name leads to.
 */
async function refuseFilesHeldOpen(plan: Plan): Promise<void> {
  const writers = await findOpenWriters(plan.writes.flatMap((w) => (w.current ? [w.current.identity] : [])));
  if (writers.size === 0) return;
  const conflicts = plan.writes.flatMap((w) => {
    const writer = w.current && writers.get(fileKey(w.current.identity));
    return writer ? [{ path: w.display, reason: describeWriter(writer) }] : [];
  });
  const list = conflicts.map((c) => `${c.path} (${c.reason})`).join(', ');
  throw new DomainError(CHANGED_WHILE_RUNNING, `Nothing was written: ${plural(conflicts.length, 'conflict')}: ${list}`, { conflicts });
}

function stepFor(write: PlannedWrite): Step {
  const current = write.current;
  const expected: ExpectedVersion = current ? { oid: current.oid, mode: current.mode, identity: current.identity } : undefined;
  // A rewritten file keeps its permissions and owner; a recreated one gets what the plan remembers, else the umask's.
  const keep = current && current.mode !== '120000' ? { perm: current.perm, uid: current.uid, gid: current.gid } : write.owner;
  const next: NewVersion = write.next ? { content: write.next.content, mode: write.next.mode, ...(write.next.mode !== '120000' ? keep : {}) } : undefined;
  return { write, names: newSwapNames(), expected, next };
}

async function writeSafetyCheckpoint(session: RecordingSession, steps: readonly Step[], details: Omit<SafetyDetails, 'paths'>): Promise<number> {
  const paths: SafetyPath[] = [];
  for (const { write: w, next } of steps) {
    const p: SafetyPath = { absPath: w.absPath, root: w.root, result: next ? { oid: hashObject('blob', next.content), mode: next.mode } : null };
    // What is written is stored too, so a restart can finish the operation.
    if (next) await storeOf(session, w.root).writeObject('blob', next.content);
    if (w.current) {
      p.oid = await storeOf(session, w.root).writeObject('blob', w.current.content);
      p.mode = w.current.mode;
      if (w.current.mode !== '120000') Object.assign(p, { perm: w.current.perm, uid: w.current.uid, gid: w.current.gid });
    }
    paths.push(p);
  }
  await session.files.flush();
  return session.safety.write({ ...details, paths });
}

/** One intent per store, naming the writes in its working directory, so each root recovers its own on open. */
async function beginIntents(session: RecordingSession, steps: readonly Step[], id: string, removeDirs: readonly string[] = []): Promise<WriteIntent[]> {
  const byRoot = new Map<number, IntendedWrite[]>();
  for (const { write: w, names, next } of steps) {
    const root = Math.max(w.root, 0);
    const entry: IntendedWrite = {
      absPath: w.absPath,
      names,
      ...(w.current ? { expectedOid: w.current.oid, expectedMode: w.current.mode } : {}),
      ...(next
        ? {
            writtenOid: hashObject('blob', next.content),
            written: {
              mode: next.mode,
              ...(next.perm !== undefined ? { perm: next.perm } : {}),
              ...(next.uid !== undefined ? { uid: next.uid } : {}),
              ...(next.gid !== undefined ? { gid: next.gid } : {}),
            },
          }
        : {}),
    };
    byRoot.set(root, [...(byRoot.get(root) ?? []), entry]);
  }
  const dirsOf = (root: number) => removeDirs.filter((d) => isInsideDir(session.files.root(root).dir, d));
  return Promise.all(
    [...byRoot].map(([root, writes]) =>
      WriteIntent.begin(session.files.root(root).store.layout.root, writes, { sessionId: session.id, id, removeDirs: dirsOf(root) }),
    ),
  );
}

/** The error an operation stopped part-way answers with, saying what was put back. */
function failure(_session: RecordingSession, write: PlannedWrite, error: unknown, written: number, rolledBack: RollBackResult): Error {
  const notPutBack = rolledBack.failed;
  const putBack =
    (written === 0
      ? 'nothing had been written yet'
      : notPutBack.length === 0
        ? `the ${plural(written, 'file')} already written ${written === 1 ? 'was' : 'were'} put back`
        : `${plural(written - notPutBack.length, 'file')} put back; ${notPutBack.join(', ')} ${notPutBack.length === 1 ? 'was' : 'were'} edited again since and kept (undo has the version before the operation)`) +
    (rolledBack.kept.length > 0 ? `; versions written to meanwhile are kept as ${rolledBack.kept.join(', ')}` : '');
  if (error instanceof OutsideWorkspaceError) return new DomainError(AhpErrorCodes.PermissionDenied, `${error.message}; ${putBack}`);
  if (error instanceof HeldOpenError) {
    const reason = describeWriter(error.writer);
    return new DomainError(CHANGED_WHILE_RUNNING, `Stopped: ${write.display} was ${reason} while the operation ran; ${putBack}`, {
      conflicts: [{ path: write.display, reason }],
    });
  }
  if (error instanceof ChangedWhileRunningError || error instanceof DirectoryChangedError) {
    const reason = error instanceof ChangedWhileRunningError ? `changed while the operation ran (${error.detail})` : error.message;
    return new DomainError(CHANGED_WHILE_RUNNING, `Stopped: ${write.display} ${reason}; ${putBack}`, {
      conflicts: [{ path: write.display, reason: 'changed while the operation ran' }],
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new DomainError(JsonRpcErrorCodes.InternalError, `Stopped: writing ${write.display} failed (${message}); ${putBack}`);
}

function storeOf(session: RecordingSession, root: number) {
  return session.files.root(root).store;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Refuses a path whose nearest existing ancestor resolves, after symlinks,
 * outside every working directory: checked once while planning, and again
 * by every write (ContainedDirs).
 */
export async function assertInside(session: RecordingSession, absPath: string): Promise<void> {
  let dir = dirname(absPath);
  let real: string | undefined;
  for (;;) {
    real = await realPath(dir);
    if (real || dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  const inside = real !== undefined && session.workingDirectories.some((root) => isInsideDir(root, real!));
  if (!inside) throw new OutsideWorkspaceError(`${absPath} resolves outside the session's working directories`);
}
