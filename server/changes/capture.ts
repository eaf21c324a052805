import { LeftWorkingDirectoryError, readContained } from '../disk/contained-read.js';
import { displayPathBytes } from '../path-bytes.js';
import type { ObjectStore } from '../store/types.js';
import type { BlobRef, GitMode } from './file-change.js';

/** Captured content of a file at one moment; `undefined` when the path did not exist. */
export type CapturedSide = BlobRef | undefined;

/** Default size above which a captured file is listed as oversized and its content not kept. */
export const DEFAULT_CAPTURE_MAX_BYTES = 2 * 1024 * 1024;

/** Test hook for a server in the test's own process: awaited between naming a path and reading it, so a test swaps a directory exactly there. */
export const captureTestHooks: { beforeRead?: (absPath: string) => Promise<void> } = {};

/**
 * Copies one file's current content into the store, content-addressed.
 * Symlinks are stored as links; directories and other non-files count as
 * absent. Files over `maxBytes` are recorded by size only. The file is read
 * through directories opened from its working directory (one of `roots`)
 * without following symlinks, so a directory swapped for a link to
 * elsewhere cannot put a file from outside into the store: such a path
 * throws {@link LeftWorkingDirectoryError} and nothing is read.
 */
export async function captureFile(roots: readonly string[], absPath: string, store: ObjectStore, maxBytes = DEFAULT_CAPTURE_MAX_BYTES): Promise<CapturedSide> {
  if (captureTestHooks.beforeRead) await captureTestHooks.beforeRead(absPath);
  const found = await readContained(roots, absPath, maxBytes);
  switch (found.kind) {
    case 'missing':
    case 'not-a-file':
      return undefined;
    case 'left-working-directory':
      throw new LeftWorkingDirectoryError(`${displayPathBytes(absPath)} now leads outside the working directories: it was not read`);
    case 'symlink':
      return { oid: await store.writeObject('blob', found.target), mode: '120000', store, size: found.target.length };
    case 'oversized':
      return { oid: '', mode: modeOf(found.stat.mode), store, size: found.stat.size, oversized: true };
    case 'file':
      return { oid: await store.writeObject('blob', found.content), mode: modeOf(found.stat.mode), store, size: found.content.length };
  }
}

function modeOf(mode: number): GitMode {
  return (mode & 0o111) !== 0 ? '100755' : '100644';
}
