/**
 * Where a client-supplied path really leads. A path is inside a working
 * directory only if it stays there once every symlink on the way is
 * followed: `link/passwd` with `link -> /etc` is `/etc/passwd`, whatever the
 * path says.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AhpErrorCodes } from '../protocol/index.js';
import { DomainError } from './domain-error.js';
import { decodePathBytes, fsPath } from './path-bytes.js';
import { isInsideDir } from './paths.js';

/** Symlinks followed before a path counts as unresolvable (Linux's own limit). */
const MAX_LINKS = 40;

/** A path whose symlinks lead round in circles or too deep. */
export class UnresolvablePathError extends Error {}

/** A client named a path that leads (after symlinks) outside the session's working directories: PermissionDenied. */
export class OutsideWorkingDirectoriesError extends DomainError {
  constructor(message: string) {
    super(AhpErrorCodes.PermissionDenied, message);
  }
}

/**
 * The real path `absPath` (absolute) leads to: its own real path when it
 * exists, else the real path of its nearest existing ancestor joined with
 * the components that do not exist yet. A dangling symlink leads where its
 * target would be created.
 */
export async function realPathOf(absPath: string): Promise<string> {
  const missing: string[] = [];
  let path = resolve(absPath);
  let links = 0;
  for (;;) {
    try {
      const real = decodePathBytes(await realpath(fsPath(path), { encoding: 'buffer' }));
      return missing.length > 0 ? join(real, ...[...missing].reverse()) : real;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new UnresolvablePathError(`${absPath}: too many levels of symbolic links`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const link = await lstat(fsPath(path)).catch(() => undefined);
    if (link?.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new UnresolvablePathError(`${absPath}: too many levels of symbolic links`);
      path = resolve(dirname(path), decodePathBytes(await readlink(fsPath(path), { encoding: 'buffer' })));
      continue;
    }
    const parent = dirname(path);
    if (parent === path) return join(path, ...[...missing].reverse());
    missing.push(basename(path));
    path = parent;
  }
}

/**
 * The real path `absPath` leads to when that is inside one of `roots`
 * (real paths), or undefined when it leads outside every one, or nowhere
 * (a symlink loop).
 */
export async function realPathInside(roots: readonly string[], absPath: string): Promise<string | undefined> {
  let real: string;
  try {
    real = await realPathOf(absPath);
  } catch (error) {
    if (error instanceof UnresolvablePathError) return undefined;
    throw error;
  }
  return roots.some((root) => isInsideDir(root, real)) ? real : undefined;
}
