import { formatChangesetUri, type FileHistoryEntry, type FileHistoryParams, type FileHistoryResult } from '../../protocol/index.js';
import { sessionFileParamsProblem } from '../../protocol/validate/checks.js';
import type { RootTrees } from '../changes/collect-changes.js';
import { classify, type BlobRef, type FileChange, type GitMode } from '../changes/file-change.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { fileUri } from '../file-uri.js';
import type { SessionManager } from '../session/session-manager.js';
import { namedFile } from './named-file.js';

/** Most entries one answer carries (the newest are kept). */
export const MAX_HISTORY_ENTRIES = 500;

/** A version of the file in one recorded state: its blob and mode, or undefined where it did not exist. */
type Version = { oid: string; mode: string } | undefined;

/**
 * `fileHistory`: every turn and step of a session that changed one file,
 * oldest first. Read from the recorded states of each turn (its start, the
 * checkpoint before each step, its end) by looking the one path up in
 * their trees — no tree is diffed — and counting lines only for the
 * changes found. A state's lookup is shared by the turn that ends in it
 * and the one that starts from it.
 */
export async function fileHistory(sessions: SessionManager, params: FileHistoryParams): Promise<FileHistoryResult> {
  const session = sessions.require(params.session);
  const { absPath, root, rel } = namedFile(session, params.path);
  const source = session.files.source(root);
  const known = new Map<string, Promise<Version>>();
  const versionIn = (trees: readonly RootTrees[] | undefined): Promise<Version> => {
    const at = trees?.[root];
    if (!at) return Promise.resolve(undefined);
    // The innermost nested repository holding the path, else the working directory's own tree.
    const nested = at.nested.filter((n) => rel.startsWith(`${n.path}/`)).sort((a, b) => b.path.length - a.path.length)[0];
    const tree = nested ? nested.tree : at.tree;
    const path = nested ? rel.slice(nested.path.length + 1) : rel;
    const key = `${tree} ${path}`;
    let found = known.get(key);
    if (!found) {
      found = lookupPath(source.reader, tree, path).then((e) => (e && !/^0?40000$/.test(e.mode) ? e : undefined));
      known.set(key, found);
    }
    return found;
  };

  const id = fileUri(absPath);
  const entries: FileHistoryEntry[] = [];
  let last: Version | null = null;
  for (const turn of session.turns) {
    if (!turn.after) continue;
    const number = session.turns.indexOf(turn) + 1;
    // The turn's states in order: its start, the checkpoint before each step, its end; step i runs from the i-th checkpoint to the next.
    const states: { trees: readonly RootTrees[]; step?: number; tool?: string; at: string }[] = [{ trees: turn.before, at: turn.startedAt }];
    for (const step of turn.steps ?? []) states.push({ trees: step.trees, step: step.index, ...(step.tool ? { tool: step.tool } : {}), at: step.at });
    states.push({ trees: turn.after, at: turn.startedAt });
    let before = await versionIn(states[0]!.trees);
    for (let i = 1; i < states.length; i++) {
      const after = await versionIn(states[i]!.trees);
      if (!sameVersion(before, after)) {
        // The change from state i-1 to state i belongs to the step that state i-1 is the checkpoint of (none before the first step).
        const from = states[i - 1]!;
        const beforeRef = blobRef(source.store, before);
        const afterRef = blobRef(source.store, after);
        const kind = classify(beforeRef, afterRef) ?? 'modified';
        const change: FileChange = { kind, root, path: rel, absPath };
        if (beforeRef) change.before = beforeRef;
        if (afterRef) change.after = afterRef;
        const stats = await session.files.stats(change);
        const entry: FileHistoryEntry = {
          turn: number,
          turnId: turn.id,
          ...(from.step !== undefined ? { step: from.step } : {}),
          ...(from.tool !== undefined ? { tool: from.tool } : {}),
          at: from.at,
          kind,
          added: stats.added,
          removed: stats.deleted,
          ...(before ? { beforeOid: before.oid } : {}),
          ...(after ? { afterOid: after.oid } : {}),
          ...(stats.binary ? { binary: true as const } : {}),
          ...(last !== null && !sameVersion(last, before) ? { editedBefore: true as const } : {}),
          changeset: formatChangesetUri(
            from.step !== undefined
              ? { sessionId: session.id, kind: 'step', turnId: turn.id, step: from.step }
              : { sessionId: session.id, kind: 'turn', turnId: turn.id },
          ),
          fileId: id,
        };
        entries.push(entry);
        last = after;
      }
      before = after;
    }
  }
  const limit = Math.min(params.limit ?? MAX_HISTORY_ENTRIES, MAX_HISTORY_ENTRIES);
  const kept = entries.length > limit ? entries.slice(entries.length - limit) : entries;
  return {
    path: session.files.display({ absPath, root, path: rel }),
    entries: kept,
    ...(kept.length < entries.length ? { truncated: true as const } : {}),
  };
}

/** Checks `fileHistory`'s params: the first problem, or undefined. */
export function checkFileHistoryParams(params: unknown): string | undefined {
  const problem = sessionFileParamsProblem(params);
  if (problem !== undefined) return problem;
  const limit = (params as Record<string, unknown>)['limit'];
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) return 'params.limit must be an integer from 1';
  return undefined;
}

function blobRef(store: BlobRef['store'], version: Version): BlobRef | undefined {
  return version ? { oid: version.oid, mode: version.mode as GitMode, store } : undefined;
}

function sameVersion(a: Version, b: Version): boolean {
  return a === b || (a !== undefined && b !== undefined && a.oid === b.oid && a.mode === b.mode);
}
