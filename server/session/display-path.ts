import { homedir } from 'node:os';
import { relative } from 'node:path';
import { displayPathBytes } from '../path-bytes.js';
import { relativeInside, toSlashes } from '../paths.js';

/** Where a changed file sits relative to the places a user recognises. */
export interface DisplayContext {
  /** The working directory paths are shown relative to. */
  workingDirectory: string;
  /** The root of the repository that contains the working directory, when there is one. */
  repositoryRoot?: string;
  /** The user's home directory; defaults to the process's. */
  home?: string;
}

/**
 * The label a reviewer sees for a file: relative inside the working
 * directory, `../…` for repository files above it, `~/…` under the home
 * directory, else absolute. Always `/`-separated; bytes of a name that are
 * not UTF-8 show as `\xNN`.
 */
export function displayPath(absolutePath: string, ctx: DisplayContext): string {
  return displayPathBytes(locatePath(absolutePath, ctx));
}

function locatePath(absolutePath: string, ctx: DisplayContext): string {
  const inside = relativeInside(ctx.workingDirectory, absolutePath);
  if (inside !== undefined) return inside;
  if (ctx.repositoryRoot && relativeInside(ctx.repositoryRoot, absolutePath) !== undefined) {
    return toSlashes(relative(ctx.workingDirectory, absolutePath));
  }
  const home = ctx.home ?? homedir();
  const underHome = relativeInside(home, absolutePath);
  if (underHome !== undefined) return underHome === '' ? '~' : `~/${underHome}`;
  return toSlashes(absolutePath);
}

/** Compares display paths by UTF-16 code units, the order summaries and changesets use. */
export function compareDisplay(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
