/**
 * What a file watcher tells the snapshot engine: the paths touched since the
 * previous snapshot, as a tree the walk follows so that untouched
 * directories are reused without a single system call.
 */

/** A path reported changed, relative to the snapshot root, '/'-separated. */
export interface TouchedPath {
  path: string;
  /** Reported as created (a new directory's contents may have no events of their own). */
  created: boolean;
}

/** Changes since the previous `take`, or why they are not known. */
export type TakenChanges = { touched: TouchedPath[] } | { unknown: string };

/**
 * A source of touched paths. `take` waits until every change made before
 * the call has been reported, then returns the paths touched since the
 * previous `take` and starts a new period. It answers `unknown` when it
 * cannot vouch for a complete list (not watching, events lost, first call).
 */
export interface ChangeFeed {
  take(): Promise<TakenChanges>;
  /** The watch may be blind somewhere (directories moved in): start it afresh. */
  requestRestart(): void;
}

/** A directory or file on the way to touched paths. */
export interface TouchedNode {
  children: Map<string, TouchedNode> | undefined;
  /** Reported as created. */
  created: boolean;
  /** Walk everything below: names here could not be matched to entries. */
  full: boolean;
}

/** A node with nothing touched below: the walk visits the directory's entries but has no events for them. */
export const NOTHING_TOUCHED: TouchedNode = Object.freeze({ children: undefined, created: false, full: false });

/** Names that decide ignore and attribute rules: a change to one re-decides the whole tree. */
const RULE_FILES = new Set(['.gitignore', '.gitattributes']);

/** True when a touched path is an ignore or attributes file. */
export function touchesRules(paths: readonly TouchedPath[]): boolean {
  for (const { path } of paths) {
    const slash = path.lastIndexOf('/');
    if (RULE_FILES.has(slash < 0 ? path : path.slice(slash + 1))) return true;
  }
  return false;
}

/**
 * Builds the tree of touched paths. `fullPaths` (directories the watch may
 * not see into) are walked entirely. A name that did not decode (U+FFFD)
 * cannot be matched to a directory entry, so its parent is walked entirely.
 */
export function buildTouchedTree(paths: readonly TouchedPath[], fullPaths: Iterable<string> = []): TouchedNode {
  const root: TouchedNode = { children: undefined, created: false, full: false };
  const nodeAt = (path: string): TouchedNode | undefined => {
    let node = root;
    for (const name of path.split('/')) {
      if (node.full) return undefined;
      if (name.includes('\uFFFD')) {
        node.full = true;
        return undefined;
      }
      node.children ??= new Map();
      let child = node.children.get(name);
      if (!child) {
        child = { children: undefined, created: false, full: false };
        node.children.set(name, child);
      }
      node = child;
    }
    return node;
  };
  for (const t of paths) {
    const node = nodeAt(t.path);
    if (node && t.created) node.created = true;
  }
  for (const p of fullPaths) {
    const node = p === '' ? root : nodeAt(p);
    if (node) node.full = true;
  }
  return root;
}

/** The touched paths below `prefix` ('dir/sub'), relative to it. */
export function touchedBelow(paths: readonly TouchedPath[], prefix: string): TouchedPath[] {
  const p = prefix + '/';
  const out: TouchedPath[] = [];
  for (const t of paths) if (t.path.startsWith(p)) out.push({ path: t.path.slice(p.length), created: t.created });
  return out;
}

/** True when `path` is touched itself, lies below a touched path, or has touched paths below it. */
export function isTouchedAround(paths: readonly TouchedPath[], path: string): boolean {
  for (const t of paths) {
    if (t.path === path || t.path.startsWith(path + '/') || path.startsWith(t.path + '/')) return true;
  }
  return false;
}
