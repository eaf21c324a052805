import { randomBytes } from 'node:crypto';
import { link, lstat, open, readFile, readlink, rename, symlink, unlink } from 'node:fs/promises';
import type { GitMode } from '../changes/file-change.js';
import { decodePathBytes } from '../path-bytes.js';
import { hashObject } from '../snapshot/index.js';
import type { PinnedDir } from './contained-dirs.js';
import { matchesIdentity, type DiskIdentity } from './workspace-file.js';

/** Thrown when a file is not what the operation planned against at the moment it is written. */
export class ChangedWhileRunningError extends Error {
  constructor(
    readonly absPath: string,
    readonly detail: string,
  ) {
    super(`${absPath} changed while the operation ran (${detail})`);
  }
}

/** The version a write expects to find (undefined: the path must not exist). */
export type ExpectedVersion = { oid: string; mode: GitMode; identity?: DiskIdentity } | undefined;

/** What a write puts in place (undefined: the path is removed). */
export type NewVersion = { content: Uint8Array; mode: GitMode; perm?: number; uid?: number; gid?: number } | undefined;

/**
 * Our temporary names: short and fixed-length whatever the target's name
 * (a long name cannot push them past the file-system limit), and
 * recognisable, so snapshots skip them and a restart removes leftovers.
 */
export const TEMP_NAME = /^\.changeset-[0-9a-f]{12}\.(tmp|old)$/;
/** Ignore patterns (`.gitignore` syntax) matching exactly the temporary names. */
export const TEMP_EXCLUDES = ['.changeset-????????????.tmp', '.changeset-????????????.old'];

/** The two temporary names one write uses in its directory. */
export interface SwapNames {
  /** The new content is written here first. */
  tmp: string;
  /** The current file is moved here, checked, and then removed. */
  aside: string;
}

export function newSwapNames(): SwapNames {
  const id = randomBytes(6).toString('hex');
  return { tmp: `.changeset-${id}.tmp`, aside: `.changeset-${id}.old` };
}

/**
 * Replaces, creates or removes one file only if it is still exactly the
 * version expected, and without a window in which a concurrent save is
 * lost: the current file is first moved aside (atomic: whatever was there
 * at that instant is in hand), then checked; the new file is linked in
 * place, which fails rather than overwrite a file someone created
 * meanwhile. A file that does not match is put back untouched.
 */
export async function swapFile(dir: PinnedDir, name: Buffer, names: SwapNames, expected: ExpectedVersion, next: NewVersion): Promise<void> {
  const target = dir.entry(name);
  const tmp = dir.entry(Buffer.from(names.tmp));
  const aside = dir.entry(Buffer.from(names.aside));
  const inDir = (n: string) => (dir.path.endsWith('/') ? dir.path + n : `${dir.path}/${n}`);
  const label = inDir(decodePathBytes(name));
  await dir.verify();
  if (next) await writeTemp(tmp, next);
  try {
    if (expected) {
      const st = await lstat(target, { bigint: true }).catch(() => undefined);
      if (!st) throw new ChangedWhileRunningError(label, 'it was deleted');
      if (st.isDirectory()) throw new ChangedWhileRunningError(label, 'it is a directory now');
      await dir.verify();
      try {
        await rename(target, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ChangedWhileRunningError(label, 'it was deleted');
        throw error;
      }
      const mismatch = await differsFrom(aside, expected);
      if (mismatch) {
        await putBack(aside, target, label, inDir(names.aside));
        throw new ChangedWhileRunningError(label, mismatch);
      }
    }
    if (next) {
      try {
        await dir.verify();
        await link(tmp, target);
      } catch (error) {
        // Someone saved the file after it was moved aside: theirs stays, and the version moved aside is in the safety checkpoint.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
          if (expected) await unlink(aside);
          throw new ChangedWhileRunningError(label, expected ? 'it was saved while being replaced' : 'it was created');
        }
        if (expected) await putBack(aside, target, label, inDir(names.aside));
        throw error;
      }
    }
    if (expected) await unlink(aside);
  } finally {
    if (next) await unlink(tmp).catch(() => undefined);
  }
}

/** Why a file moved aside is not the expected version, or undefined when it is. */
async function differsFrom(path: string | Buffer, expected: NonNullable<ExpectedVersion>): Promise<string | undefined> {
  const st = await lstat(path, { bigint: true });
  if (st.isDirectory()) return 'it is a directory now';
  const mode: GitMode = st.isSymbolicLink() ? '120000' : (Number(st.mode) & 0o111) !== 0 ? '100755' : '100644';
  if (mode !== expected.mode) return 'its mode changed';
  if (expected.identity && matchesIdentity(st, expected.identity)) return undefined;
  const content = st.isSymbolicLink() ? Buffer.from(await readlink(path, { encoding: 'buffer' })) : await readFile(path);
  return hashObject('blob', content) === expected.oid ? undefined : 'its content changed';
}

/** Moves a file back from aside without overwriting anything that appeared at its name. */
async function putBack(aside: string | Buffer, target: string | Buffer, label: string, asideLabel: string): Promise<void> {
  try {
    await link(aside, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      // Two versions and one name: both are kept, the other under the temporary name, and the error says where.
      throw new ChangedWhileRunningError(label, `it was saved again while being checked; the version before that is kept as ${asideLabel}`);
    }
    throw error;
  }
  await unlink(aside);
}

/** Writes the new content to the temporary name, durable, with the permissions it will have. */
async function writeTemp(tmp: string | Buffer, next: NonNullable<NewVersion>): Promise<void> {
  if (next.mode === '120000') {
    await symlink(Buffer.from(next.content), tmp);
    return;
  }
  const perm = permissionsFor(next);
  const handle = await open(tmp, 'wx', perm ?? (next.mode === '100755' ? 0o777 : 0o666));
  try {
    if (perm !== undefined) await handle.chmod(perm);
    if (next.uid !== undefined && next.gid !== undefined && process.getuid?.() === 0) {
      await handle.chown(next.uid, next.gid).catch(() => undefined);
    }
    await handle.writeFile(next.content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Exact permission bits for the new file: those it had (with the execute
 * bits following the mode, where read is allowed), or undefined to let the
 * umask decide for a file that is new.
 */
function permissionsFor(next: NonNullable<NewVersion>): number | undefined {
  const base = next.perm;
  if (base === undefined) return undefined;
  if (next.mode === '100755') return base | ((base & 0o444) >> 2);
  return base & ~0o111;
}
