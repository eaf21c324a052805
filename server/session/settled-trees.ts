import { relative, sep } from 'node:path';
import type { RootTrees } from '../changes/collect-changes.js';
import type { GitMode } from '../changes/file-change.js';
import { serializeTree, type NewTreeEntry, type TreeReader } from '../store/tree.js';
import type { ObjectStore } from '../store/types.js';

/** A file an operation wrote: its new content, or none when it deleted the file. */
export interface WrittenFile {
  absPath: string;
  /** Working-directory index, -1 outside every one (not in any tree). */
  root: number;
  content?: Uint8Array;
  mode?: GitMode;
}

/** What the recorded trees are built from for one working directory. */
interface TreeSource {
  dir: string;
  store: ObjectStore;
  reader: TreeReader;
}

type Edit = { oid: string; mode: GitMode } | null;

const TREE_MODE = '040000';

/**
 * The recorded state `base` with exactly the operation's writes applied:
 * the paths it wrote, with the content it wrote, and nothing else of the
 * workspace. Automatic turns start from it, so the server's own writes are
 * never an edit, while anything else that changed still is. Undefined when
 * a write lands in a nested repository (its own tree): take a snapshot then.
 */
export async function treesWithWrites(
  sources: readonly TreeSource[],
  base: readonly RootTrees[],
  writes: readonly WrittenFile[],
): Promise<RootTrees[] | undefined> {
  const out: RootTrees[] = [];
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i]!;
    const trees = base[i];
    if (!trees) return undefined;
    const edits: [string[], Edit][] = [];
    for (const w of writes) {
      if (w.root !== i) continue;
      const rel = relative(source.dir, w.absPath).split(sep).join('/');
      if (trees.nested.some((n) => rel === n.path || rel.startsWith(`${n.path}/`))) return undefined;
      const oid = w.content && w.mode ? await source.store.writeObject('blob', w.content) : undefined;
      edits.push([rel.split('/'), oid && w.mode ? { oid, mode: w.mode } : null]);
    }
    if (edits.length === 0) {
      out.push(trees);
      continue;
    }
    const tree = (await editTree(source, trees.tree, edits)) ?? (await source.store.writeObject('tree', serializeTree([])));
    out.push({ tree, nested: trees.nested });
  }
  return out;
}

/** Writes the tree `oid` with the edits applied (paths as segments); undefined when nothing is left in it. */
async function editTree(source: TreeSource, oid: string | undefined, edits: readonly [string[], Edit][]): Promise<string | undefined> {
  const entries = new Map<string, NewTreeEntry>();
  for (const e of oid ? await source.reader.read(oid) : []) entries.set(e.name, { name: e.name, mode: e.mode, oid: e.oid });
  const below = new Map<string, [string[], Edit][]>();
  for (const [segments, edit] of edits) {
    const [name, ...rest] = segments as [string, ...string[]];
    if (rest.length === 0) {
      if (edit) entries.set(name, { name, mode: edit.mode, oid: edit.oid });
      else entries.delete(name);
    } else {
      below.set(name, [...(below.get(name) ?? []), [rest, edit]]);
    }
  }
  for (const [name, sub] of below) {
    const existing = entries.get(name);
    const subtree = await editTree(source, existing?.mode === TREE_MODE ? existing.oid : undefined, sub);
    if (subtree) entries.set(name, { name, mode: TREE_MODE, oid: subtree });
    else entries.delete(name);
  }
  if (entries.size === 0) return undefined;
  return source.store.writeObject('tree', serializeTree([...entries.values()]));
}
