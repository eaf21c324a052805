import { randomBytes } from 'node:crypto';
import { constants, linkSync, lstatSync, renameSync, unlinkSync, type BigIntStats } from 'node:fs';
import { open, readFile, readlink, symlink, unlink } from 'node:fs/promises';
import type { GitMode } from '../changes/file-change.js';
import { decodePathBytes } from '../path-bytes.js';
import { hashObject } from '../snapshot/index.js';
import type { PinnedDir } from './contained-dirs.js';
import { identityOf, lstatOrUndefined, matchesIdentity, type DiskIdentity } from './workspace-file.js';

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
  /** The new content is written here first; a rollback takes the new version off the name into it. */
  tmp: string;
  /** The version replaced is moved here, and kept until the operation settles. */
  aside: string;
}

export function newSwapNames(): SwapNames {
  const id = randomBytes(6).toString('hex');
  return { tmp: `.changeset-${id}.tmp`, aside: `.changeset-${id}.old` };
}

/** Test hooks: milliseconds to pause at one point of every replacement, so a test can land a save exactly there. */
export const PAUSE_BEFORE_REPLACE_ENV = 'CHANGESET_SERVER_TEST_PAUSE_BEFORE_REPLACE_MS';
export const PAUSE_WHILE_ASIDE_ENV = 'CHANGESET_SERVER_TEST_PAUSE_WHILE_ASIDE_MS';

/**
 * Test hooks for a server in the test's own process: awaited at the same two
 * points as the pauses above, with the file's name, so a test holds the swap
 * there exactly until its save has landed rather than for a set time.
 */
export const swapTestHooks: { beforeReplace?: (file: string) => Promise<void>; whileAside?: (file: string) => Promise<void> } = {};

/** A version of a file as it was when checked: enough to tell later whether anything was written to it since. */
export interface CheckedVersion {
  oid: string;
  mode: GitMode;
  identity: DiskIdentity;
}

/** What one replacement did. */
export interface Replacement {
  /** The version taken off the name, kept under the aside name until released or put back. */
  replaced?: CheckedVersion;
  /** The version put at the name. */
  placed?: CheckedVersion;
}

/** A version of ours a rollback took off the name, under one of the temporary names, to remove once nothing writes to it. */
export interface Taken {
  name: string;
  version: CheckedVersion;
}

/** The names one write works with, as `fs` takes them and as messages show them. */
interface SwapPaths {
  target: string | Buffer;
  label: string;
  temp(name: string): { path: string | Buffer; label: string };
}

function pathsOf(dir: PinnedDir, name: Buffer, names: SwapNames): SwapPaths & { tmp: ReturnType<SwapPaths['temp']>; aside: ReturnType<SwapPaths['temp']> } {
  const inDir = (n: string) => (dir.path.endsWith('/') ? dir.path + n : `${dir.path}/${n}`);
  const temp = (n: string) => ({ path: dir.entry(Buffer.from(n)), label: inDir(n) });
  return { target: dir.entry(name), label: inDir(decodePathBytes(name)), temp, tmp: temp(names.tmp), aside: temp(names.aside) };
}

/**
 * Replaces, creates or removes one file, and only if it is still exactly
 * the version expected; the version replaced stays under the aside name
 * (see {@link replaceFile}) only until it is checked once more right after.
 * For callers that write one file at a time.
 */
export async function swapFile(dir: PinnedDir, name: Buffer, names: SwapNames, expected: ExpectedVersion, next: NewVersion): Promise<void> {
  const done = await replaceFile(dir, name, names, expected, next);
  if (!done.replaced) return;
  const reason = await changedSince(dir, names.aside, done.replaced);
  if (reason === undefined) return releaseReplaced(dir, names);
  // Written to while being replaced: those writes are someone's, and the version they went to goes back.
  const { aside, temp } = pathsOf(dir, name, names);
  let kept = '';
  try {
    const taken = await undoReplacement(dir, name, names, done);
    if (taken && (await changedSince(dir, taken.name, taken.version)) !== undefined)
      kept = `; what was written meanwhile to the new version is kept as ${temp(taken.name).label}`;
    else if (taken) await unlink(dir.entry(Buffer.from(taken.name)));
    await releaseReplaced(dir, names);
  } catch (error) {
    if (!(error instanceof ChangedWhileRunningError)) throw error;
    kept = `; ${error.detail}, and the version written to is kept as ${aside.label}`;
  }
  throw new ChangedWhileRunningError(pathsOf(dir, name, names).label, reason + kept);
}

/**
 * Replaces, creates or removes one file only if it is still exactly the
 * version expected, without a moment in which a save someone makes is
 * lost:
 *
 * 1. The file is checked where it is, its name present all along (a
 *    program writing to it meanwhile writes to the file checked).
 * 2. The new version is written beside it under a temporary name.
 * 3. The name is taken off the file by a rename to the aside name (atomic:
 *    whatever the name held at that instant is in hand, nothing is
 *    overwritten), and what was taken must be the very file checked,
 *    untouched since; else it goes straight back and the write stops.
 * 4. The new version is linked in, which fails rather than overwrite a
 *    file someone created in the instant since 3.
 *
 * The version replaced is left under the aside name: the caller checks it
 * once more after the last write ({@link changedSince}; a writer that kept
 * it open may have written to it since), then releases it or puts it back.
 */
export async function replaceFile(dir: PinnedDir, name: Buffer, names: SwapNames, expected: ExpectedVersion, next: NewVersion): Promise<Replacement> {
  const p = pathsOf(dir, name, names);
  await dir.verify();
  const checked = expected ? await checkInPlace(p.target, expected, p.label) : undefined;
  if (next) await writeTemp(p.tmp.path, next);
  try {
    await pauseFor(PAUSE_BEFORE_REPLACE_ENV);
    if (swapTestHooks.beforeReplace) await swapTestHooks.beforeReplace(p.label);
    await dir.verify();
    // From here to the link, system calls back to back: the name is absent for a few microseconds at most.
    if (checked) takeOff(p, p.aside, checked);
    if (!next) return { replaced: checked };
    const ms = pauseMs(PAUSE_WHILE_ASIDE_ENV);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    if (swapTestHooks.whileAside) await swapTestHooks.whileAside(p.label);
    try {
      linkSync(p.tmp.path, p.target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        // Someone created the file in that instant: theirs stays, and so does the version before it.
        throw new ChangedWhileRunningError(
          p.label,
          checked ? `it was saved while being replaced; the version before that is kept as ${p.aside.label}` : 'it was created',
        );
      }
      if (checked) putBackFrom(p.aside, p);
      throw error;
    }
    const placed: CheckedVersion = {
      oid: hashObject('blob', next.content),
      mode: next.mode,
      identity: identityOf(lstatSync(p.tmp.path, { bigint: true }), nowNs()),
    };
    return checked ? { replaced: checked, placed } : { placed };
  } finally {
    if (next) await unlink(p.tmp.path).catch(() => undefined);
  }
}

/**
 * Puts back what a replacement took off the name, only if the name still
 * holds the version it put there (else someone edited it since, and their
 * version stays: ChangedWhileRunningError). The version of ours taken off
 * is returned, still under a temporary name, for the caller to remove once
 * nothing writes to it; the aside name remains a second name of what is
 * back in place until the caller releases it.
 */
export async function undoReplacement(dir: PinnedDir, name: Buffer, names: SwapNames, done: Replacement): Promise<Taken | undefined> {
  const p = pathsOf(dir, name, names);
  if (!done.placed) {
    if (done.replaced) linkBack(p.aside, p, 'it was created again since');
    return undefined;
  }
  const ours = await checkInPlace(p.target, done.placed, p.label);
  const into = done.replaced ? p.tmp : p.aside;
  takeOff(p, into, ours);
  if (done.replaced) {
    try {
      linkBack(p.aside, p, 'it was created again since');
    } catch (error) {
      unlinkSync(into.path);
      throw error;
    }
  }
  return { name: done.replaced ? names.tmp : names.aside, version: ours };
}

/** Why the version under a temporary name is no longer the one checked (someone wrote to it), or undefined when it is. */
export async function changedSince(dir: PinnedDir, tempName: string, version: CheckedVersion): Promise<string | undefined> {
  const path = dir.entry(Buffer.from(tempName));
  const st = await lstatOrUndefined(path);
  if (!st) return undefined;
  const changed = 'it was written to while being replaced';
  if (!sameVersion(st, version.identity)) return changed;
  if (!version.identity.racy) return undefined;
  const content = st.isSymbolicLink() ? Buffer.from(await readlink(path, { encoding: 'buffer' })) : await readFile(path);
  return hashObject('blob', content) === version.oid ? undefined : changed;
}

/** Removes the replaced version once the operation no longer needs it. */
export async function releaseReplaced(dir: PinnedDir, names: SwapNames): Promise<void> {
  await unlink(dir.entry(Buffer.from(names.aside))).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** The name's file checked against the expected version, the name left in place; throws when it is not that version. */
async function checkInPlace(path: string | Buffer, expected: NonNullable<ExpectedVersion>, label: string): Promise<CheckedVersion> {
  const st = await lstatOrUndefined(path);
  if (!st) throw new ChangedWhileRunningError(label, 'it was deleted');
  if (st.isDirectory()) throw new ChangedWhileRunningError(label, 'it is a directory now');
  if (!st.isFile() && !st.isSymbolicLink()) throw new ChangedWhileRunningError(label, 'it is not a regular file now');
  if (modeOf(st) !== expected.mode) throw new ChangedWhileRunningError(label, 'its mode changed');
  if (expected.identity && matchesIdentity(st, expected.identity)) return { oid: expected.oid, mode: expected.mode, identity: identityOf(st, nowNs()) };
  const read = st.isSymbolicLink() ? await readLinkOf(path, st) : await readFileOf(path, st);
  if (!read || hashObject('blob', read.content) !== expected.oid) throw new ChangedWhileRunningError(label, 'its content changed');
  return { oid: expected.oid, mode: expected.mode, identity: identityOf(read.st, read.readNs) };
}

/** A regular file's content read through one descriptor; undefined when the name was swapped or the file written meanwhile. */
async function readFileOf(path: string | Buffer, st: BigIntStats): Promise<{ content: Buffer; st: BigIntStats; readNs: bigint } | undefined> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const before = await handle.stat({ bigint: true });
    if (!sameVersion(before, st)) return undefined;
    const content = await handle.readFile();
    const after = await handle.stat({ bigint: true });
    const readNs = nowNs();
    return sameVersion(after, st) && BigInt(content.length) === st.size ? { content, st: after, readNs } : undefined;
  } finally {
    await handle.close();
  }
}

/** A symlink's target; undefined when the name was swapped meanwhile (a symlink itself never changes). */
async function readLinkOf(path: string | Buffer, st: BigIntStats): Promise<{ content: Buffer; st: BigIntStats; readNs: bigint } | undefined> {
  const content = Buffer.from(await readlink(path, { encoding: 'buffer' }));
  const after = await lstatOrUndefined(path);
  return after && sameVersion(after, st) ? { content, st: after, readNs: nowNs() } : undefined;
}

/**
 * Takes the name off its file by renaming it to `into` (whatever the name
 * holds at that instant is in hand; nothing is overwritten) and confirms
 * it is the version checked; if not, puts it straight back and throws.
 */
function takeOff(p: SwapPaths, into: { path: string | Buffer; label: string }, checked: CheckedVersion): void {
  try {
    renameSync(p.target, into.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ChangedWhileRunningError(p.label, 'it was deleted');
    throw error;
  }
  if (sameVersion(lstatSync(into.path, { bigint: true }), checked.identity)) return;
  putBackFrom(into, p);
  throw new ChangedWhileRunningError(p.label, 'it was saved while being replaced');
}

/** Puts a file taken off the name back, never over a file someone created there meanwhile (then both are kept, and the error says where). */
function putBackFrom(from: { path: string | Buffer; label: string }, p: SwapPaths): void {
  linkBack(from, p, `it was saved again while being replaced; the version before that is kept as ${from.label}`);
  unlinkSync(from.path);
}

/** Links a temporary name back to the file's name; throws `detail` when the name is taken. */
function linkBack(from: { path: string | Buffer }, p: SwapPaths, detail: string): void {
  try {
    linkSync(from.path, p.target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new ChangedWhileRunningError(p.label, detail);
    throw error;
  }
}

/** The same file, not written since: same inode, size and modification time. */
function sameVersion(st: BigIntStats, identity: Pick<DiskIdentity, 'dev' | 'ino' | 'size' | 'mtimeNs'>): boolean {
  return st.ino === identity.ino && st.dev === identity.dev && st.size === identity.size && st.mtimeNs === identity.mtimeNs;
}

function modeOf(st: BigIntStats): GitMode {
  return st.isSymbolicLink() ? '120000' : (Number(st.mode) & 0o111) !== 0 ? '100755' : '100644';
}

function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

function pauseMs(env: string): number {
  return Number(process.env[env] ?? 0) || 0;
}

async function pauseFor(env: string): Promise<void> {
  const ms = pauseMs(env);
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
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
