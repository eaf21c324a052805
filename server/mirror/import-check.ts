/**
 * Everything an import would copy, checked before anything is copied: a
 * mirror is someone else's data. Ref names must be the ones a store
 * writes; every checkpoint must be a checkpoint of the session its refs
 * name; every tree reachable from one is read as `git fsck` reads it
 * (`tree-entry-check.ts`), every object it names must have come with the
 * pack (one fetch without `have`s brings all it reaches); paths the checkpoints
 * record must stay in the directory they were recorded in. The first
 * problem refuses the whole import, naming the path and what is wrong.
 */
import { isAbsolute } from 'node:path';
import { parseCheckpointMessage, sessionRefs, SESSIONS_PREFIX, type CheckpointTrailer } from '../store/checkpoint-format.js';
import { parseCommit } from '../store/commit.js';
import { CorruptObjectError } from '../store/errors.js';
import { isOid, type AnyObjectType } from '../store/object-format.js';
import { BadTreeEntryError, checkTreeEntries } from '../store/tree-entry-check.js';
import type { StoredObject } from '../store/types.js';
import { quotedName, refusedPath } from '../git-path.js';
import { isInsideDir } from '../paths.js';
import { SESSION_START_REASON } from '../session/session-journal.js';
import { refusedImport, type ImportError } from './import-limits.js';
import { storedCommentsProblem } from '../comments/stored.js';
import type { PackContents } from './pack-intake.js';

/** Where the checked objects are read and what is known of them. */
export interface MirrorObjects {
  /** What the fetched pack holds, by id. */
  packed: PackContents;
  /** Reads an object of the pack. */
  read(oid: string): Promise<StoredObject>;
}

/** A session that passed every check, with what to copy. */
export interface CheckedSession {
  prefix: string;
  sessionId: string;
  /** Its refs, without the remote's `ended` and `imported` markers (import writes its own). */
  refs: Map<string, string>;
  turns: number;
  /** When it ended: the remote's end marker's time, else its last checkpoint's. */
  endedAt: string;
}

/** What {@link checkMirroredSessions} found. */
export interface CheckedMirror {
  sessions: CheckedSession[];
  /** Sessions the import leaves out, with why (not an error in the mirror). */
  leftOut: { sessionId: string; reason: string }[];
}

/** The directories a checkpoint may name: the mirrored one (moved on import) and the local one. */
export interface CheckedDirs {
  mirrored: string;
  local: string;
}

const SESSION_PREFIX = /^refs\/changeset-server\/sessions\/[A-Za-z0-9_%-]+\/$/;
const COMPONENT = '[A-Za-z0-9_%-]+';
const LEAF = new RegExp(`^(?:head|ended|imported|comments|turns/\\d{6}-${COMPONENT}/(?:start|end|entries)|safety/\\d{6}|steps/\\d{6}-${COMPONENT}/\\d{6})$`);

/** Checks the sessions of `groups` (ref prefix → refs) that `isPresent` does not already report; throws {@link ImportError} at the first problem. */
export async function checkMirroredSessions(
  groups: ReadonlyMap<string, ReadonlyMap<string, string>>,
  objects: MirrorObjects,
  dirs: CheckedDirs,
  isPresent: (headRef: string) => Promise<boolean>,
): Promise<CheckedMirror & { present: string[] }> {
  const checker = new MirrorChecker(objects, dirs);
  const out: CheckedMirror & { present: string[] } = { sessions: [], leftOut: [], present: [] };
  for (const [prefix, refs] of groups) {
    const checked = await checker.session(prefix, refs, isPresent);
    if ('present' in checked) out.present.push(checked.present);
    else if ('leftOut' in checked) out.leftOut.push(checked.leftOut);
    else out.sessions.push(checked);
  }
  return out;
}

class MirrorChecker {
  private readonly checkedTrees = new Set<string>();
  private readonly checkedCommits = new Set<string>();

  constructor(
    private readonly objects: MirrorObjects,
    private readonly dirs: CheckedDirs,
  ) {}

  async session(
    prefix: string,
    refs: ReadonlyMap<string, string>,
    isPresent: (headRef: string) => Promise<boolean>,
  ): Promise<CheckedSession | { present: string } | { leftOut: { sessionId: string; reason: string } }> {
    const where = `the session under ${prefix.slice(SESSIONS_PREFIX.length, -1)}`;
    if (!SESSION_PREFIX.test(prefix)) throw refused(where, 'has a name a store never writes');
    for (const name of refs.keys()) {
      if (!LEAF.test(name.slice(prefix.length))) throw refused(where, `has a ref a store never writes (${name.slice(prefix.length)})`);
    }
    const head = refs.get(`${prefix}head`);
    if (!head) throw refused(where, 'has no head (its latest checkpoint)');
    const trailer = await this.checkpoint(head, where);
    const sessionId = trailer.sessionId;
    const label = `session ${sessionId}`;
    if (sessionRefs(sessionId).prefix !== prefix) throw refused(label, `is listed under another session's name (${prefix.slice(SESSIONS_PREFIX.length, -1)})`);
    if (await isPresent(`${prefix}head`)) return { present: sessionId };

    const copied = new Map<string, string>();
    let endedAt = trailer.createdAt;
    let leftOut: string | undefined;
    for (const [name, oid] of refs) {
      const leaf = name.slice(prefix.length);
      if (leaf === 'imported') continue;
      if (leaf === 'ended') {
        endedAt = (await this.endedTime(oid, label)) ?? endedAt;
        continue;
      }
      if (leaf === 'comments') await this.commentsBlob(oid, `${label}, its review comments`, sessionId);
      else if (leaf.endsWith('/entries')) await this.entriesBlob(oid, `${label}, the change list of ${leaf.split('/')[1]}`);
      else leftOut ??= await this.chain(oid, sessionId, label);
      copied.set(name, oid);
    }
    if (leftOut) return { leftOut: { sessionId, reason: leftOut } };
    const turns = [...refs.keys()].filter((n) => /\/turns\/[^/]+\/start$/.test(n)).length;
    return { prefix, sessionId, refs: copied, turns, endedAt };
  }

  /** Checks a checkpoint and its ancestors; returns why the session is left out, if it is. */
  private async chain(tip: string, sessionId: string, label: string): Promise<string | undefined> {
    let leftOut: string | undefined;
    for (let oid: string | undefined = tip; oid !== undefined && !this.checkedCommits.has(oid); ) {
      const trailer = await this.checkpoint(oid, label);
      if (trailer.sessionId !== sessionId) throw refused(label, `holds a checkpoint of another session (${trailer.sessionId})`);
      const where = `${label}, ${checkpointName(trailer)}`;
      const commit = parseCommit((await this.objects.read(oid)).content, oid);
      await this.checkpointTree(commit.tree, trailer, where);
      if (trailer.entries !== undefined) await this.entriesBlob(trailer.entries, where);
      leftOut ??= this.details(trailer, where);
      this.checkedCommits.add(oid);
      oid = commit.parents[0];
    }
    return leftOut;
  }

  /** A commit of the pack that is a checkpoint with one parent at most; its trailer. */
  private async checkpoint(oid: string, where: string): Promise<CheckpointTrailer> {
    this.expect(oid, 'commit', where, 'a checkpoint');
    const commit = parseCommit((await this.objects.read(oid)).content, oid);
    if (!isOid(commit.tree) || commit.parents.length > 1 || !commit.parents.every(isOid))
      throw refused(where, `has a checkpoint that is not one this version writes (${oid})`);
    try {
      return parseCheckpointMessage(commit.message, oid);
    } catch (error) {
      if (error instanceof CorruptObjectError) throw refused(where, error.message);
      throw error;
    }
  }

  /** The roots a checkpoint names, and where the session says it was recorded. */
  private details(trailer: CheckpointTrailer, where: string): string | undefined {
    for (const root of trailer.roots) {
      if (typeof root?.name !== 'string' || refusedPath(root.name) || root.name.includes('/'))
        throw refused(where, `names a root ${JSON.stringify(root?.name)} no store writes`);
      if (root.name.startsWith('nested-')) {
        const path = root.path;
        if (typeof path !== 'string' || isAbsolute(path) || path.split('/').some((c) => c === '..') || refusedPath(path)) {
          throw refused(where, `names a nested repository at ${JSON.stringify(path)}, which is not a path inside the working directory`);
        }
      }
    }
    const details = trailer.details as { workingDirectories?: unknown; paths?: unknown } | undefined;
    if (trailer.kind === 'safety' && Array.isArray(details?.paths)) {
      for (const p of details.paths as unknown[]) this.recordedPath(p, where);
    }
    if (trailer.kind === 'safety' && trailer.reason === SESSION_START_REASON) {
      const named = details?.workingDirectories;
      if (!Array.isArray(named) || !named.every((d) => typeof d === 'string')) throw refused(where, 'does not say which directory it was recorded in');
      if (named.length > 1) return `recorded over ${named.length} directories (${named.join(', ')}); import brings sessions of one directory`;
    }
    return undefined;
  }

  /** A file a checkpoint recorded by absolute path: in working directory 0 it must lie inside the recorded directory. */
  private recordedPath(value: unknown, where: string): void {
    const p = value as { absPath?: unknown; root?: unknown } | null;
    if (typeof p?.absPath !== 'string' || (p.root !== -1 && p.root !== 0)) throw refused(where, 'records a file in a way no store writes');
    if (p.root === 0 && !isInsideDir(this.dirs.mirrored, p.absPath) && !isInsideDir(this.dirs.local, p.absPath)) {
      throw refused(where, `records ${JSON.stringify(p.absPath)} as inside the working directory (${this.dirs.mirrored}), which it is not`);
    }
  }

  /** A turn's change list: a JSON blob whose captured files are recorded like the others. */
  private async entriesBlob(oid: string, where: string): Promise<void> {
    this.expect(oid, 'blob', where, 'a change list');
    let journal: { captures?: unknown } | null;
    try {
      journal = JSON.parse(Buffer.from((await this.objects.read(oid)).content).toString('utf8')) as { captures?: unknown } | null;
    } catch {
      throw refused(where, 'has a change list that is not JSON');
    }
    if (Array.isArray(journal?.captures)) for (const c of journal.captures as unknown[]) this.recordedPath(c, where);
  }

  /** The session's review comments: a JSON blob of exactly the shape a store writes (sizes capped, every string checked). */
  private async commentsBlob(oid: string, where: string, sessionId: string): Promise<void> {
    this.expect(oid, 'blob', where, 'its review comments');
    const problem = storedCommentsProblem((await this.objects.read(oid)).content, sessionId);
    if (problem) throw refused(where, `the list ${problem}`);
  }

  private async endedTime(oid: string, where: string): Promise<string | undefined> {
    this.expect(oid, 'blob', where, 'an end marker');
    try {
      const marker = JSON.parse(Buffer.from((await this.objects.read(oid)).content).toString('utf8')) as { endedAt?: unknown } | null;
      const at = marker?.endedAt;
      return typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? new Date(at).toISOString() : undefined;
    } catch {
      return undefined;
    }
  }

  /** Every tree under a checkpoint's root tree, checked as `git fsck` does, depth first without recursion (a mirror can nest deep). */
  private async checkpointTree(root: string, trailer: CheckpointTrailer, where: string): Promise<void> {
    const stack: { oid: string; path: string }[] = [{ oid: root, path: '' }];
    const rootNames = new Map(trailer.roots.map((r) => [r.name, r]));
    while (stack.length > 0) {
      const { oid, path } = stack.pop()!;
      if (this.checkedTrees.has(oid)) continue;
      this.expect(oid, 'tree', where, path ? `the directory ${quotedName(path)}` : 'its files');
      let entries;
      try {
        entries = checkTreeEntries((await this.objects.read(oid)).content);
      } catch (error) {
        if (!(error instanceof BadTreeEntryError)) throw error;
        const name = error.entryName === undefined ? path : `${path}${error.entryName}`;
        throw refused(where, `${quotedName(displayPath(name, trailer, rootNames))} ${error.problem}`);
      }
      for (const entry of entries) {
        const entryPath = `${path}${entry.name}`;
        if (entry.kind === 'tree') stack.push({ oid: entry.oid, path: `${entryPath}/` });
        else if (entry.kind === 'blob') this.expect(entry.oid, 'blob', where, quotedName(displayPath(entryPath, trailer, rootNames)));
      }
      this.checkedTrees.add(oid);
    }
  }

  private expect(oid: string, type: AnyObjectType, where: string, what: string): void {
    const found = this.objects.packed.get(oid);
    if (!found) throw refused(where, `names ${what} (${oid}) the mirror did not send`);
    if (found.type !== type) throw refused(where, `names ${what} (${oid}), which is a ${found.type}, not a ${type}`);
  }
}

function refused(where: string, problem: string): ImportError {
  return refusedImport(`in ${where}, ${problem}`);
}

function checkpointName(t: CheckpointTrailer): string {
  if (t.kind === 'safety') return t.reason === SESSION_START_REASON ? 'its start' : `safety checkpoint ${t.safetyIndex ?? '?'} (${t.reason ?? 'an operation'})`;
  if (t.kind === 'step') return `turn ${t.turnIndex ?? '?'}, before step ${t.step ?? '?'}`;
  return `turn ${t.turnIndex ?? '?'} (${t.kind === 'start' ? 'its start' : 'its end'})`;
}

/** A path in a checkpoint tree as the user knows it: a multi-root tree's first component is the root, not a directory of theirs. */
function displayPath(path: string, trailer: CheckpointTrailer, roots: ReadonlyMap<string, { name: string; path?: string }>): string {
  if (trailer.layout !== 'multi') return path;
  const slash = path.indexOf('/');
  const first = slash < 0 ? path : path.slice(0, slash);
  const rest = slash < 0 ? '' : path.slice(slash + 1);
  const root = roots.get(first);
  if (first === 'workspace') return rest || '.';
  if (first === 'captures') return `a captured file (${rest})`;
  return root?.path ? `${root.path}/${rest}` : path;
}
