/**
 * Who wrote the lines a file already held when recording began: a blame
 * walk over the workspace repository's history, read with the store's own
 * object reading (the store falls back to the workspace repository's
 * objects; no git binary). The walk follows first parents from the commit
 * that was `HEAD` when the session started, diffing each version of the
 * file against its parent's, and stops after {@link MAX_COMMITS} commits.
 */
import { relative, sep } from 'node:path';
import { ByteLines } from '../../diff/byte-lines.js';
import type { BeforeRecordingAuthor } from '../../protocol/extensions/provenance.js';
import { lookupPath } from '../changes/tree-lookup.js';
import { isBinary } from '../diff/binary.js';
import type { RecordingSession } from '../session/recording-session.js';
import { resolveRef } from '../snapshot/index.js';
import { parseCommit, type CommitObject } from '../store/commit.js';
import { blameDiff } from './line-authors.js';

/** Most commits one walk reads; lines older than that are before recording without a commit. */
export const MAX_COMMITS = 1000;

const NOT_COMMITTED = 'not committed';
const NO_REPOSITORY = 'not in a git repository';
const CAPPED = `history older than ${MAX_COMMITS.toLocaleString('en-US')} commits not read`;

/** A commit as provenance names it. */
type CommitInfo = NonNullable<BeforeRecordingAuthor['commit']>;

/**
 * The author of each line of `lines` (the file when recording began, at
 * `absPath` in working directory `root`): the commit that last changed it,
 * or why there is none.
 */
export async function beforeRecordingAuthors(
  session: RecordingSession,
  root: number,
  absPath: string,
  lines: ByteLines,
  since: string,
): Promise<BeforeRecordingAuthor[]> {
  const out: BeforeRecordingAuthor[] = new Array(lines.length);
  const none = (reason: string): BeforeRecordingAuthor => ({ kind: 'before-recording', reason });
  const repo = session.files.root(root).repository;
  if (!repo) return out.fill(none(NO_REPOSITORY));
  const { store, reader } = session.files.source(root);
  const path = relative(repo.workTree, absPath).split(sep).join('/');
  const sinceMs = Date.parse(since);

  const readCommit = async (oid: string): Promise<CommitObject | undefined> => {
    try {
      return parseCommit((await store.readObject(oid)).content, oid);
    } catch {
      return undefined; // a shallow clone's boundary, or an object gone
    }
  };
  const blobAt = async (tree: string): Promise<ByteLines | undefined> => {
    const entry = await lookupPath(reader, tree, path).catch(() => undefined);
    if (!entry || entry.mode === '40000' || entry.mode === '040000' || entry.mode === '160000') return undefined;
    const content = (await store.readObject(entry.oid)).content;
    return isBinary(content) ? undefined : new ByteLines(content);
  };

  // The commit HEAD was on when the session started: later commits may hold what the session wrote.
  let oid = resolveRef(repo, 'HEAD');
  let commit = oid ? await readCommit(oid) : undefined;
  for (let skipped = 0; commit && oid && commitTime(commit.committer) > sinceMs && skipped < MAX_COMMITS; skipped++) {
    oid = commit.parents[0];
    commit = oid ? await readCommit(oid) : undefined;
  }
  const head = commit ? await blobAt(commit.tree) : undefined;
  if (!commit || !oid || !head) return out.fill(none(NOT_COMMITTED));

  // pending[k]: the line of `lines` that line k of the current commit's version is; -1 when no line of `lines` is.
  let pending = new Int32Array(head.length).fill(-1);
  let left = 0;
  mapKept(head, lines, (h, l) => {
    pending[h] = l;
    left++;
  });
  const mark = (k: number, author: BeforeRecordingAuthor) => {
    if (pending[k]! >= 0) {
      out[pending[k]!] = author;
      left--;
    }
  };
  let version = head;
  let at: { oid: string; commit: CommitObject } = { oid, commit };
  for (let n = 0; left > 0; n++) {
    const parentOid: string | undefined = at.commit.parents[0];
    const parent: CommitObject | undefined = parentOid && n + 1 < MAX_COMMITS ? await readCommit(parentOid) : undefined;
    const capped = parentOid !== undefined && n + 1 >= MAX_COMMITS;
    const older = parent ? await blobAt(parent.tree) : undefined;
    if (!older) {
      // The commit that made the file (or the last one read): every line left is its own, or past the cap.
      const author: BeforeRecordingAuthor = capped ? none(CAPPED) : { kind: 'before-recording', commit: commitInfo(at.oid, at.commit) };
      for (let k = 0; k < pending.length; k++) mark(k, author);
      break;
    }
    const next = new Int32Array(older.length).fill(-1);
    const kept = new Uint8Array(version.length);
    mapKept(older, version, (o, v) => {
      next[o] = pending[v]!;
      kept[v] = 1;
    });
    const author: BeforeRecordingAuthor = { kind: 'before-recording', commit: commitInfo(at.oid, at.commit) };
    for (let k = 0; k < pending.length; k++) if (!kept[k]) mark(k, author);
    pending = next;
    version = older;
    at = { oid: parentOid!, commit: parent! };
  }
  for (let k = 0; k < out.length; k++) out[k] ??= none(NOT_COMMITTED);
  return out;
}

/** Calls `pair(a, b)` for every line the diff from `a` to `b` keeps. */
function mapKept(a: ByteLines, b: ByteLines, pair: (a: number, b: number) => void): void {
  if (a.length === 0 || b.length === 0) return;
  let i = 0;
  let j = 0;
  for (const c of blameDiff(a, b)) {
    for (; i < c.oldStart; i++, j++) pair(i, j);
    i = c.oldEnd;
    j = c.newEnd;
  }
  for (; i < a.length; i++, j++) pair(i, j);
}

/** Seconds since the epoch of an `author` or `committer` value (`Name <email> seconds zone`), in ms. */
function commitTime(who: string): number {
  const m = /(\d+) [+-]\d{4}$/.exec(who);
  return m ? Number(m[1]) * 1000 : 0;
}

function commitInfo(oid: string, commit: { author: string; message: string }): CommitInfo {
  const name = /^(.*?) </.exec(commit.author)?.[1] ?? commit.author;
  return { oid, summary: commit.message.split('\n')[0] ?? '', author: name, at: new Date(commitTime(commit.author)).toISOString() };
}
