import type { TreeReader } from '../store/tree.js';

/** The entry at a `/`-separated path inside a tree, or undefined when there is none. */
export async function lookupPath(reader: TreeReader, tree: string, path: string): Promise<{ oid: string; mode: string } | undefined> {
  const parts = path.split('/');
  let current = tree;
  for (let i = 0; i < parts.length; i++) {
    const entries = await reader.read(current);
    const entry = entries.find((e) => e.name === parts[i]);
    if (!entry) return undefined;
    if (i === parts.length - 1) return { oid: entry.oid, mode: entry.mode };
    if (entry.kind !== 'tree') return undefined;
    current = entry.oid;
  }
  return undefined;
}
