import type { RootTrees } from '../changes/collect-changes.js';
import type { UnreadFile, UnreadReason } from '../snapshot/walker.js';

/**
 * The files each working directory had but did not read in one recorded
 * state, as the journal stores them (one list per working directory).
 * Trees cannot say it — a file never read has no entry — and without it a
 * restarted session would take such a file for added or deleted.
 */
export type UnreadLists = UnreadFile[][];

/** The lists of a state, or undefined when it read everything (nothing is stored then). */
export function unreadListsOf(trees: readonly RootTrees[]): UnreadLists | undefined {
  if (!trees.some((t) => (t.unread?.length ?? 0) > 0)) return undefined;
  return trees.map((t) => (t.unread ?? []).map((u) => ({ path: u.path, reason: u.reason, kept: u.kept, ...(u.size !== undefined ? { size: u.size } : {}) })));
}

/** The trees with their lists put back; entries that are not well-formed are dropped (journals can come from an imported mirror). */
export function withUnreadLists(trees: RootTrees[], stored: unknown): RootTrees[] {
  if (!Array.isArray(stored)) return trees;
  return trees.map((t, i) => {
    const list = Array.isArray(stored[i]) ? (stored[i] as unknown[]).filter(isUnreadFile) : [];
    return list.length > 0 ? { ...t, unread: list } : t;
  });
}

const REASONS: readonly UnreadReason[] = ['unreadable', 'oversized', 'not-a-file'];

function isUnreadFile(value: unknown): value is UnreadFile {
  if (typeof value !== 'object' || value === null) return false;
  const u = value as Partial<UnreadFile>;
  return (
    typeof u.path === 'string' &&
    u.path.length > 0 &&
    REASONS.includes(u.reason as UnreadReason) &&
    typeof u.kept === 'boolean' &&
    (u.size === undefined || (typeof u.size === 'number' && Number.isSafeInteger(u.size) && u.size >= 0))
  );
}
