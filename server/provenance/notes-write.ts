/**
 * Git notes under `refs/notes/ai` in the user's repository, written without
 * a git binary: the only place this server writes into a workspace
 * repository, and only with `serve --notes`. One write is one pack (the note
 * blobs, the notes trees and a notes commit whose parent is the ref's
 * current commit, written with the store's pack writer: both files fsynced,
 * renamed into place index last) followed by a compare-and-swap of the ref
 * under git's own lock protocol (`refs/notes/ai.lock` created exclusively,
 * the ref re-read and compared, the new value renamed over it). A note
 * already attached to a commit — by another tool or by us — is never
 * replaced: that commit is skipped, as the Git AI Standard asks.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { serializeCommit } from '../store/commit.js';
import { hashObject } from '../store/object-format.js';
import { writePack, type PackSource } from '../store/pack-writer.js';
import { parseTree, serializeTree, type NewTreeEntry } from '../store/tree.js';
import type { ObjectStore } from '../store/types.js';
import { fsyncDirectory } from '../private-files.js';
import { resolveRef, type GitRepositoryLocation } from '../snapshot/index.js';
import { parseCommit } from '../store/commit.js';

/** The notes ref the Git AI Standard names. */
const AI_NOTES_REF = 'refs/notes/ai';

/** What one write did. */
interface NotesWriteResult {
  /** Commits that got a note. */
  written: string[];
  /** Commits that already had one, left as they were. */
  skipped: string[];
  /** Commits whose note was removed. */
  removed: string[];
  /** The notes commit the ref now points at (unchanged when nothing was written). */
  notesCommit: string | undefined;
}

/** The ref was moved by someone else while we wrote, three times running. */
class NotesRefBusyError extends Error {}

/** The note attached to `commit` under `refs/notes/ai`, or undefined. */
export async function readNote(repo: GitRepositoryLocation, store: ObjectStore, commit: string): Promise<string | undefined> {
  const notesCommit = resolveRef(repo, AI_NOTES_REF);
  if (!notesCommit) return undefined;
  const tree = parseCommit((await store.readObject(notesCommit)).content, notesCommit).tree;
  const found = await findNote(store, tree, commit);
  return found ? Buffer.from((await store.readObject(found)).content).toString('utf8') : undefined;
}

/** The blob of `commit`'s note in a notes tree: flat (`<40 hex>`) or fanned out (`ab/<38 hex>`, any depth). */
async function findNote(store: ObjectStore, tree: string, commit: string, prefix = ''): Promise<string | undefined> {
  for (const entry of parseTree((await store.readObject(tree)).content, tree)) {
    const name = prefix + entry.name;
    if (entry.kind === 'tree' && /^[0-9a-f]{2}$/.test(entry.name) && commit.startsWith(name)) {
      const inner = await findNote(store, entry.oid, commit, name);
      if (inner) return inner;
    } else if (entry.kind !== 'tree' && name === commit) {
      return entry.oid;
    }
  }
  return undefined;
}

/**
 * Attaches `notes` (commit → text) and removes the notes of `remove`, in one
 * notes commit. Commits that already carry a note are skipped.
 */
export async function writeNotes(
  repo: GitRepositoryLocation,
  store: ObjectStore,
  notes: ReadonlyMap<string, string>,
  remove: readonly string[] = [],
  message = 'Notes added by changeset-server',
): Promise<NotesWriteResult> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = resolveRef(repo, AI_NOTES_REF);
    const objects: PackSource[] = [];
    const add = (type: 'blob' | 'tree' | 'commit', content: Buffer): string => {
      const oid = hashObject(type, content);
      objects.push({ kind: 'object', oid, type, content });
      return oid;
    };
    const root = before ? parseCommit((await store.readObject(before)).content, before).tree : undefined;
    const result: NotesWriteResult = { written: [], skipped: [], removed: [], notesCommit: before };
    const edited = await editLevel(store, root, '', notes, new Set(remove), result, add);
    if (result.written.length === 0 && result.removed.length === 0) return result;
    const commit = add('commit', serializeCommit(edited, before ? [before] : [], message, new Date()));
    await writePack(join(repo.objectsDir, 'pack'), objects, objects.length);
    if (await swapRef(repo, before, commit)) return { ...result, notesCommit: commit };
    await sleep(50 * (attempt + 1));
  }
  throw new NotesRefBusyError(`${AI_NOTES_REF} kept changing while the notes were written`);
}

/** One level of the notes tree with the notes added and removed; returns the new tree id. */
async function editLevel(
  store: ObjectStore,
  tree: string | undefined,
  prefix: string,
  notes: ReadonlyMap<string, string>,
  remove: ReadonlySet<string>,
  result: NotesWriteResult,
  add: (type: 'blob' | 'tree' | 'commit', content: Buffer) => string,
): Promise<string> {
  const entries: NewTreeEntry[] = [];
  const fanouts = new Map<string, string>();
  const present = new Set<string>();
  for (const e of tree ? parseTree((await store.readObject(tree)).content, tree) : []) {
    if (e.kind === 'tree' && /^[0-9a-f]{2}$/.test(e.name)) fanouts.set(e.name, e.oid);
    else {
      const commit = prefix + e.name;
      if (remove.has(commit) && !notes.has(commit)) {
        result.removed.push(commit);
        continue;
      }
      present.add(commit);
      entries.push({ mode: e.mode, name: e.name, oid: e.oid });
    }
  }
  // Notes and removals that fall under a fan-out directory this level already has go there.
  for (const [dir, oid] of fanouts) {
    const under = (c: string) => c.startsWith(prefix + dir);
    const sub = new Map([...notes].filter(([c]) => under(c)));
    const subRemove = new Set([...remove].filter(under));
    const edited = sub.size > 0 || subRemove.size > 0 ? await editLevel(store, oid, prefix + dir, sub, subRemove, result, add) : oid;
    entries.push({ mode: '040000', name: dir, oid: edited });
  }
  for (const [commit, text] of notes) {
    if (!commit.startsWith(prefix) || fanouts.has(commit.slice(prefix.length, prefix.length + 2))) continue;
    if (present.has(commit)) {
      result.skipped.push(commit);
      continue;
    }
    entries.push({ mode: '100644', name: commit.slice(prefix.length), oid: add('blob', Buffer.from(text, 'utf8')) });
    result.written.push(commit);
  }
  return add('tree', serializeTree(entries));
}

/** Moves the ref from `expected` to `next` under git's lock file; false when it no longer held `expected`. */
async function swapRef(repo: GitRepositoryLocation, expected: string | undefined, next: string): Promise<boolean> {
  const refPath = join(repo.commonDir, ...AI_NOTES_REF.split('/'));
  const lockPath = `${refPath}.lock`;
  // As git makes it: the user's repository keeps the user's modes.
  await mkdir(join(repo.commonDir, 'refs', 'notes'), { recursive: true });
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(lockPath, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    if (resolveRef(repo, AI_NOTES_REF) !== expected) {
      await handle.close();
      await rm(lockPath, { force: true });
      return false;
    }
    await handle.writeFile(`${next}\n`);
    await handle.sync();
    await handle.close();
    await rename(lockPath, refPath);
    await fsyncDirectory(join(repo.commonDir, 'refs', 'notes'));
    return true;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(lockPath, { force: true });
    throw error;
  }
}
