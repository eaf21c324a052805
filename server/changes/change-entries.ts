import { relative, sep } from 'node:path';
import { toSlashes } from '../paths.js';
import { ulid } from '../ulid.js';
import { sha256Of } from './content-hash.js';
import type { FileChange } from './file-change.js';

/** What a turn did to one path. */
export type ChangeOperation = 'create' | 'modify' | 'delete' | 'rename';

/** One changed path of a turn, as recorded with its checkpoint. */
export interface ChangeEntry {
  /** ULID of this entry; sorts by creation time. */
  id: string;
  /** The turn that made the change. */
  turnId: string;
  /** The tool named to `beforeEdit` for this path, or `shell` when only a snapshot saw the change. */
  tool: string;
  /** What happened to the path. */
  operation: ChangeOperation;
  /** Path relative to the repository (or working directory) root, `/`-separated; absolute outside every one. */
  path: string;
  /** Previous path of a rename, relative like `path`. */
  oldPath?: string;
  /** SHA-256 (hex) of the content before; absent for creations and oversized files. */
  sha256Before?: string;
  /** SHA-256 (hex) of the content after; absent for deletions and oversized files. */
  sha256After?: string;
  /** Git mode before, e.g. `100644`. */
  modeBefore?: string;
  /** Git mode after. */
  modeAfter?: string;
  /** ISO 8601 time the entry was recorded. */
  timestamp: string;
}

/** Per-turn totals of the change entries. */
export interface ChangeCounts {
  creates: number;
  modifies: number;
  deletes: number;
  renames: number;
  /** Every path the turn touched (both sides of renames), sorted. */
  paths: string[];
}

/** How to name paths and tools when recording entries. */
export interface EntryContext {
  turnId: string;
  /** The root each `FileChange.root` index refers to: the repository top, else the working directory. */
  pathRoots: readonly string[];
  /** The working directory each `FileChange.root` index refers to, when known: where a path root is one, entries share the change's own path strings. */
  workingDirectories?: readonly string[];
  /** Tool names given to `beforeEdit`, by absolute path. */
  tools: ReadonlyMap<string, string>;
  now?: Date;
}

/** Turns the file changes of a turn into change entries. */
export async function recordChangeEntries(changes: readonly FileChange[], ctx: EntryContext): Promise<ChangeEntry[]> {
  const timestamp = (ctx.now ?? new Date()).toISOString();
  const entries: ChangeEntry[] = [];
  for (const change of changes) {
    const entry: ChangeEntry = {
      id: ulid(),
      turnId: ctx.turnId,
      tool: ctx.tools.get(change.absPath) ?? (change.oldAbsPath && ctx.tools.get(change.oldAbsPath)) ?? 'shell',
      operation: operationOf(change),
      path: entryPath(change.absPath, change.path, change.root, ctx),
      timestamp,
    };
    if (change.oldAbsPath) entry.oldPath = entryPath(change.oldAbsPath, change.oldPath, change.root, ctx);
    if (change.before) {
      entry.modeBefore = change.before.mode;
      const hash = await sha256Of(change.before);
      if (hash) entry.sha256Before = hash;
    }
    if (change.after) {
      entry.modeAfter = change.after.mode;
      const hash = await sha256Of(change.after);
      if (hash) entry.sha256After = hash;
    }
    entries.push(entry);
  }
  return entries;
}

/** Totals per operation and the set of touched paths. */
export function countChanges(entries: readonly ChangeEntry[]): ChangeCounts {
  const counts: ChangeCounts = { creates: 0, modifies: 0, deletes: 0, renames: 0, paths: [] };
  const paths = new Set<string>();
  for (const e of entries) {
    if (e.operation === 'create') counts.creates++;
    else if (e.operation === 'modify') counts.modifies++;
    else if (e.operation === 'delete') counts.deletes++;
    else counts.renames++;
    paths.add(e.path);
    if (e.oldPath) paths.add(e.oldPath);
  }
  counts.paths = [...paths].sort();
  return counts;
}

function operationOf(change: FileChange): ChangeOperation {
  switch (change.kind) {
    case 'added':
      return 'create';
    case 'deleted':
      return 'delete';
    case 'renamed':
      return 'rename';
    default:
      return 'modify';
  }
}

function entryPath(absPath: string, relPath: string | undefined, root: number, ctx: EntryContext): string {
  const base = root >= 0 ? ctx.pathRoots[root] : undefined;
  if (!base) return absPath;
  if (relPath !== undefined && sep === '/' && ctx.workingDirectories?.[root] === base) return relPath;
  return toSlashes(relative(base, absPath));
}
