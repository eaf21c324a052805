/**
 * Reads of workspace files by a path someone named (a harness, an agent, a
 * client), done so that no symlink swapped in at any moment can make the
 * read land outside the working directories: every directory on the way is
 * opened from the working directory down, one component at a time, without
 * following a symlink, and the file itself is opened without following one
 * through the directory so opened. A symlinked directory that leads back
 * inside is followed by walking its target again the same way.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { decodePathBytes, encodePathBytes, fsPath } from '../path-bytes.js';
import { isInsideDir, relativeInside } from '../paths.js';
import { realPath } from './contained-dirs.js';

/** What a workspace path holds, read without ever leaving the working directories. */
export type ContainedFile =
  | { kind: 'missing' }
  /** The path now leads outside every working directory (through a symlinked directory): nothing was read. */
  | { kind: 'left-working-directory' }
  /** A directory, FIFO, socket or device. */
  | { kind: 'not-a-file' }
  | { kind: 'symlink'; target: Buffer }
  | { kind: 'file'; content: Buffer; stat: Stats }
  /** Over the size asked for: only its metadata was read. */
  | { kind: 'oversized'; stat: Stats };

/** Thrown where a caller cannot go on once a path leads outside the working directories. */
export class LeftWorkingDirectoryError extends Error {}

/** Symlinks followed before a path counts as leading nowhere (Linux's own limit). */
const MAX_LINKS = 40;
/** Reads of a file that keeps changing under the read before giving up. */
const MAX_ATTEMPTS = 3;

const FD_DIR = '/proc/self/fd';
const canPinDirectories = process.platform === 'linux' && existsSync(FD_DIR);

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: opening a FIFO someone put in the file's place must not hang the server.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The content of `absPath` (absolute, lexically inside one of `roots`, which
 * are real paths), read through directories pinned from its working
 * directory. `maxBytes` bounds what is read: a larger file comes back
 * `oversized` with its metadata only.
 */
export async function readContained(roots: readonly string[], absPath: string, maxBytes: number): Promise<ContainedFile> {
  if (!canPinDirectories) return readCheckedByPath(roots, absPath, maxBytes);
  let target = resolve(absPath);
  for (let links = 0; links <= MAX_LINKS; links++) {
    const walk = await openParent(roots, target);
    if (walk.kind !== 'opened') {
      if (walk.kind !== 'link') return walk;
      target = walk.leadsTo;
      continue;
    }
    try {
      return await readEntry(walk.dir, walk.name, maxBytes, absPath);
    } finally {
      await walk.dir.close();
    }
  }
  return { kind: 'left-working-directory' };
}

type ParentWalk =
  | { kind: 'opened'; dir: FileHandle; name: Buffer }
  /** A directory on the way is a symlink: the whole path, with it resolved, is walked again. */
  | { kind: 'link'; leadsTo: string }
  | { kind: 'missing' }
  | { kind: 'not-a-file' }
  | { kind: 'left-working-directory' };

/** Opens the directory holding `target` component by component from its working directory, following no symlink. */
async function openParent(roots: readonly string[], target: string): Promise<ParentWalk> {
  const root = rootOf(roots, target);
  if (root === undefined) return { kind: 'left-working-directory' };
  const rel = relativeInside(root, target)!;
  if (rel === '') return { kind: 'not-a-file' };
  const names = rel.split('/');
  let dir = await open(fsPath(root), DIR_FLAGS);
  let realDir = root;
  let keep = false;
  try {
    for (let i = 0; i < names.length - 1; i++) {
      const name = names[i]!;
      const entry = entryOf(dir, encodePathBytes(name));
      let next: FileHandle;
      try {
        next = await open(entry, DIR_FLAGS);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return { kind: 'missing' };
        if (code !== 'ELOOP' && code !== 'ENOTDIR') throw error;
        const st = await lstat(entry).catch(() => undefined);
        // A file where a directory was: the path names nothing.
        if (!st?.isSymbolicLink()) return { kind: 'missing' };
        // Resolved from the real directory holding the link, so `..` in the link means what the kernel would make of it.
        let link: string;
        try {
          link = decodePathBytes(await readlink(entry, { encoding: 'buffer' }));
        } catch (linkError) {
          const linkCode = (linkError as NodeJS.ErrnoException).code;
          if (linkCode === 'ENOENT') return { kind: 'missing' };
          // No longer a link (swapped back meanwhile): the same path is walked again.
          if (linkCode === 'EINVAL') return { kind: 'link', leadsTo: target };
          throw linkError;
        }
        return { kind: 'link', leadsTo: resolve(realDir, link, ...names.slice(i + 1)) };
      }
      await dir.close();
      dir = next;
      realDir = realDir.endsWith(sep) ? realDir + name : realDir + sep + name;
    }
    keep = true;
    return { kind: 'opened', dir, name: encodePathBytes(names[names.length - 1]!) };
  } finally {
    if (!keep) await dir.close();
  }
}

/** Reads one entry of a pinned directory: a symlink as its target, a regular file as its bytes. */
async function readEntry(dir: FileHandle, name: Buffer, maxBytes: number, absPath: string): Promise<ContainedFile> {
  const entry = entryOf(dir, name);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    let file: FileHandle;
    try {
      file = await open(entry, FILE_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      // A socket cannot be opened at all.
      if (code === 'ENXIO') return { kind: 'not-a-file' };
      if (code !== 'ELOOP') throw error;
      try {
        return { kind: 'symlink', target: await readlink(entry, { encoding: 'buffer' }) };
      } catch (linkError) {
        const linkCode = (linkError as NodeJS.ErrnoException).code;
        if (linkCode === 'ENOENT') return { kind: 'missing' };
        // Replaced by a file between the open and the readlink: open it again.
        if (linkCode === 'EINVAL') continue;
        throw linkError;
      }
    }
    try {
      const st = await file.stat();
      if (!st.isFile()) return { kind: 'not-a-file' };
      if (st.size > maxBytes) return { kind: 'oversized', stat: st };
      const content = await file.readFile();
      // A file rewritten while it was read is read again, so what comes back is one consistent version.
      const after = await file.stat();
      if (after.size === content.length && after.mtimeMs === st.mtimeMs) {
        return content.length > maxBytes ? { kind: 'oversized', stat: after } : { kind: 'file', content, stat: after };
      }
    } finally {
      await file.close();
    }
  }
  throw new Error(`${absPath} kept changing while it was read`);
}

/**
 * Without descriptor paths (not Linux): the real path is checked, the file
 * opened without following a final symlink, and the check repeated after
 * the open. A swap between the open and the second check is not caught;
 * `docs/operations.md` says so.
 */
async function readCheckedByPath(roots: readonly string[], absPath: string, maxBytes: number): Promise<ContainedFile> {
  const parent = resolve(absPath, '..');
  const inside = async (): Promise<boolean | undefined> => {
    const real = await realPath(parent);
    return real === undefined ? undefined : rootOf(roots, real) !== undefined;
  };
  const before = await inside();
  if (before === undefined) return { kind: 'missing' };
  if (!before) return { kind: 'left-working-directory' };
  const st = await lstat(fsPath(absPath)).catch(() => undefined);
  if (!st) return { kind: 'missing' };
  if (st.isSymbolicLink()) return { kind: 'symlink', target: await readlink(fsPath(absPath), { encoding: 'buffer' }) };
  let file: FileHandle;
  try {
    file = await open(fsPath(absPath), FILE_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    if (code === 'ENXIO') return { kind: 'not-a-file' };
    if (code === 'ELOOP') return readCheckedByPath(roots, absPath, maxBytes);
    throw error;
  }
  try {
    if ((await inside()) !== true) return { kind: 'left-working-directory' };
    const fst = await file.stat();
    if (!fst.isFile()) return { kind: 'not-a-file' };
    if (fst.size > maxBytes) return { kind: 'oversized', stat: fst };
    const content = await file.readFile();
    return content.length > maxBytes ? { kind: 'oversized', stat: fst } : { kind: 'file', content, stat: fst };
  } finally {
    await file.close();
  }
}

/** The innermost working directory `target` lies in, lexically. */
function rootOf(roots: readonly string[], target: string): string | undefined {
  let best: string | undefined;
  for (const root of roots) if (isInsideDir(root, target) && (best === undefined || root.length > best.length)) best = root;
  return best;
}

/** `name` inside the directory held open by `dir`, as a path the kernel resolves through the descriptor. */
function entryOf(dir: FileHandle, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${FD_DIR}/${dir.fd}/`), name]);
}
