import { collectTreeChanges, unreadSide, type RootSource, type RootTrees } from './collect-changes.js';
import type { UnreadFile } from '../snapshot/walker.js';
import type { ObjectStore } from '../store/types.js';
import { classify, type BlobRef, type FileChange } from './file-change.js';

/**
 * The files that differ between a session's start and a later recorded
 * state, kept from one state to the next. Re-diffing the session's start
 * against the working tree at every turn end reads every directory the
 * session ever touched; following each step reads only what that step
 * changed, so a session of hundreds of turns costs what its last turn did.
 *
 * The result equals `collectTreeChanges(start, state)` path by path: for a
 * path the session has not touched, its side at the previous state is its
 * side at the start.
 */
export class SessionDelta {
  /** The state `changed` describes; undefined until the first full diff. */
  private state: readonly RootTrees[] | undefined;
  /** The start `changed` is relative to. */
  private from: readonly RootTrees[] | undefined;
  /** Changed paths (`root`, NUL, `path`), each with its side at the session's start as `before`. */
  private readonly changed = new Map<string, FileChange>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sources: readonly RootSource[],
    private readonly start: () => readonly RootTrees[],
  ) {}

  /** Files changed between the session's start and `current`, in working-directory then path order, renames not paired. */
  changesAt(current: readonly RootTrees[]): Promise<FileChange[]> {
    const next = this.queue.then(() => this.advance(current));
    // The queue must not hold the last answer: it is a list of every file the session changed.
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  private async advance(current: readonly RootTrees[]): Promise<FileChange[]> {
    const start = this.start();
    // Nested repositories turn whole directories into gitlinks and back; follow them with a full diff.
    if (!this.state || this.from !== start || [start, this.state, current].some(hasNested)) {
      this.changed.clear();
      for (const change of await collectTreeChanges(this.sources, start, current)) this.changed.set(keyOf(change), change);
    } else {
      for (const step of await collectTreeChanges(this.sources, this.state, current)) {
        const key = keyOf(step);
        const known = this.changed.get(key);
        const before = known ? known.before : step.before;
        const kind = classify(before, step.after);
        if (!kind) {
          this.changed.delete(key);
          continue;
        }
        const change: FileChange = { kind, root: step.root, path: step.path, absPath: step.absPath };
        if (before) change.before = before;
        if (step.after) change.after = step.after;
        this.changed.set(key, change);
      }
    }
    this.state = current;
    this.from = start;
    const out = [...this.changed.values()].sort(byRootAndPath);
    const unreadSides = out.some((c) => c.before?.unread !== undefined || c.after?.unread !== undefined);
    return unreadSides || hasUnread(start) || hasUnread(current) ? withUnread(out, start, current, this.sources) : out;
  }
}

/** The path itself in the first working directory (no new string for each of the session's files), else prefixed by its index. */
function keyOf(change: FileChange): string {
  return change.root === 0 ? change.path : `${change.root}\0${change.path}`;
}

function byRootAndPath(a: FileChange, b: FileChange): number {
  return a.root - b.root || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

function hasNested(trees: readonly RootTrees[]): boolean {
  return trees.some((t) => t.nested.length > 0);
}

function hasUnread(trees: readonly RootTrees[]): boolean {
  return trees.some((t) => (t.unread?.length ?? 0) > 0);
}

/**
 * Marks each side unread exactly as the state it comes from recorded it (a
 * side kept from an earlier step may carry a stale mark), and gives a file
 * present but never read at the start, or now, its unread side: the states
 * between may not have listed it, and it is neither added nor deleted.
 */
function withUnread(changes: FileChange[], start: readonly RootTrees[], current: readonly RootTrees[], sources: readonly RootSource[]): FileChange[] {
  const unreadAt = (trees: readonly RootTrees[]) => trees.map((t) => new Map((t.unread ?? []).map((u) => [u.path, u] as const)));
  const [atStart, now] = [unreadAt(start), unreadAt(current)];
  const out: FileChange[] = [];
  for (const change of changes) {
    const store = sources[change.root]!.store;
    const before = mark(change.before, atStart[change.root]?.get(change.path), store);
    const after = mark(change.after, now[change.root]?.get(change.path), store);
    const kind = classify(before, after);
    if (!kind) continue;
    const marked: FileChange = { ...change, kind };
    delete marked.before;
    delete marked.after;
    if (before) marked.before = before;
    if (after) marked.after = after;
    out.push(marked);
  }
  return out;
}

function mark(side: BlobRef | undefined, unread: UnreadFile | undefined, store: ObjectStore): BlobRef | undefined {
  if (!side) return unread && !unread.kept ? unreadSide(unread, store) : undefined;
  if (side.oid === '') return unread && !unread.kept ? side : undefined;
  const { unread: _stale, ...rest } = side;
  return unread ? { ...rest, unread: unread.reason } : rest;
}
