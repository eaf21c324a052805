/**
 * Diffing two trees recursively, descending only into subtrees whose ids
 * differ. This is what changesets are built from.
 */
import { assertOid } from './object-format.js';
import { compareTreeEntries, TreeReader, type TreeEntry } from './tree.js';
import type { ObjectStore } from './types.js';

/** One side of a changed path. */
export interface TreeChangeSide {
  /** Id of the blob (or gitlink commit) at this path. */
  oid: string;
  /** Six-digit octal mode: `100644`, `100755`, `120000` or `160000`. */
  mode: string;
}

/** A path whose content or mode differs between two trees. */
export interface TreeChange {
  /** Slash-separated path from the tree root. */
  path: string;
  /** The entry in the first tree; absent when the path was added. */
  before?: TreeChangeSide;
  /** The entry in the second tree; absent when the path was deleted. */
  after?: TreeChangeSide;
}

/**
 * Every non-tree path that differs between `treeA` and `treeB` (either may be
 * undefined for "empty"), sorted in git's path order. Gitlinks compare by
 * commit id; a file replaced by a directory (or the reverse) is a delete plus
 * adds. Pass a {@link TreeReader} to reuse its cache across calls.
 */
export async function diffTrees(source: ObjectStore | TreeReader, treeA: string | undefined, treeB: string | undefined): Promise<TreeChange[]> {
  if (treeA !== undefined) assertOid(treeA, 'treeA');
  if (treeB !== undefined) assertOid(treeB, 'treeB');
  const reader = source instanceof TreeReader ? source : new TreeReader(source);
  const out: TreeChange[] = [];
  if (treeA !== treeB) await diffLevel(reader, treeA, treeB, '', out);
  return out;
}

const NO_ENTRIES: readonly TreeEntry[] = [];

async function diffLevel(reader: TreeReader, a: string | undefined, b: string | undefined, prefix: string, out: TreeChange[]): Promise<void> {
  const left = a ? await reader.read(a) : NO_ENTRIES;
  const right = b ? await reader.read(b) : NO_ENTRIES;
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const l = left[i];
    const r = right[j];
    const order = !l ? 1 : !r ? -1 : compareTreeEntries(l, r);
    if (order < 0) {
      await emit(reader, l!, undefined, prefix, out);
      i++;
    } else if (order > 0) {
      await emit(reader, undefined, r!, prefix, out);
      j++;
    } else {
      if (l!.oid !== r!.oid || l!.mode !== r!.mode) await emit(reader, l!, r!, prefix, out);
      i++;
      j++;
    }
  }
}

/** Reports one name's change; both sides, when given, have the same name and the same tree-ness. */
async function emit(reader: TreeReader, before: TreeEntry | undefined, after: TreeEntry | undefined, prefix: string, out: TreeChange[]): Promise<void> {
  const entry = (before ?? after)!;
  const path = prefix + entry.name;
  if (entry.kind === 'tree') {
    await diffLevel(reader, before?.oid, after?.oid, `${path}/`, out);
    return;
  }
  const change: TreeChange = { path };
  if (before) change.before = { oid: before.oid, mode: before.mode };
  if (after) change.after = { oid: after.oid, mode: after.mode };
  out.push(change);
}
