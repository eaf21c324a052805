import { readFile, readlink } from 'node:fs/promises';
import { basename } from 'node:path';
import type { GitMode } from '../changes/file-change.js';
import { encodePathBytes } from '../path-bytes.js';
import { hashObject } from '../snapshot/index.js';
import type { WorkspaceStore } from '../store/index.js';
import { removeEmptiedDirs, type ContainedDirs, type PinnedDir } from './contained-dirs.js';
import { newSwapNames, swapFile, type ExpectedVersion, type NewVersion } from './file-swap.js';
import type { IntendedWrite, IntentOperation, RecoveryReport } from './write-intent.js';
import { lstatOrUndefined } from './workspace-file.js';

/** What finishing an operation reads from the store: its checkpoints and the blobs it was writing. */
export type FinishingStore = Pick<WorkspaceStore, 'readObject' | 'listSessionCheckpoints'>;

/**
 * Carries an operation a crash interrupted to its end, when its safety
 * checkpoint was written: every file still holding the version it had
 * before gets the version the operation was writing (the safety checkpoint
 * holds the one replaced, so `undo` puts it back). A file holding anything
 * else was edited since and is left alone.
 */
export async function finishInterruptedOperation(
  dirs: ContainedDirs,
  store: FinishingStore,
  operation: IntentOperation,
  writes: readonly IntendedWrite[],
  report: RecoveryReport,
): Promise<void> {
  if (!(await hadBegunWriting(store, operation))) return;
  for (const w of writes) await finishOne(dirs, store, w, report);
  await removeEmptiedDirs(dirs, operation.removeDirs ?? []);
}

/** True when the operation's safety checkpoint is in the store and no rollback record says it put everything back. */
async function hadBegunWriting(store: FinishingStore, operation: IntentOperation): Promise<boolean> {
  const chain = await store.listSessionCheckpoints(operation.sessionId).catch(() => []);
  const detailsOf = (c: (typeof chain)[number]) =>
    c.kind === 'safety' ? (c.details as { intent?: unknown; operation?: unknown; undoes?: unknown } | undefined) : undefined;
  const record = chain.find((c) => detailsOf(c)?.intent === operation.id);
  if (!record) return false;
  return !chain.some((c) => detailsOf(c)?.operation === 'rollback' && detailsOf(c)?.undoes === record.safetyIndex);
}

async function finishOne(dirs: ContainedDirs, store: FinishingStore, w: IntendedWrite, report: RecoveryReport): Promise<void> {
  const name = encodePathBytes(basename(w.absPath));
  try {
    const creates = w.expectedOid === undefined && w.writtenOid !== undefined;
    const dir = await dirs.parentOf(w.absPath, false).catch((error: unknown) => {
      if (creates) return dirs.parentOf(w.absPath, true);
      throw error;
    });
    const now = await versionAt(dir, name);
    if (holds(now, w.writtenOid, w.written?.mode)) return;
    if (!holds(now, w.expectedOid, w.expectedMode)) {
      report.unfinished.push(w.absPath);
      return;
    }
    if (w.writtenOid !== undefined && !w.written) {
      report.unfinished.push(w.absPath);
      return;
    }
    const expected: ExpectedVersion = w.expectedOid !== undefined && now && now !== 'other' ? { oid: w.expectedOid, mode: now.mode } : undefined;
    const next: NewVersion =
      w.writtenOid !== undefined && w.written
        ? { content: (await store.readObject(w.writtenOid)).content, ...ownerOf(w.written), mode: w.written.mode }
        : undefined;
    await swapFile(dir, name, newSwapNames(), expected, next);
    report.finished.push(w.absPath);
  } catch {
    // The directory is gone or swapped, the blob is missing, or the file changed under us: it stays as it is.
    report.unfinished.push(w.absPath);
  }
}

function ownerOf(written: NonNullable<IntendedWrite['written']>): { perm?: number; uid?: number; gid?: number } {
  return {
    ...(written.perm !== undefined ? { perm: written.perm } : {}),
    ...(written.uid !== undefined ? { uid: written.uid } : {}),
    ...(written.gid !== undefined ? { gid: written.gid } : {}),
  };
}

/** The blob id and mode of what a directory entry holds; undefined when absent; 'other' for a directory or device. */
async function versionAt(dir: PinnedDir, name: Buffer): Promise<{ oid: string; mode: GitMode } | undefined | 'other'> {
  const path = dir.entry(name);
  const st = await lstatOrUndefined(path);
  if (!st) return undefined;
  if (st.isSymbolicLink()) return { oid: hashObject('blob', Buffer.from(await readlink(path, { encoding: 'buffer' }))), mode: '120000' };
  if (!st.isFile()) return 'other';
  return { oid: hashObject('blob', await readFile(path)), mode: (Number(st.mode) & 0o111) !== 0 ? '100755' : '100644' };
}

function holds(now: Awaited<ReturnType<typeof versionAt>>, oid: string | undefined, mode: GitMode | undefined): boolean {
  if (oid === undefined) return now === undefined;
  return now !== undefined && now !== 'other' && now.oid === oid && (mode === undefined || now.mode === mode);
}
