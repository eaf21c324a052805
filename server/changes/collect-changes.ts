import { join, sep } from 'node:path';
import { diffTrees, type TreeChange, type TreeChangeSide } from '../store/tree-diff.js';
import type { TreeReader } from '../store/tree.js';
import type { UnreadFile } from '../snapshot/walker.js';
import type { ObjectStore } from '../store/types.js';
import { classify, type BlobRef, type FileChange, type GitMode } from './file-change.js';

/** A recorded state of one working directory: its tree and its nested repositories' trees. */
export interface RootTrees {
  /** Tree id of the working directory. */
  tree: string;
  /** Nested repositories, by path relative to the working directory. */
  nested: { path: string; tree: string }[];
  /**
   * Files present but not read when this state was recorded, by path
   * relative to the working directory (nested repositories' included); known
   * for states recorded by this process only.
   */
  unread?: readonly UnreadFile[];
}

/** Where one working directory's objects are read. */
export interface RootSource {
  /** Absolute path of the working directory. */
  dir: string;
  store: ObjectStore;
  reader: TreeReader;
}

/**
 * Every file that differs between two recorded states of the session's
 * working directories. Changes inside nested repositories are listed with
 * their full path instead of the gitlink that git alone would show.
 */
export async function collectTreeChanges(
  roots: readonly RootSource[],
  before: readonly (RootTrees | undefined)[],
  after: readonly (RootTrees | undefined)[],
): Promise<FileChange[]> {
  const out: FileChange[] = [];
  for (let i = 0; i < roots.length; i++) {
    const root = roots[i]!;
    const a = before[i];
    const b = after[i];
    const nestedA = new Map((a?.nested ?? []).map((n) => [n.path, n.tree]));
    const nestedB = new Map((b?.nested ?? []).map((n) => [n.path, n.tree]));
    const nestedPaths = new Set([...nestedA.keys(), ...nestedB.keys()]);
    const inBoth = [...nestedPaths].filter((p) => nestedA.has(p) && nestedB.has(p));
    const covered = (path: string): boolean => nestedPaths.has(path) || inBoth.some((n) => path.startsWith(`${n}/`));
    const unread = { before: unreadByPath(a), after: unreadByPath(b) };

    for (const change of await diffTrees(root.reader, a?.tree, b?.tree)) {
      if (covered(change.path)) continue;
      push(out, i, root, change, '', unread);
    }
    for (const path of [...nestedPaths].sort()) {
      const ta = nestedA.get(path);
      const tb = nestedB.get(path);
      if (ta === tb) continue;
      for (const change of await diffTrees(root.reader, ta, tb)) push(out, i, root, change, `${path}/`, unread);
    }
  }
  return out;
}

type UnreadSides = { before: Map<string, UnreadFile>; after: Map<string, UnreadFile> };

function unreadByPath(trees: RootTrees | undefined): Map<string, UnreadFile> {
  return new Map((trees?.unread ?? []).map((u) => [u.path, u]));
}

/**
 * The side of a file that was present but never read in a state (over the
 * size limit, unreadable, not a regular file): its tree has no entry, yet
 * it is not absent. Its content is not known, so nothing is shown or
 * written from it; with it, the file is never taken as added or deleted.
 */
export function unreadSide(u: UnreadFile, store: ObjectStore): BlobRef {
  return { oid: '', mode: '100644', store, oversized: true, unread: u.reason, ...(u.size !== undefined ? { size: u.size } : {}) };
}

function push(out: FileChange[], rootIndex: number, root: RootSource, change: TreeChange, prefix: string, unread: UnreadSides): void {
  const path = prefix + change.path;
  const before = side(change.before, root.store, unread.before.get(path));
  const after = side(change.after, root.store, unread.after.get(path));
  const kind = classify(before, after);
  if (!kind) return;
  const fc: FileChange = { kind, root: rootIndex, path, absPath: absolutePath(root.dir, path) };
  if (before) fc.before = before;
  if (after) fc.after = after;
  out.push(fc);
}

/**
 * `join(dir, path)` for a tree path (`/`-separated, no `.` or `..` parts).
 * `join` builds its result a piece at a time and the pieces live as long as
 * the result: ~300 bytes a path where the concatenation shares `dir` and
 * `path` in two small nodes; a session keeps one for every file it changed.
 */
function absolutePath(dir: string, path: string): string {
  if (sep !== '/') return join(dir, path);
  return dir.endsWith('/') ? dir + path : `${dir}/${path}`;
}

function side(s: TreeChangeSide | undefined, store: ObjectStore, unread: UnreadFile | undefined): BlobRef | undefined {
  if (!s) return unread && !unread.kept ? unreadSide(unread, store) : undefined;
  return unread ? { oid: s.oid, mode: s.mode as GitMode, store, unread: unread.reason } : { oid: s.oid, mode: s.mode as GitMode, store };
}
