import { signatureSimilarity, spanSignature, type SpanSignature } from '../diff/similarity.js';
import type { FileChange } from './file-change.js';

/** Options of {@link detectRenames}. */
export interface RenameOptions {
  /** Minimum similarity for a rename; git's default is 0.5. */
  threshold?: number;
  /**
   * Most deleted × added pairs compared by content (default 100,000); above
   * it only exact renames are found, as git's `diff.renameLimit` does.
   */
  maxPairs?: number;
  /** Blobs larger than this are only paired exactly. */
  maxBytes?: number;
}

const DEFAULT_MAX_PAIRS = 100_000;
const DEFAULT_MAX_BYTES = 1024 * 1024;

/**
 * Pairs deleted and added files of the same working directory into renames:
 * identical content first, then the most similar pairs at or above the
 * threshold, each file used at most once. Returns a new list; every other
 * change is kept as it was.
 */
export async function detectRenames(changes: readonly FileChange[], opts: RenameOptions = {}): Promise<FileChange[]> {
  const threshold = opts.threshold ?? 0.5;
  const deleted = changes.filter((c) => c.kind === 'deleted' && isBlob(c.before?.mode) && !c.before?.oversized);
  const added = changes.filter((c) => c.kind === 'added' && isBlob(c.after?.mode) && !c.after?.oversized);
  if (deleted.length === 0 || added.length === 0) return [...changes];

  const pairs = new Map<FileChange, { from: FileChange; score: number }>();
  const usedFrom = new Set<FileChange>();

  // Exact renames: the same object id on both sides.
  const byOid = new Map<string, FileChange[]>();
  for (const d of deleted) {
    const list = byOid.get(`${d.root}:${d.before!.oid}`) ?? [];
    list.push(d);
    byOid.set(`${d.root}:${d.before!.oid}`, list);
  }
  for (const a of added) {
    const candidates = byOid.get(`${a.root}:${a.after!.oid}`);
    const from = candidates?.find((d) => !usedFrom.has(d));
    if (from) {
      usedFrom.add(from);
      pairs.set(a, { from, score: 1 });
    }
  }

  const restDeleted = deleted.filter((d) => !usedFrom.has(d));
  const restAdded = added.filter((a) => !pairs.has(a));
  if (restDeleted.length * restAdded.length <= (opts.maxPairs ?? DEFAULT_MAX_PAIRS)) {
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    const load = cachedLoader(maxBytes);
    const scored: { from: FileChange; to: FileChange; score: number }[] = [];
    for (const d of restDeleted) {
      const a0 = await load(d, 'before');
      if (!a0) continue;
      for (const a of restAdded) {
        if (a.root !== d.root) continue;
        const b0 = await load(a, 'after');
        if (!b0) continue;
        // Sizes too far apart cannot reach the threshold.
        if (Math.min(a0.size, b0.size) < threshold * Math.max(a0.size, b0.size)) continue;
        const score = signatureSimilarity(a0, b0);
        if (score >= threshold) scored.push({ from: d, to: a, score });
      }
    }
    scored.sort((x, y) => y.score - x.score || x.to.path.localeCompare(y.to.path));
    for (const s of scored) {
      if (usedFrom.has(s.from) || pairs.has(s.to)) continue;
      usedFrom.add(s.from);
      pairs.set(s.to, { from: s.from, score: s.score });
    }
  }

  const out: FileChange[] = [];
  for (const change of changes) {
    if (usedFrom.has(change)) continue;
    const pair = pairs.get(change);
    if (!pair) {
      out.push(change);
      continue;
    }
    out.push({
      ...change,
      kind: 'renamed',
      oldPath: pair.from.path,
      oldAbsPath: pair.from.absPath,
      before: pair.from.before!,
      similarity: pair.score,
    });
  }
  return out;
}

function isBlob(mode: string | undefined): boolean {
  return mode === '100644' || mode === '100755' || mode === '120000';
}

/** Loads each blob once and keeps its span signature, so every pair costs one comparison. */
function cachedLoader(maxBytes: number) {
  const cache = new Map<string, SpanSignature | undefined>();
  return async (change: FileChange, which: 'before' | 'after'): Promise<SpanSignature | undefined> => {
    const ref = change[which]!;
    if (ref.size !== undefined && ref.size > maxBytes) return undefined;
    if (cache.has(ref.oid)) return cache.get(ref.oid);
    const object = await ref.store.readObject(ref.oid);
    const signature = object.content.length > maxBytes ? undefined : spanSignature(object.content);
    cache.set(ref.oid, signature);
    return signature;
  };
}
