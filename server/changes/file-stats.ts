import { diffFile, type WorkspaceFileDiff } from '../diff/file-diff.js';
import type { BlobRef, FileChange } from './file-change.js';

/** Line counts of one changed file, or why there are none. */
export interface FileStats {
  added: number;
  deleted: number;
  binary?: true;
  oversized?: true;
}

/** Content of one side of a change; `undefined` when the file does not exist there. */
async function readSide(ref: BlobRef | undefined): Promise<Uint8Array | undefined> {
  if (!ref) return undefined;
  // Gitlinks point at a commit of another repository: show its id, as `git diff` does.
  if (ref.mode === '160000') return Buffer.from(`Subproject commit ${ref.oid}\n`);
  if (ref.oversized) throw new Error('oversized content is not stored');
  return (await ref.store.readObject(ref.oid)).content;
}

/** The full diff of a change, or an `oversized` result when a side's content was not stored. */
export async function diffChange(change: FileChange, options: { context?: number; maxBytes?: number } = {}): Promise<WorkspaceFileDiff> {
  const limit = options.maxBytes;
  if (change.before?.oversized || change.after?.oversized) {
    return {
      kind: 'oversized',
      before: change.before !== undefined,
      after: change.after !== undefined,
      ...(change.before?.size !== undefined ? { beforeSize: change.before.size } : {}),
      ...(change.after?.size !== undefined ? { afterSize: change.after.size } : {}),
      limit: limit ?? 0,
    };
  }
  const [before, after] = await Promise.all([readSide(change.before), readSide(change.after)]);
  return diffFile(before, after, {
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(limit !== undefined ? { maxBytes: limit } : {}),
  });
}

/** Added and deleted lines of a change (`git diff --numstat` semantics). */
export async function statsOf(change: FileChange, cache?: Map<string, FileStats>): Promise<FileStats> {
  const key = `${change.before?.oid ?? '-'}:${change.after?.oid ?? '-'}`;
  const hit = cache?.get(key);
  if (hit) return hit;
  const diff = await diffChange(change, { context: 0 });
  const stats: FileStats =
    diff.kind === 'text'
      ? { added: diff.added, deleted: diff.removed }
      : diff.kind === 'binary'
        ? { added: 0, deleted: 0, binary: true }
        : { added: 0, deleted: 0, oversized: true };
  cache?.set(key, stats);
  return stats;
}
