/**
 * Captures: copies of paths a snapshot cannot see (ignored, outside a
 * repository's tracked area, …), taken before a tool edits them and again
 * at the end of the turn.
 */
import { tmpdir } from 'node:os';
import { relative, resolve } from 'node:path';
import { captureFile, DEFAULT_CAPTURE_MAX_BYTES } from '../changes/capture.js';
import { OutsideWorkingDirectoriesError, realPathInside } from '../containment.js';
import { LeftWorkingDirectoryError } from '../disk/contained-read.js';
import { isInsideDir, toSlashes } from '../paths.js';
import type { SessionFiles } from './session-files.js';
import type { TurnRecord } from './turn-record.js';

/** Where a `beforeEdit` path leads, checked. */
export interface EditTarget {
  absPath: string;
  /** Under the temporary directory outside every working directory: not captured. */
  skip: boolean;
}

/** Why a `beforeEdit` path list is refused before anything is read, or undefined. */
export function pathsProblem(paths: unknown): string | undefined {
  if (!Array.isArray(paths)) return 'paths must be an array of strings';
  for (let i = 0; i < paths.length; i++) {
    const p: unknown = paths[i];
    if (typeof p !== 'string' || p.length === 0) return `paths[${i}] must be a non-empty string`;
    if (p.includes('\0')) return `paths[${i}] must not contain NUL`;
  }
  return undefined;
}

/**
 * Where a `beforeEdit` path leads: inside a working directory after
 * symlinks (captured at its real location when only a symlink makes it
 * so), or under the temporary directory outside every working directory
 * (skipped). Anything else is refused: the store would otherwise hold
 * copies of files the session has no business reading.
 */
export async function editTarget(files: SessionFiles, p: string): Promise<EditTarget> {
  const absPath = files.resolvePath(p);
  if (isExcludedTemp(files, absPath)) return { absPath, skip: true };
  const real = await realPathInside(files.dirs, absPath);
  if (real === undefined) {
    throw new OutsideWorkingDirectoriesError(`${p} resolves outside the session's working directories`);
  }
  return { absPath: files.rootIndexOf(absPath) >= 0 ? absPath : real, skip: false };
}

function isExcludedTemp(files: SessionFiles, absPath: string): boolean {
  if (files.rootIndexOf(absPath) >= 0) return false;
  return [tmpdir(), '/tmp'].some((t) => isInsideDir(resolve(t), absPath));
}

/**
 * Captures the targets' current content on the turn (a path captured
 * earlier in the turn keeps its first copy) and resolves with the paths
 * now safe. One that turns out to lead outside since it was checked
 * refuses the whole request, and nothing of it stays captured.
 */
export async function captureBefore(
  files: SessionFiles,
  turn: TurnRecord,
  targets: readonly EditTarget[],
  given: readonly string[],
  tool: string | undefined,
  maxBytes = DEFAULT_CAPTURE_MAX_BYTES,
): Promise<string[]> {
  const captured: string[] = [];
  const addedNow: string[] = [];
  for (const [i, { absPath, skip }] of targets.entries()) {
    if (tool) turn.tools.set(absPath, tool);
    if (skip) continue;
    if (!turn.captures.has(absPath)) {
      const root = files.rootIndexOf(absPath);
      const before = await captureFile(files.dirs, absPath, files.root(root).store, maxBytes).catch((error: unknown) => {
        if (!(error instanceof LeftWorkingDirectoryError)) throw error;
        // Checked above, but a folder on its way was swapped for a link out since: refused whole, as it would have been then.
        for (const added of addedNow) turn.captures.delete(added);
        throw new OutsideWorkingDirectoriesError(`${given[i]} resolves outside the session's working directories`);
      });
      turn.captures.set(absPath, { absPath, root, before });
      addedNow.push(absPath);
    }
    captured.push(absPath);
  }
  await files.flush();
  return captured;
}

/** Reads every captured path again at the end of the turn; `warn` hears of one that left the working directory. */
export async function captureAfter(files: SessionFiles, turn: TurnRecord, warn: (line: string) => void, maxBytes = DEFAULT_CAPTURE_MAX_BYTES): Promise<void> {
  for (const capture of turn.captures.values()) {
    const store = files.root(capture.root).store;
    try {
      capture.after = await captureFile(files.dirs, capture.absPath, store, maxBytes);
    } catch (error) {
      if (!(error instanceof LeftWorkingDirectoryError)) throw error;
      // Nothing at that path is the workspace's any more: recorded as gone, and said so, never read.
      capture.after = undefined;
      capture.leftWorkingDirectory = true;
      const path = toSlashes(relative(files.root(capture.root).dir, capture.absPath));
      warn(
        `${files.display({ absPath: capture.absPath, root: capture.root, path })} left the working directory (a folder on its way now links elsewhere): not read at the end of turn ${turn.index}`,
      );
    }
  }
}
