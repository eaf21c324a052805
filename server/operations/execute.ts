import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isInsideDir } from '../paths.js';
import type { RecordingSession } from '../session/recording-session.js';
import type { SafetyDetails, SafetyPath } from '../session/session-journal.js';
import type { Plan } from './plan.js';
import { deleteDiskFile, writeDiskFileAtomic } from './workspace-file.js';

/** Test hook: milliseconds to pause between two file writes (fault tests kill the server there). */
const PAUSE_ENV = 'CHANGESET_SERVER_TEST_PAUSE_BETWEEN_WRITES_MS';

/**
 * Carries out a plan without losing a byte: first a safety checkpoint of
 * every path about to be written (what `undo` restores), then one atomic
 * write per file. Returns the safety checkpoint's index.
 */
export async function executePlan(session: RecordingSession, plan: Plan, details: Omit<SafetyDetails, 'paths'>): Promise<number> {
  for (const w of plan.writes) await assertInside(session, w.absPath);
  const paths: SafetyPath[] = [];
  for (const w of plan.writes) {
    const p: SafetyPath = { absPath: w.absPath, root: w.root };
    if (w.current) {
      p.oid = await session.roots[Math.max(w.root, 0)]!.store.writeObject('blob', w.current.content);
      p.mode = w.current.mode;
    }
    paths.push(p);
  }
  await Promise.all(session.roots.map((r) => r.store.flush()));
  const index = await session.journal.writeSafety({ ...details, paths });
  const pause = Number(process.env[PAUSE_ENV] ?? 0);
  let first = true;
  for (const w of [...plan.writes].sort((a, b) => (a.absPath < b.absPath ? -1 : 1))) {
    if (!first && pause > 0) await new Promise((r) => setTimeout(r, pause));
    first = false;
    if (w.next) await writeDiskFileAtomic(w.absPath, w.next.content, w.next.mode);
    else await deleteDiskFile(w.absPath);
  }
  return index;
}

/** Thrown when a path resolves (symlinks included) outside the session's working directories. */
export class OutsideWorkspaceError extends Error {}

/**
 * Refuses a path whose nearest existing ancestor resolves, after symlinks,
 * outside every working directory: a symlinked folder must not carry a
 * write elsewhere.
 */
export async function assertInside(session: RecordingSession, absPath: string): Promise<void> {
  let dir = dirname(absPath);
  let real: string | undefined;
  for (;;) {
    real = await realpath(dir).catch(() => undefined);
    if (real || dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  const inside = real !== undefined && session.workingDirectories.some((root) => isInsideDir(root, real!));
  if (!inside) throw new OutsideWorkspaceError(`${absPath} resolves outside the session's working directories`);
}
