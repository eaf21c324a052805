import type { RootTrees } from '../changes/collect-changes.js';

/** True when two recorded states name the same trees (nested repositories included). */
export function sameTrees(a: readonly RootTrees[] | undefined, b: readonly RootTrees[] | undefined): boolean {
  if (!a || !b || a.length !== b.length) return false;
  return a.every((root, i) => {
    const other = b[i]!;
    if (root.tree !== other.tree || root.nested.length !== other.nested.length) return false;
    return root.nested.every((n, j) => n.path === other.nested[j]!.path && n.tree === other.nested[j]!.tree);
  });
}
