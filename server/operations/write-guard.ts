/**
 * What no operation writes, whatever the plan says. A path with a
 * component git refuses (`.git` and its other spellings, see
 * `git-path.ts`): writing it writes the repository's config or hooks, and
 * the next `git status` runs what they name. And, from a session that came
 * from a mirror, a symbolic link pointing outside the working directory,
 * unless the user asked for such links: someone else chose where it points.
 * Planners skip both with the reason; `executePlan` refuses a plan that
 * still holds the first, as the last line of defence.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { AhpErrorCodes } from '../../protocol/index.js';
import { DomainError } from '../domain-error.js';
import { quotedName, refusedPath } from '../git-path.js';
import { decodePathBytes } from '../path-bytes.js';
import { isInsideDir, relativeInside } from '../paths.js';
import type { RecordingSession } from '../session/recording-session.js';
import { isImportedSession } from '../store/imported-marker.js';
import type { Version } from './reverse-merge.js';

/** What planners need to know beyond the plan. */
export interface WriteGuard {
  /** The session came from a mirror: what its checkpoints hold is someone else's data. */
  imported: boolean;
  /** The user asked for symbolic links pointing outside the working directory to be created anyway. */
  allowOutsideSymlinks: boolean;
}

/** The guard for one invocation on a session. */
export async function writeGuardFor(session: RecordingSession, allowOutsideSymlinks: boolean): Promise<WriteGuard> {
  return { imported: await isImportedSession(session.files.root(0).store, session.id), allowOutsideSymlinks };
}

/**
 * Why an operation must leave `absPath` alone rather than make it `next`
 * (undefined: it may write it). Without a guard only the `.git` rule applies.
 */
export function refusedWrite(session: RecordingSession, absPath: string, root: number, next: Version, guard?: WriteGuard): string | undefined {
  const dir = session.workingDirectories[root];
  const rel = dir === undefined ? undefined : relativeInside(dir, absPath);
  if (dir === undefined || rel === undefined) return undefined;
  const refused = refusedPath(rel);
  if (refused) return `${quotedName(refused.component)} ${refused.problem}: git never writes there, and neither does any operation`;
  if (guard?.imported && !guard.allowOutsideSymlinks && next?.mode === '120000') {
    const target = decodePathBytes(next.content);
    if (isAbsolute(target) || !isInsideDir(dir, resolve(dirname(absPath), target))) {
      return `a symbolic link to ${quotedName(target)}, outside the working directory, from an imported session: not created unless links outside are allowed (--allow-outside-symlinks)`;
    }
  }
  return undefined;
}

/** Refuses (PermissionDenied, naming the file) a plan that would write or delete a path git refuses. */
export function assertNoRefusedPaths(session: RecordingSession, writes: readonly { absPath: string; display: string }[]): void {
  for (const w of writes) {
    for (const dir of session.workingDirectories) {
      const rel = relativeInside(dir, w.absPath);
      const refused = rel === undefined ? undefined : refusedPath(rel);
      if (refused)
        throw new DomainError(
          AhpErrorCodes.PermissionDenied,
          `Nothing was written: ${w.display}: ${quotedName(refused.component)} ${refused.problem}; no operation writes there`,
        );
    }
  }
}
