/**
 * What a commit of the workspace repository added, read without a git
 * binary: the commit (through the session's store, which reads the
 * workspace repository's objects in place), its diff against its first
 * parent file by file, and for each text file the lines the commit added
 * (git's histogram line diff, as `git diff` counts them).
 */
import { diffLines } from '../../diff/line-diff.js';
import { splitLines } from '../../diff/lines.js';
import { isBinary } from '../diff/binary.js';
import { parseCommit } from '../store/commit.js';
import { diffTrees } from '../store/tree-diff.js';
import type { TreeReader } from '../store/tree.js';
import type { ObjectStore } from '../store/types.js';

/** A commit as people name it. */
export interface CommitInfo {
  oid: string;
  tree: string;
  parents: string[];
  /** The first line of its message. */
  summary: string;
  /** Its whole message. */
  message: string;
  /** `Name <email>` of its author. */
  author: string;
  /** The raw author line (`Name <email> seconds zone`): a rebase keeps it, so it pairs a commit with its rewrite. */
  authorLine: string;
  /** Author time, ISO 8601. */
  at: string;
}

/** A text file a commit changed, with the lines it added. */
export interface CommittedFile {
  /** `/`-separated path from the top of the repository. */
  path: string;
  /** The committed blob. */
  oid: string;
  /** The committed file's lines (each with its terminator), read as Latin-1 so every byte is kept. */
  lines: string[];
  /** Line numbers (1-based, ascending) the commit added against its first parent. */
  added: number[];
}

/** Reads a commit. */
export async function readCommit(store: ObjectStore, oid: string): Promise<CommitInfo> {
  const c = parseCommit((await store.readObject(oid)).content, oid);
  const summary = c.message.split('\n', 1)[0]!.trim();
  const m = /^(.*?) (\d+) ([+-]\d{4})$/.exec(c.author);
  const at = m ? new Date(Number(m[2]) * 1000).toISOString() : '';
  return { oid, tree: c.tree, parents: c.parents, summary, message: c.message, author: m ? m[1]! : c.author, authorLine: c.author, at };
}

/** Blob contents read as Latin-1 lines. */
export function blobLines(content: Uint8Array): string[] {
  return splitLines(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1'));
}

/**
 * The text files `commit` changed against its first parent (every file for
 * a root commit), each with the lines it added. Binary files, deletions,
 * submodules and symbolic links are left out.
 */
export async function committedFiles(store: ObjectStore, reader: TreeReader, commit: CommitInfo): Promise<CommittedFile[]> {
  const parent = commit.parents[0] === undefined ? undefined : (await readCommit(store, commit.parents[0])).tree;
  const out: CommittedFile[] = [];
  for (const change of await diffTrees(reader, parent, commit.tree)) {
    const after = change.after;
    if (!after?.mode.startsWith('100')) continue;
    const content = (await store.readObject(after.oid)).content;
    if (isBinary(content)) continue;
    const lines = blobLines(content);
    let before: string[] = [];
    if (change.before?.mode.startsWith('100')) {
      const old = (await store.readObject(change.before.oid)).content;
      if (isBinary(old)) continue;
      before = blobLines(old);
    }
    const added: number[] = [];
    for (const c of diffLines(before, lines)) for (let i = c.newStart; i < c.newEnd; i++) added.push(i + 1);
    if (added.length > 0) out.push({ path: change.path, oid: after.oid, lines, added });
  }
  return out;
}

/**
 * For each line of `to`, the line of `from` it is (1-based), or 0 when the
 * line diff says it is new: how attribution follows a file from one version
 * to the next.
 */
export function lineMapping(from: readonly string[], to: readonly string[]): Int32Array {
  const map = new Int32Array(to.length);
  let i = 0;
  let j = 0;
  for (const c of diffLines(from, to)) {
    while (j < c.newStart) map[j++] = ++i;
    i = c.oldEnd;
    j = c.newEnd;
  }
  while (j < to.length) map[j++] = ++i;
  return map;
}
