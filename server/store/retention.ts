/**
 * Byte budget and retention. Ended sessions older than the age limit go, and
 * while the shadow repository is over budget the oldest ended sessions go
 * (live sessions never); the packs are then rewritten keeping only objects
 * reachable from the remaining refs, in the same pass. A session is only
 * dropped when that rewrite removes objects it alone held: history is never
 * forgotten without the space coming back. Objects living in the workspace
 * repository are not ours and are never descended into or deleted.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkpoints, StoredSession } from './checkpoints.js';
import { parseCommit } from './commit.js';
import { isNotFound } from '../private-files.js';
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
    else if (entry.isFile())
      total += await stat(full).then(
        (s) => s.size,
        () => 0,
      );
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
  /** Ended sessions that ended longer ago than this many milliseconds are dropped even within budget. */
  maxAgeMs?: number;
  /**
   * Objects kept with everything they reach, whatever the refs say: the trees
   * a snapshotter's stat cache names, so its cached ids stay valid.
   */
  keepRoots?: readonly string[];
  /**
   * Called once the pass knows it has work to do, before it marks anything:
   * the moment to write out state that names objects (a stat cache file
   * whose trees are in `keepRoots`).
   */
  beforeCollect?: () => Promise<void>;
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
  droppedSessions: StoredSession[];
  /** Of those, the ones dropped for their age rather than the budget. */
  expiredSessions: number;
  /**
   * Ended sessions that would have been dropped but were kept because they
   * hold nothing that could be removed now (all of it shared or too recent).
   */
  sessionsKept: number;
  /** Objects removed from the shadow packs. */
  objectsRemoved: number;
  /** Shadow packs before and after. */
  packsBefore: number;
  packsAfter: number;
  /** True when the store is still over budget (only live sessions and recent objects remain). */
  overBudget: boolean;
  /** True when the pass had work to do (over budget, or sessions past the age limit) and rewrote the packs. */
  collected: boolean;
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

const DEFAULT_GRACE_MS = 15 * 60 * 1000;

/**
 * The shadow objects reachable from `roots`, not descending into objects in
 * `stop` (already known to be kept) or objects the shadow store does not hold.
 */
async function markReachable(objects: ShadowStore, roots: Iterable<string>, stop?: ReadonlySet<string>): Promise<Set<string>> {
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

function endTime(s: StoredSession): string {
  return s.endedAt ?? s.lastCheckpointAt ?? '';
}

/** Brings the shadow repository under its byte budget and age limit; see the module comment for the policy. */
export async function enforceBudget(ctx: RetentionContext, budgetBytes: number, options: EnforceBudgetOptions = {}): Promise<RetentionReport> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  await ctx.objects.flush();
  const sizeBefore = await storeSize(ctx.shadowDir);
  const packsBefore = ctx.objects.packCount;
  const report: RetentionReport = {
    budgetBytes,
    sizeBefore,
    sizeAfter: sizeBefore,
    droppedSessions: [],
    expiredSessions: 0,
    sessionsKept: 0,
    objectsRemoved: 0,
    packsBefore,
    packsAfter: packsBefore,
    overBudget: false,
    collected: false,
  };
  const markStartedAt = Date.now();
  const sessions = await ctx.checkpoints.listSessions();
  const ended = sessions.filter((s) => !s.live).sort((a, b) => endTime(a).localeCompare(endTime(b)));
  const expiresBefore = options.maxAgeMs !== undefined ? new Date(markStartedAt - options.maxAgeMs).toISOString() : '';
  const expired = ended.filter((s) => endTime(s) < expiresBefore);
  if (sizeBefore <= budgetBytes && expired.length === 0) return report;

  await options.beforeCollect?.();
  const marks = await markSessions(ctx, ended, [...ctx.objects.recentlyWritten(graceMs), ...(options.keepRoots ?? [])]);
  // Unreachable objects go whatever happens; then each dropped session frees what only it held.
  let freed = 0;
  for (const oid of ctx.objects.shadowObjectIds()) {
    if (!marks.kept.has(oid) && !marks.holders.has(oid)) freed += await ctx.objects.shadowEntrySize(oid);
  }
  const expiredPrefixes = new Set(expired.map((s) => s.refPrefix));
  const dropped: StoredSession[] = [];
  for (const session of ended) {
    const isExpired = expiredPrefixes.has(session.refPrefix);
    if (!isExpired && sizeBefore - freed <= budgetBytes) break;
    const own = marks.bySession.get(session.refPrefix)!;
    const alone = [...own].filter((oid) => marks.holders.get(oid) === 1);
    if (alone.length === 0) {
      // Dropping it would forget history and free nothing; it stays until it does.
      report.sessionsKept++;
      continue;
    }
    dropped.push(session);
    if (isExpired) report.expiredSessions++;
    for (const oid of own) marks.holders.set(oid, marks.holders.get(oid)! - 1);
    for (const oid of alone) freed += await ctx.objects.shadowEntrySize(oid);
  }
  for (const session of dropped) await ctx.checkpoints.dropSession(session.refPrefix);
  report.droppedSessions = dropped;

  const keep = (oid: string): boolean => marks.kept.has(oid) || (marks.holders.get(oid) ?? 0) > 0;
  const result = await ctx.objects.rewritePacks(keep, {
    since: markStartedAt,
    expand: (roots) => markReachable(ctx.objects, roots),
  });
  report.collected = true;
  report.objectsRemoved = result.objectsBefore - result.objectsKept;
  report.packsAfter = ctx.objects.packCount;
  report.sizeAfter = await storeSize(ctx.shadowDir);
  report.overBudget = report.sizeAfter > budgetBytes;
  return report;
}

/** What the refs and the protected roots reach: `kept` always stays; `bySession` is what each ended session reaches beyond it. */
interface SessionMarks {
  kept: Set<string>;
  bySession: Map<string, Set<string>>;
  /** Object id → number of ended sessions reaching it (outside `kept`). */
  holders: Map<string, number>;
}

async function markSessions(ctx: RetentionContext, ended: readonly StoredSession[], protectedRoots: readonly string[]): Promise<SessionMarks> {
  const endedPrefixes = ended.map((s) => s.refPrefix);
  const keptRoots: string[] = [...protectedRoots];
  const rootsBySession = new Map<string, string[]>();
  for (const [ref, oid] of await listRefs(ctx.shadowDir, 'refs/')) {
    const prefix = endedPrefixes.find((p) => ref.startsWith(p));
    if (prefix) rootsBySession.set(prefix, [...(rootsBySession.get(prefix) ?? []), oid]);
    else keptRoots.push(oid);
  }
  const kept = await markReachable(ctx.objects, keptRoots);
  const bySession = new Map<string, Set<string>>();
  const holders = new Map<string, number>();
  for (const prefix of endedPrefixes) {
    const reached = await markReachable(ctx.objects, rootsBySession.get(prefix) ?? [], kept);
    bySession.set(prefix, reached);
    for (const oid of reached) holders.set(oid, (holders.get(oid) ?? 0) + 1);
  }
  return { kept, bySession, holders };
}
