/**
 * Byte budget and retention. When the shadow repository is over budget, the
 * refs of the oldest ended sessions are dropped first (live sessions never),
 * then the packs are rewritten keeping only objects reachable from the
 * remaining refs. Objects living in the workspace repository are not ours and
 * are never descended into or deleted.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkpoints, SessionSummary } from './checkpoints.js';
import { parseCommit } from './commit.js';
import { isNotFound } from './fs-util.js';
import { listRefs } from './refs.js';
import type { ShadowStore } from './shadow-store.js';
import { GITLINK_MODE, parseTree } from './tree.js';

/** Total bytes of every file in a directory tree (the shadow repository's size on disk). */
export async function storeSize(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isNotFound(error)) return 0;
    throw error;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) total += await storeSize(full);
    else if (entry.isFile()) total += await stat(full).then((s) => s.size, () => 0);
  }
  return total;
}

/** Options of {@link enforceBudget}. */
export interface EnforceBudgetOptions {
  /** Budget in bytes; the store's configured budget when omitted. */
  budgetBytes?: number;
  /**
   * Objects written or probed within this many milliseconds are kept even if
   * no ref reaches them yet (a checkpoint may be about to reference them).
   * 15 minutes by default.
   */
  graceMs?: number;
}

/** What one retention run did. */
export interface RetentionReport {
  /** The budget applied, in bytes. */
  budgetBytes: number;
  /** Size of the shadow repository before, in bytes. */
  sizeBefore: number;
  /** Size of the shadow repository after, in bytes. */
  sizeAfter: number;
  /** Ended sessions whose refs were dropped, oldest first. */
  droppedSessions: SessionSummary[];
  /** Objects removed from the shadow packs. */
  objectsRemoved: number;
  /** True when the store is still over budget (only live sessions and recent objects remain). */
  overBudget: boolean;
}

/** Everything retention needs from an open store. */
export interface RetentionContext {
  /** The shadow repository. */
  shadowDir: string;
  /** Its object store. */
  objects: ShadowStore;
  /** Its checkpoints. */
  checkpoints: Checkpoints;
}

export const DEFAULT_GRACE_MS = 15 * 60 * 1000;

/**
 * The shadow objects reachable from `roots`, not descending into objects in
 * `stop` (already known to be kept) or objects the shadow store does not hold.
 */
export async function markReachable(objects: ShadowStore, roots: Iterable<string>, stop?: ReadonlySet<string>): Promise<Set<string>> {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const oid = stack.pop()!;
    if (seen.has(oid) || stop?.has(oid) || !objects.isShadowObject(oid)) continue;
    seen.add(oid);
    const object = await objects.readObject(oid);
    if (object.type === 'commit') {
      const commit = parseCommit(object.content, oid);
      stack.push(commit.tree, ...commit.parents);
    } else if (object.type === 'tree') {
      for (const entry of parseTree(object.content, oid)) {
        if (entry.mode === GITLINK_MODE) continue;
        if (entry.kind === 'blob') {
          if (!seen.has(entry.oid) && !stop?.has(entry.oid) && objects.isShadowObject(entry.oid)) seen.add(entry.oid);
        } else {
          stack.push(entry.oid);
        }
      }
    } else if (object.type === 'tag') {
      const target = /^object ([0-9a-f]{40})$/m.exec(Buffer.from(object.content).toString('latin1'));
      if (target) stack.push(target[1]!);
    }
  }
  return seen;
}

function endTime(s: SessionSummary): string {
  return s.endedAt ?? s.lastCheckpointAt ?? '';
}

/** Brings the shadow repository under its byte budget; see the module comment for the policy. */
export async function enforceBudget(ctx: RetentionContext, budgetBytes: number, options: EnforceBudgetOptions = {}): Promise<RetentionReport> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  await ctx.objects.flush();
  const sizeBefore = await storeSize(ctx.shadowDir);
  const report: RetentionReport = { budgetBytes, sizeBefore, sizeAfter: sizeBefore, droppedSessions: [], objectsRemoved: 0, overBudget: false };
  if (sizeBefore <= budgetBytes) return report;

  const markStartedAt = Date.now();
  const sessions = await ctx.checkpoints.listSessions();
  const candidates = sessions.filter((s) => !s.live).sort((a, b) => endTime(a).localeCompare(endTime(b)));
  const candidatePrefixes = new Set(candidates.map((s) => s.refPrefix));
  const allRefs = await listRefs(ctx.shadowDir, 'refs/');
  const keptRoots: string[] = [...ctx.objects.recentlyWritten(graceMs)];
  const rootsBySession = new Map<string, string[]>();
  for (const [ref, oid] of allRefs) {
    const prefix = [...candidatePrefixes].find((p) => ref.startsWith(p));
    if (prefix) rootsBySession.set(prefix, [...(rootsBySession.get(prefix) ?? []), oid]);
    else keptRoots.push(oid);
  }
  const kept = await markReachable(ctx.objects, keptRoots);
  const marksBySession = new Map<string, Set<string>>();
  const holders = new Map<string, number>();
  for (const session of candidates) {
    const marks = await markReachable(ctx.objects, rootsBySession.get(session.refPrefix) ?? [], kept);
    marksBySession.set(session.refPrefix, marks);
    for (const oid of marks) holders.set(oid, (holders.get(oid) ?? 0) + 1);
  }

  // Unreachable objects go whatever happens; then each dropped session frees what only it held.
  let freed = 0;
  for (const oid of ctx.objects.shadowObjectIds()) {
    if (!kept.has(oid) && !holders.has(oid)) freed += await ctx.objects.shadowEntrySize(oid);
  }
  const dropped = new Set<string>();
  for (const session of candidates) {
    if (sizeBefore - freed <= budgetBytes) break;
    dropped.add(session.refPrefix);
    report.droppedSessions.push(session);
    for (const oid of marksBySession.get(session.refPrefix)!) {
      const left = holders.get(oid)! - 1;
      holders.set(oid, left);
      if (left === 0) freed += await ctx.objects.shadowEntrySize(oid);
    }
  }
  for (const prefix of dropped) await ctx.checkpoints.dropSession(prefix);

  const keep = (oid: string): boolean => kept.has(oid) || (holders.get(oid) ?? 0) > 0;
  const result = await ctx.objects.rewritePacks(keep, {
    since: markStartedAt,
    expand: (roots) => markReachable(ctx.objects, roots),
  });
  report.objectsRemoved = result.objectsBefore - result.objectsKept;
  report.sizeAfter = await storeSize(ctx.shadowDir);
  report.overBudget = report.sizeAfter > budgetBytes;
  return report;
}
