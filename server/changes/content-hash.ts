import { createHash } from 'node:crypto';
import { CachingReads } from '../store/caching-reads.js';
import type { BlobRef } from './file-change.js';

/** SHA-256 (hex) of one side's content; undefined for gitlinks and content not stored (oversized). */
export async function sha256Of(ref: BlobRef): Promise<string | undefined> {
  // Gitlinks name a commit of another repository, not content we hold.
  if (ref.oversized || ref.mode === '160000') return undefined;
  if (ref.store instanceof CachingReads) return ref.store.sha256Of(ref.oid);
  return createHash('sha256')
    .update((await ref.store.readObject(ref.oid)).content)
    .digest('hex');
}
