import { lstat, readFile, readlink } from 'node:fs/promises';
import { displayPathBytes, fsPath } from '../path-bytes.js';
import type { ObjectStore } from '../store/types.js';
import type { BlobRef, GitMode } from './file-change.js';

/** Captured content of a file at one moment; `undefined` when the path did not exist. */
export type CapturedSide = BlobRef | undefined;

/** Default size above which a captured file is listed as oversized and its content not kept. */
export const DEFAULT_CAPTURE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Copies one file's current content into the store, content-addressed.
 * Symlinks are stored as links; directories and other non-files count as
 * absent. Files over `maxBytes` are recorded by size only.
 */
export async function captureFile(absPath: string, store: ObjectStore, maxBytes = DEFAULT_CAPTURE_MAX_BYTES): Promise<CapturedSide> {
  const path = fsPath(absPath);
  for (let attempt = 0; attempt < 3; attempt++) {
    let st;
    try {
      st = await lstat(path);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    if (st.isSymbolicLink()) {
      const target = Buffer.from(await readlink(path, { encoding: 'buffer' }));
      return { oid: await store.writeObject('blob', target), mode: '120000', store, size: target.length };
    }
    if (!st.isFile()) return undefined;
    const mode: GitMode = (st.mode & 0o111) !== 0 ? '100755' : '100644';
    if (st.size > maxBytes) return { oid: '', mode, store, size: st.size, oversized: true };
    const content = await readFile(path);
    // A file rewritten while it was read is read again, so the capture is one consistent version.
    const after = await lstat(path).catch(() => undefined);
    if (after && after.size === content.length && after.mtimeMs === st.mtimeMs) {
      return { oid: await store.writeObject('blob', content), mode, store, size: content.length };
    }
  }
  throw new Error(`${displayPathBytes(absPath)} kept changing while it was captured`);
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
