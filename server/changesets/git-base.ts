/**
 * What the `uncommitted` and `branch` changesets compare against: the tree
 * of HEAD, and of the merge-base with the base branch. Refs are read from
 * the workspace repository directly (read-only); objects through the store.
 */
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { lookupPath } from '../changes/tree-lookup.js';
import { EMPTY_TREE_OID, resolveRef, type GitRepositoryLocation } from '../snapshot/index.js';
import { parseCommit } from '../store/commit.js';
import type { TreeReader } from '../store/tree.js';
import type { ObjectStore } from '../store/types.js';

/** The branch HEAD is on (`main`), or undefined when detached. */
function currentBranch(repo: GitRepositoryLocation): string | undefined {
  const head = readText(join(repo.gitDir, 'HEAD'))?.trim();
  return head?.startsWith('ref: refs/heads/') ? head.slice('ref: refs/heads/'.length) : undefined;
}

/** The base branch a `branch` changeset compares against, and the ref naming it. */
export interface BaseBranch {
  /** Short name shown to users, e.g. `origin/main`. */
  name: string;
  /** Full ref, e.g. `refs/remotes/origin/main`. */
  ref: string;
  /** The commit it points at. */
  commit: string;
}

/**
 * The base branch: the upstream of the current branch, else `origin/HEAD`,
 * `main`, `master` — the first that exists and is not the current branch
 * itself (a branch is never its own base, unless it is its upstream's copy).
 */
export function findBaseBranch(repo: GitRepositoryLocation): BaseBranch | undefined {
  const branch = currentBranch(repo);
  const candidates: string[] = [];
  if (branch) {
    const upstream = upstreamOf(repo, branch);
    if (upstream) candidates.push(upstream);
  }
  const originHead = readText(join(repo.commonDir, 'refs/remotes/origin/HEAD'))?.trim();
  if (originHead?.startsWith('ref: ')) candidates.push(originHead.slice(5).trim());
  candidates.push('refs/heads/main', 'refs/heads/master');
  for (const ref of candidates) {
    if (branch && ref === `refs/heads/${branch}`) continue;
    const commit = resolveRef(repo, ref);
    if (commit) return { name: shortName(ref), ref, commit };
  }
  return undefined;
}

/** The upstream ref of a branch from the repository config (`branch.<name>.remote` / `.merge`). */
function upstreamOf(repo: GitRepositoryLocation, branch: string): string | undefined {
  const config = readText(join(repo.commonDir, 'config'));
  if (!config) return undefined;
  let inSection = false;
  let remote: string | undefined;
  let merge: string | undefined;
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    const section = /^\[\s*branch\s+"(.*)"\s*\]$/.exec(line);
    if (section) {
      inSection = section[1] === branch;
      continue;
    }
    if (line.startsWith('[')) {
      inSection = false;
      continue;
    }
    if (!inSection) continue;
    const kv = /^(\w+)\s*=\s*(.*)$/.exec(line);
    if (kv?.[1]?.toLowerCase() === 'remote') remote = kv[2]!.trim();
    if (kv?.[1]?.toLowerCase() === 'merge') merge = kv[2]!.trim();
  }
  if (!merge) return undefined;
  if (!remote || remote === '.') return merge;
  return merge.startsWith('refs/heads/') ? `refs/remotes/${remote}/${merge.slice('refs/heads/'.length)}` : undefined;
}

/** The tree a commit records for the working directory (a subdirectory of the repository when it is one). */
export async function commitTreeFor(
  store: ObjectStore,
  reader: TreeReader,
  commit: string,
  repo: GitRepositoryLocation,
  workingDirectory: string,
): Promise<string> {
  const { tree } = parseCommit((await store.readObject(commit)).content, commit);
  const prefix = relative(repo.workTree, workingDirectory).split(sep).join('/');
  if (prefix === '') return tree;
  const entry = await lookupPath(reader, tree, prefix);
  return entry && entry.mode === '040000' ? entry.oid : EMPTY_TREE_OID;
}

/**
 * The best common ancestor of two commits: walks both histories breadth
 * first and returns the first commit of `b`'s history that `a` reaches.
 * Bounded so a huge history cannot stall a subscription.
 */
export async function mergeBase(store: ObjectStore, a: string, b: string, limit = 200_000): Promise<string | undefined> {
  const reachable = new Set<string>();
  for await (const oid of ancestors(store, a, limit)) reachable.add(oid);
  for await (const oid of ancestors(store, b, limit)) if (reachable.has(oid)) return oid;
  return undefined;
}

async function* ancestors(store: ObjectStore, start: string, limit: number): AsyncGenerator<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  for (let i = 0; i < queue.length && i < limit; i++) {
    const oid = queue[i]!;
    yield oid;
    let parents: string[];
    try {
      parents = parseCommit((await store.readObject(oid)).content, oid).parents;
    } catch {
      continue; // a shallow clone's boundary
    }
    for (const parent of parents) {
      if (!seen.has(parent)) {
        seen.add(parent);
        queue.push(parent);
      }
    }
  }
}

function shortName(ref: string): string {
  for (const prefix of ['refs/heads/', 'refs/remotes/']) if (ref.startsWith(prefix)) return ref.slice(prefix.length);
  return ref;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
