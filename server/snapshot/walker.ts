/**
 * The walk: one pass over the working directory that reuses everything the
 * stat cache proves unchanged (directory listings by directory mtime, blob
 * ids by file stat data, tree ids by unchanged entries) and hashes only the
 * rest. File system calls are synchronous on purpose: on a warm cache a
 * synchronous lstat costs a fraction of a libuv round trip (see
 * docs/performance.md); the walk yields to the event loop every few
 * milliseconds so the process stays responsive.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, readFileSync, readSync, readdirSync, readlinkSync, type Dirent } from 'node:fs';
import { decodePathBytes } from '../path-bytes.js';
import { liteLstat, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, type LiteStat } from './fast-lstat.js';
import type { ObjectStore, ObjectType } from '../store/types.js';
import { compareTreeNames, encodeTree, hashObject, MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_SYMLINK, MODE_TREE, type TreeEntryInput } from './git-objects.js';
import { readHeadCommit, resolveDotGit } from './git-repository.js';
import { IGNORED_BY_EXTRA, IGNORED_BY_GIT, NOT_IGNORED, parseIgnoreFile, type IgnoreStack } from './ignore-rules.js';
import type { CachedTree, IndexSeed, SeedDirectory } from './index-file.js';
import type { LstatPrefetch } from './lstat-prefetch.js';
import { isLfsPointer, lfsPointer } from './lfs-attributes.js';
import { LeftRootError, openInside } from './open-inside.js';
import { parseAttributes, type AttributeStack } from './git-attributes.js';
import { cleanClass, cleanContent, convertsNothing, crlfAction, EOL_AUTO, EOL_KEEP } from './eol-conversion.js';
import { conversionKey, parseConversionKey } from './conversion-key.js';
import { encodeToGit, identToGit } from './content-conversion.js';
import type { CoreSettings } from './git-config.js';
import type { IndexLookup } from './index-lookup.js';
import {
  KIND_DIR,
  KIND_FILE,
  KIND_OTHER,
  KIND_SYMLINK,
  STATUS_IGNORED,
  STATUS_INCLUDED,
  STATUS_TRACKED_ONLY,
  type CachedEntry,
  type DirState,
} from './stat-cache.js';
import { NOTHING_TOUCHED, type TouchedNode } from './touched-paths.js';
import type { UnreadReason } from '../../protocol/extensions/changeset-file.js';
import type { DirListing, ListingSource } from './given-listings.js';

/** A path on disk: a string, or raw bytes below a name that is not valid UTF-8. */
export type FsPath = string | Buffer;

/** A problem with one path that did not stop the snapshot. */
export interface SnapshotWarning {
  /** Path relative to the snapshot root, '/'-separated. */
  path: string;
  /** What happened, for a person to read. */
  message: string;
}

export type { UnreadReason };

/**
 * A file whose content could not be read when the snapshot was taken. It is
 * not a deletion: the tree keeps the content last read (`kept`), or, for a
 * file never read before, leaves it out.
 */
export interface UnreadFile {
  /** Path relative to the snapshot root, '/'-separated. */
  path: string;
  /** `unreadable`: reading failed (EACCES, EPERM, EIO…); `oversized`: over `maxFileBytes`; `not-a-file`: now a FIFO, socket or device. */
  reason: UnreadReason;
  /** Size on disk, for oversized files. */
  size?: number;
  /** The tree holds the content last read. */
  kept: boolean;
}

/** Test and instrumentation hooks. */
export interface SnapshotHooks {
  /**
   * Called after a file was stat'ed and before its content is read, with the
   * path relative to the root. Lets tests change a file mid-walk.
   */
  beforeRead?(path: string): void;
}

/** Counters of one walk. */
export interface WalkCounters {
  /** Files (and symlinks) whose content was read and hashed. */
  hashed: number;
  /** Files whose id came from the stat cache. */
  reusedFromCache: number;
  /** Files whose id came from the repository index. */
  seededFromIndex: number;
  /** Trees encoded (the others kept their previous id). */
  treesWritten: number;
  /** Entries whose stat data was too recent to be trusted next time. */
  racy: number;
  /** Directories whose listing was read (the others reused the cached one). */
  dirsRead: number;
  /** Directories whose listing was given (read by the file watcher as it set itself up, unchanged since). */
  dirsGiven: number;
}

/** A nested repository met during the walk. */
export interface NestedFound {
  /** Path relative to the snapshot root, '/'-separated, no trailing slash. */
  path: string;
  /** Where it is on disk. */
  fsPath: FsPath;
}

/** Everything a walk needs besides the directory itself. */
export interface WalkEnv {
  /** Where objects go. */
  store: ObjectStore;
  /** Racy reference of the cache being reused (entries with mtime >= it are re-hashed). */
  prevRefTimeMs: number;
  /** Index entries to trust on a cold cache, and the walk root's path inside the work tree. */
  seed: IndexSeed | undefined;
  /** Prefix of the walk root inside the repository ('' at the top, else 'dir/'). */
  seedPrefix: string;
  /** lstat results of the seed's entries, taken ahead of the walk on another thread. */
  prefetch?: LstatPrefetch | undefined;
  /** Files larger than this are skipped with a warning (LFS files excepted). */
  maxFileBytes: number;
  /** Hooks. */
  hooks: SnapshotHooks;
  /** Progress callback: files recorded so far, and the expected total (the previous count), at most every 100 ms and once at the end. */
  onProgress: ((done: number, total?: number) => void) | undefined;
  /** Total from the previous snapshot, for progress. */
  progressTotal: number | undefined;
  /**
   * Paths touched since the previous snapshot (from a file watcher): only
   * these are visited, everything else is reused from the cache unseen.
   * Undefined: visit everything.
   */
  touched?: TouchedNode | undefined;
  /** With `touched`: still visit everything (ignore rules changed), but keep finding directories the watch cannot see into. */
  visitAll?: boolean;
  /** Collect the paths whose content or presence differs from the cache (verification walks). */
  collectChanged?: boolean;
  /** The repository's core settings (line endings, file modes, symlinks, case). */
  core: CoreSettings;
  /** The repository's index, for what `git add` takes from it; undefined outside repositories. */
  index: IndexLookup | undefined;
  /**
   * Filter drivers whose clean side the config sets (git runs them);
   * undefined outside repositories, where `filter=lfs` alone makes a path
   * an LFS file.
   */
  filters?: ReadonlySet<string> | undefined;
  /**
   * Paths (relative to the walk root) whose ignore decision is made again
   * although their directory's rules did not change: they were added to or
   * removed from the index (git never ignores a tracked path). 'all': every
   * entry.
   */
  redecide?: ReadonlySet<string> | 'all' | undefined;
  /** Files not read at the last walk, kept across walks: a walk that follows touched paths visits them anyway, so every snapshot reports them. */
  unreadMarks?: UnreadMarks;
  /** Listings already read (by the file watcher), taken instead of reading a directory again when it is unchanged since. */
  listings?: ListingSource | undefined;
}

/**
 * Which cached entries were not read when last visited, and which
 * directories hold such an entry at or below them (in memory only: the
 * first walk after a restart visits everything).
 */
export interface UnreadMarks {
  entries: WeakSet<CachedEntry>;
  dirs: WeakSet<DirState>;
}

/** What the walk does with one entry of a directory when following touched paths. */
const SKIP = Symbol('skip');

const READ_RETRIES = 3;
const YIELD_EVERY_MS = 15;
const MAX_PENDING_WRITES = 256;
const MAX_PENDING_BYTES = 32 * 1024 * 1024;
const LFS_CHUNK = 1024 * 1024;
const RESERVED_RE = /^(?:\.git[. ]*|git~1)$/i;

/** Rules in force in a directory, with the key that identifies them. */
export interface RuleContext {
  /** Ignore rules. */
  ignore: IgnoreStack;
  /** Attribute rules (LFS, line endings). */
  attrs: AttributeStack;
  /** Identity of both, stored with decisions so they are redone when rules change. */
  key: string;
  /** Inside a directory the ignore rules exclude: only paths the index tracks are recorded. */
  excluded?: boolean;
}

/** The rules below a directory the ignore rules exclude but whose tracked paths are recorded. */
const excludedRules = new WeakMap<RuleContext, RuleContext>();
function rulesInsideExcluded(rules: RuleContext): RuleContext {
  if (rules.excluded) return rules;
  let inside = excludedRules.get(rules);
  if (!inside) {
    inside = { ignore: rules.ignore, attrs: rules.attrs, key: createHash('sha1').update(`${rules.key}\nexcluded`).digest('hex'), excluded: true };
    excludedRules.set(rules, inside);
  }
  return inside;
}

/** Parsed rule files kept in memory between snapshots, keyed by blob id. */
interface ParsedRuleFile {
  oid: string;
  text: string;
}

class RescanNeeded extends Error {}

/** Cheap pre-check for RESERVED_RE: only names starting with '.', 'g' or 'G' can match. */
function mayBeReserved(name: string): boolean {
  const c = name.charCodeAt(0);
  return c === 0x2e || c === 0x67 || c === 0x47;
}

function joinPath(parent: FsPath, e: CachedEntry): FsPath {
  if (typeof parent === 'string' && !e.raw) return parent + '/' + e.name;
  const p = typeof parent === 'string' ? Buffer.from(parent) : parent;
  return Buffer.concat([p, Buffer.from('/'), e.raw ?? Buffer.from(e.name)]);
}

function kindOfDirent(d: Dirent | Dirent<Buffer>): number {
  if (d.isFile()) return KIND_FILE;
  if (d.isDirectory()) return KIND_DIR;
  if (d.isSymbolicLink()) return KIND_SYMLINK;
  if (d.isFIFO() || d.isSocket() || d.isBlockDevice() || d.isCharacterDevice()) return KIND_OTHER;
  return 0;
}

function kindOfStats(st: LiteStat): number {
  const t = st.mode & S_IFMT;
  if (t === S_IFREG) return KIND_FILE;
  if (t === S_IFDIR) return KIND_DIR;
  if (t === S_IFLNK) return KIND_SYMLINK;
  return KIND_OTHER;
}

/** lstat that throws ENOENT like the fs API, for paths expected to exist. */
function mustLstat(path: FsPath): LiteStat {
  const st = liteLstat(path);
  if (st === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${String(path)}'`), { code: 'ENOENT' });
  return st;
}

function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

function sameStat(a: LiteStat, b: LiteStat): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino && a.mode === b.mode;
}

function newEntry(name: string, raw: Buffer | undefined, kind: number): CachedEntry {
  return {
    name,
    raw,
    kind,
    status: STATUS_INCLUDED,
    mode: 0,
    size: -1,
    mtimeMs: -1,
    ctimeMs: -1,
    ino: -1,
    oid: undefined,
    lfs: false,
    eol: EOL_KEEP,
    dir: undefined,
  };
}

function treeNameBytes(e: CachedEntry): Buffer {
  return e.raw ?? Buffer.from(e.name, 'utf8');
}

/** One snapshot walk over a root; create a new one per snapshot. */
export class Walker {
  readonly counters: WalkCounters = { hashed: 0, reusedFromCache: 0, seededFromIndex: 0, treesWritten: 0, racy: 0, dirsRead: 0, dirsGiven: 0 };
  readonly warnings: SnapshotWarning[] = [];
  /** Files whose content could not be read this time (see {@link UnreadFile}). */
  readonly unread: UnreadFile[] = [];
  readonly nested: NestedFound[] = [];
  /**
   * Directories that appeared with subdirectories the watcher reported
   * nothing about (moved in, or created faster than the watch was set up):
   * the watch may not see into them, so they are walked entirely until it
   * is restarted.
   */
  readonly blind: string[] = [];
  /** With `collectChanged`: files, symlinks and gitlinks added, removed or changed since the cache. */
  readonly changedPaths: string[] = [];
  /** Set when anything differs from the cache loaded (the cache must be saved). */
  changed = false;
  private pending: Promise<void>[] = [];
  private pendingBytes = 0;
  private lastYield = performance.now();
  private lastProgress = 0;
  /** Entries visited, for yielding. */
  private visited = 0;
  private done = 0;
  /** The file just visited took its id and mode from the index unchanged. */
  private seededAsIndexed = false;
  /** The index's cache-tree record of each directory walked, for its parent's check (saves a second lookup by path). */
  private readonly indexTrees = new WeakMap<DirState, CachedTree>();
  private writeError: unknown;
  /** The id `clean` already computed for the content it returned, so it is not hashed twice. */
  private hashed: { content: Buffer; oid: string } | undefined;
  /** The walked root's real path and a `/`, as bytes: no file read may lie outside it. */
  private rootPrefix = Buffer.alloc(0);

  constructor(
    private readonly env: WalkEnv,
    private readonly ruleFiles: Map<string, ParsedRuleFile>,
  ) {}

  /** Walks the root directory (which must exist) and returns its new state. */
  async walkRoot(prev: DirState | undefined, fsPath: string, rules: RuleContext): Promise<DirState> {
    const st = mustLstat(fsPath);
    if (kindOfStats(st) !== KIND_DIR) throw new Error(`${fsPath} is not a directory`);
    this.rootPrefix = Buffer.from(fsPath.endsWith('/') ? fsPath : `${fsPath}/`);
    let state: DirState;
    try {
      state = await this.walkDir(prev, fsPath, '', st, rules, false, true, this.env.touched);
    } catch (err) {
      if (!(err instanceof RescanNeeded)) throw err;
      state = await this.walkDir(prev, fsPath, '', mustLstat(fsPath), rules, true, true, this.env.touched);
    }
    await this.drain();
    this.env.onProgress?.(this.done, this.done);
    return state;
  }

  /** Waits for all queued object writes. */
  async drain(): Promise<void> {
    const all = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    await Promise.all(all);
    if (this.writeError) throw this.writeError;
  }

  private queueWrite(type: ObjectType, content: Uint8Array, oid: string): void {
    const p = this.env.store.writeObject(type, content).then(
      (got) => {
        if (got !== oid) this.writeError ??= new Error(`object store returned ${got} for ${type} ${oid}`);
      },
      (err: unknown) => {
        this.writeError ??= err;
      },
    );
    this.pending.push(p);
    this.pendingBytes += content.length;
  }

  private async maybeYield(): Promise<void> {
    const now = performance.now();
    if (now - this.lastYield < YIELD_EVERY_MS) return;
    if (this.env.onProgress && now - this.lastProgress > 100) {
      this.lastProgress = now;
      this.env.onProgress(this.done, this.env.progressTotal);
    }
    await new Promise<void>((r) => setImmediate(r));
    this.lastYield = performance.now();
  }

  private warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  /** The given listing of a directory, when its stat is still the one taken before the listing was read. */
  private givenListing(fsPath: FsPath, st: LiteStat): DirListing | undefined {
    if (typeof fsPath !== 'string') return undefined;
    const given = this.env.listings!.take(fsPath);
    if (!given || given.mtimeMs !== st.mtimeMs || given.ctimeMs !== st.ctimeMs || given.ino !== st.ino) return undefined;
    return given;
  }

  /** A given listing's entries, as {@link readListing} makes them. */
  private adoptListing(fsPath: string, given: DirListing, prev: DirState | undefined): { entries: CachedEntry[]; hasDotGit: boolean } {
    this.counters.dirsGiven++;
    const byName = previousByName(prev);
    const entries: CachedEntry[] = [];
    let hasDotGit = false;
    const { names, kinds } = given;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (name === '.git') {
        hasDotGit = true;
        continue;
      }
      let kind = kinds[i]!;
      if (kind === 0) {
        try {
          kind = kindOfStats(mustLstat(fsPath + '/' + name));
        } catch {
          continue;
        }
      }
      const old = byName?.get(name);
      entries.push(old && (old.kind === kind || (old.kind === KIND_FILE && kind === KIND_OTHER)) ? old : newEntry(name, undefined, kind));
    }
    return { entries, hasDotGit };
  }

  /** Reads a directory listing, keeping raw bytes for names that are not valid UTF-8. */
  private readListing(fsPath: FsPath, prev: DirState | undefined): { entries: CachedEntry[]; hasDotGit: boolean } {
    this.counters.dirsRead++;
    let dirents: (Dirent | Dirent<Buffer>)[] = readdirSync(fsPath as string, { withFileTypes: true });
    let raw = false;
    for (const d of dirents as Dirent[]) {
      if (d.name.includes('\uFFFD')) {
        raw = true;
        break;
      }
    }
    if (raw) dirents = readdirSync(fsPath as string, { withFileTypes: true, encoding: 'buffer' });
    const byName = previousByName(prev);
    const entries: CachedEntry[] = [];
    let hasDotGit = false;
    for (const d of dirents) {
      let name: string;
      let rawName: Buffer | undefined;
      if (typeof d.name === 'string') name = d.name;
      else {
        const bytes = d.name;
        name = decodePathBytes(bytes);
        if (!Buffer.from(name, 'utf8').equals(bytes)) rawName = Buffer.from(bytes);
      }
      if (name === '.git' && !rawName) {
        hasDotGit = true;
        continue;
      }
      let kind = kindOfDirent(d);
      if (kind === 0) {
        const e0 = newEntry(name, rawName, 0);
        try {
          kind = kindOfStats(mustLstat(joinPath(fsPath, e0)));
        } catch {
          continue;
        }
      }
      const key = rawName ? 'raw:' + rawName.toString('hex') : name;
      const old = byName?.get(key);
      entries.push(old && (old.kind === kind || (old.kind === KIND_FILE && kind === KIND_OTHER)) ? old : newEntry(name, rawName, kind));
    }
    return { entries, hasDotGit };
  }

  /** Reads (or reuses the parsed copy of) a rule file in this directory; returns its text and id. */
  private ruleFile(fsPath: FsPath, rel: string, entry: CachedEntry | undefined): ParsedRuleFile | undefined {
    if (!entry || entry.kind !== KIND_FILE) return undefined;
    const path = joinPath(fsPath, entry);
    let st: LiteStat | undefined;
    try {
      st = liteLstat(path);
    } catch {
      return undefined;
    }
    if (!st || kindOfStats(st) !== KIND_FILE) return undefined;
    const key = rel + entry.name;
    const cached = this.ruleFiles.get(key);
    const fresh =
      entry.oid !== undefined &&
      entry.size === st.size &&
      entry.mtimeMs === st.mtimeMs &&
      entry.ctimeMs === st.ctimeMs &&
      entry.ino === st.ino &&
      entry.mtimeMs < this.env.prevRefTimeMs;
    if (fresh && cached && cached.oid === entry.oid) return cached;
    let buf: Buffer;
    try {
      buf = this.readInside(path);
    } catch {
      return undefined;
    }
    // Patterns naming bytes that are not UTF-8 must match the escaped names the walk compares them with.
    const parsed = { oid: hashObject('blob', buf), text: decodePathBytes(buf) };
    this.ruleFiles.set(key, parsed);
    return parsed;
  }

  private async walkDir(
    prev: DirState | undefined,
    fsPath: FsPath,
    rel: string,
    st: LiteStat,
    parentRules: RuleContext,
    force: boolean,
    isRoot: boolean,
    sel: TouchedNode | null | undefined,
  ): Promise<DirState> {
    const env = this.env;
    if (sel?.full) sel = null;
    // A directory new since the last snapshot (or reported created) has no events for what it held on arrival.
    const fresh = sel != null && (prev === undefined || sel.created);
    const listingValid =
      !force && prev !== undefined && prev.mtimeMs === st.mtimeMs && prev.ctimeMs === st.ctimeMs && prev.ino === st.ino && prev.mtimeMs < env.prevRefTimeMs;
    if (prev && !listingValid && prev.mtimeMs === st.mtimeMs && prev.ino === st.ino && prev.mtimeMs >= env.prevRefTimeMs) this.counters.racy++;
    let entries: CachedEntry[];
    let hasDotGit: boolean;
    if (listingValid) {
      entries = prev.entries;
      hasDotGit = prev.hasDotGit;
    } else {
      try {
        const given = env.listings && !force ? this.givenListing(fsPath, st) : undefined;
        ({ entries, hasDotGit } = given ? this.adoptListing(fsPath as string, given, prev) : this.readListing(fsPath, prev));
        if (env.collectChanged && prev) this.collectRemoved(prev, entries, rel);
      } catch (err) {
        if (isRoot) throw err;
        const code = errCode(err);
        if (code !== 'ENOENT' && code !== 'ENOTDIR') this.warn(rel.slice(0, -1), `cannot list directory: ${code ?? String(err)}`);
        this.changed = true;
        return { mtimeMs: -1, ctimeMs: -1, ino: -1, rulesKey: '', entries: [], tree: undefined, files: 0, hasDotGit: false, nestedRepo: false };
      }
      this.changed = true;
    }

    // A directory holding a valid .git is a nested repository: recorded as a gitlink by the caller.
    if (hasDotGit && !isRoot) {
      const dotGit = typeof fsPath === 'string' ? fsPath + '/.git' : decodePathBytes(Buffer.concat([fsPath, Buffer.from('/.git')]));
      if (resolveDotGit(dotGit)) {
        return { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, rulesKey: '', entries: [], tree: undefined, files: 0, hasDotGit, nestedRepo: true };
      }
    }

    // Rule files of this directory first: they decide the fate of the other entries.
    let rules = parentRules;
    const ignoreEntry = entries.find((e) => e.name === '.gitignore' && !e.raw);
    const attrEntry = entries.find((e) => e.name === '.gitattributes' && !e.raw);
    const gi = this.ruleFile(fsPath, rel, ignoreEntry);
    const ga = this.ruleFile(fsPath, rel, attrEntry);
    if (gi || ga) {
      const caseFold = env.core.ignoreCase;
      const ignore = gi ? parentRules.ignore.push({ patterns: parseIgnoreFile(gi.text, caseFold), prepend: '', strip: rel.length }) : parentRules.ignore;
      // Macros count only in the work tree's top file, as in git.
      const macros = rel === '' && env.seedPrefix === '';
      const attrs = ga ? parentRules.attrs.push({ rules: parseAttributes(ga.text, { macros, caseFold }), prepend: '', strip: rel.length }) : parentRules.attrs;
      const key = createHash('sha1')
        .update(`${parentRules.key}\n${gi?.oid ?? ''}\n${ga?.oid ?? ''}`)
        .digest('hex');
      rules = { ignore, attrs, key, ...(parentRules.excluded ? { excluded: true } : {}) };
    }
    const decide = !listingValid || prev.rulesKey !== rules.key || env.redecide === 'all';
    const redecide = env.redecide instanceof Set && env.redecide.size > 0 ? env.redecide : undefined;
    if (decide) this.changed = true;

    let dirty = !listingValid || prev.tree === undefined;
    let files = 0;
    let holdsUnread = false;
    // One key string for both lookups: its hash is computed once.
    const seedKey = env.seed ? env.seedPrefix + rel : '';
    const seedDir = env.seed?.directory(seedKey);
    // What the index's cache-tree can vouch for: files taken from the index as they are, and subdirectories equal to its trees.
    const asIndexed = { files: 0, trees: 0, treeEntries: 0, other: 0 };
    const converts = !convertsNothing(env.core, rules.attrs.empty);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.kind === KIND_OTHER) continue;
      const path = rel + e.name;
      let reentered = false;
      if (decide || redecide?.has(path)) {
        const status = this.ignoreStatus(rules, path, e);
        if (status !== e.status) {
          dirty = true;
          // A directory entered again after being ignored: the watch saw into it all along, but nothing below is known.
          reentered = e.kind === KIND_DIR && status !== STATUS_IGNORED;
        }
        e.status = status;
        if (e.kind !== KIND_DIR) {
          let lfs = false;
          let eol = EOL_KEEP;
          let conv: string | undefined;
          if (converts && e.kind === KIND_FILE) {
            const attrs = rules.attrs.lookup(path, e.name);
            const filter = typeof attrs.filter === 'string' ? attrs.filter : undefined;
            // git runs a filter only when its driver is configured; without git-lfs's, an LFS path is stored as it is.
            const driven = filter !== undefined && (env.filters ? env.filters.has(filter) : filter === 'lfs');
            lfs = driven && filter === 'lfs';
            eol = cleanClass(crlfAction(attrs, env.core));
            conv = conversionKey(attrs, driven && !lfs ? filter : undefined);
          }
          // What is stored depends on these: a change re-reads the file.
          if (lfs !== e.lfs || eol !== e.eol || conv !== e.conv) {
            e.lfs = lfs;
            e.eol = eol;
            e.conv = conv;
            e.oid = undefined;
          }
        }
      }
      if (e.status !== STATUS_INCLUDED && e.status !== STATUS_TRACKED_ONLY) {
        if (e.mode !== 0) {
          e.mode = 0;
          dirty = true;
        }
        continue;
      }
      if (mayBeReserved(e.name) && RESERVED_RE.test(e.name)) {
        this.warn(path, 'name reserved by git; not recorded');
        if (e.mode !== 0) dirty = true;
        e.mode = 0;
        continue;
      }
      const childSel = sel === undefined ? undefined : reentered ? null : this.follow(sel, fresh, e, path);
      if (childSel === SKIP) {
        asIndexed.other++;
        const reused = e.mode === 0 ? 0 : e.mode === MODE_TREE ? e.dir!.files : 1;
        files += reused;
        this.done += reused;
        this.counters.reusedFromCache += reused;
        continue;
      }
      const oldMode = e.mode;
      const oldOid = e.oid;
      const entryPath = joinPath(fsPath, e);
      this.seededAsIndexed = false;
      if (e.kind === KIND_DIR) {
        await this.visitDir(e, entryPath, path, e.status === STATUS_TRACKED_ONLY ? rulesInsideExcluded(rules) : rules, listingValid, childSel);
      } else {
        const reading = this.visitFile(e, entryPath, path, listingValid, seedDir);
        if (reading) await reading;
      }
      if (env.unreadMarks && (env.unreadMarks.entries.has(e) || (e.dir !== undefined && env.unreadMarks.dirs.has(e.dir)))) holdsUnread = true;
      if (env.seed && e.mode !== 0) this.countAsIndexed(asIndexed, e);
      if (e.mode !== 0) files += e.kind === KIND_DIR && e.mode === MODE_TREE ? e.dir!.files : 1;
      if (e.mode !== oldMode || e.oid !== oldOid) {
        dirty = true;
        if (env.collectChanged && (e.kind !== KIND_DIR || e.mode === MODE_GITLINK || oldMode === MODE_GITLINK)) this.changedPaths.push(path);
      }
      if (this.pending.length >= MAX_PENDING_WRITES || this.pendingBytes >= MAX_PENDING_BYTES) await this.drain();
      if (e.mode !== 0 && e.mode !== MODE_TREE) this.done++;
      if ((++this.visited & 1023) === 0) await this.maybeYield();
    }

    let tree = prev?.tree;
    const cached = env.seed?.cachedTree(seedKey);
    if (dirty) {
      const sameAsIndex =
        cached !== undefined &&
        asIndexed.other === 0 &&
        asIndexed.trees === cached.subtrees &&
        asIndexed.files + asIndexed.treeEntries === cached.entries &&
        asIndexed.files + asIndexed.trees > 0;
      // Every entry is one the index has, and the count says the index has no others here: git's tree for it is this tree.
      tree = sameAsIndex ? cached.oid : this.writeTree(entries, cached?.oid);
      this.changed = true;
    }
    const state: DirState = { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, rulesKey: rules.key, entries, tree, files, hasDotGit, nestedRepo: false };
    if (cached) this.indexTrees.set(state, cached);
    if (holdsUnread) env.unreadMarks!.dirs.add(state);
    return state;
  }

  /**
   * Whether an entry is recorded: git never ignores a path its index has,
   * and enters an excluded directory only for the tracked paths below it
   * (`git add -A` stages tracked files there and nothing else). The
   * snapshot's own extra excludes are absolute.
   */
  private ignoreStatus(rules: RuleContext, path: string, e: CachedEntry): number {
    const isDir = e.kind === KIND_DIR;
    let decision = rules.ignore.decide(path, e.name, isDir);
    if (decision === NOT_IGNORED && rules.excluded) decision = IGNORED_BY_GIT;
    if (decision === NOT_IGNORED) return STATUS_INCLUDED;
    const index = this.env.index;
    if (decision === IGNORED_BY_EXTRA || !index) return STATUS_IGNORED;
    const full = this.env.seedPrefix + path;
    if (index.isTracked(full)) return isDir ? STATUS_TRACKED_ONLY : STATUS_INCLUDED;
    return isDir && index.hasTrackedBelow(full + '/') ? STATUS_TRACKED_ONLY : STATUS_IGNORED;
  }

  private countAsIndexed(counts: { files: number; trees: number; treeEntries: number; other: number }, e: CachedEntry): void {
    if (e.kind !== KIND_DIR) {
      if (this.seededAsIndexed) counts.files++;
      else counts.other++;
      return;
    }
    const cached = e.mode === MODE_TREE && e.dir ? this.indexTrees.get(e.dir) : undefined;
    if (cached && cached.oid === e.oid) {
      counts.trees++;
      counts.treeEntries += cached.entries;
    } else {
      counts.other++;
    }
  }

  private collectRemoved(prev: DirState, entries: readonly CachedEntry[], rel: string): void {
    const kept = new Set(entries);
    for (const old of prev.entries) if (old.mode !== 0 && !kept.has(old)) this.changedPaths.push(rel + old.name);
  }

  /**
   * Following touched paths: whether an entry is visited, and with which
   * part of the touched tree (null: everything below).
   */
  private follow(sel: TouchedNode | null, fresh: boolean, e: CachedEntry, path: string): TouchedNode | null | typeof SKIP {
    if (sel === null) return null;
    const node = e.raw ? undefined : sel.children?.get(e.name);
    if (node?.full) return null;
    if (e.kind === KIND_DIR) {
      if ((fresh || e.dir === undefined) && !node?.created) {
        this.blind.push(path);
        return null;
      }
      return node ?? (this.env.visitAll || this.env.unreadMarks?.dirs.has(e.dir!) ? NOTHING_TOUCHED : SKIP);
    }
    const seen = e.size !== -1 || e.mode !== 0;
    return node || fresh || this.env.visitAll || !seen || this.env.unreadMarks?.entries.has(e) ? NOTHING_TOUCHED : SKIP;
  }

  private async visitDir(
    e: CachedEntry,
    fsPath: FsPath,
    path: string,
    rules: RuleContext,
    listingValid: boolean,
    sel: TouchedNode | null | undefined,
  ): Promise<void> {
    let st: LiteStat | undefined;
    try {
      st = liteLstat(fsPath);
    } catch {
      st = undefined;
    }
    if (!st || kindOfStats(st) !== KIND_DIR) {
      if (listingValid) throw new RescanNeeded();
      e.mode = 0;
      return;
    }
    let child: DirState;
    try {
      child = await this.walkDir(e.dir, fsPath, path + '/', st, rules, false, false, sel);
    } catch (err) {
      if (!(err instanceof RescanNeeded)) throw err;
      child = await this.walkDir(e.dir, fsPath, path + '/', mustLstat(fsPath), rules, true, false, sel);
    }
    e.dir = child;
    if (child.nestedRepo) {
      const dotGit = typeof fsPath === 'string' ? fsPath + '/.git' : decodePathBytes(Buffer.concat([fsPath, Buffer.from('/.git')]));
      const loc = resolveDotGit(dotGit);
      const head = loc ? readHeadCommit(loc.gitDir, loc.commonDir) : undefined;
      this.nested.push({ path, fsPath });
      if (head === undefined) {
        this.warn(path, 'nested repository does not have a commit checked out; not recorded in the parent tree');
        e.mode = 0;
        e.oid = undefined;
      } else {
        e.mode = MODE_GITLINK;
        e.oid = head;
      }
      return;
    }
    if (child.tree === undefined) {
      e.mode = 0;
      e.oid = undefined;
    } else {
      e.mode = MODE_TREE;
      e.oid = child.tree;
    }
  }

  private visitFile(e: CachedEntry, fsPath: FsPath, path: string, listingValid: boolean, seedDir: SeedDirectory | undefined): void | Promise<void> {
    const env = this.env;
    env.unreadMarks?.entries.delete(e);
    const seedAt = e.oid === undefined && seedDir && !e.raw ? seedDir.names.get(e.name) : undefined;
    let st: LiteStat;
    try {
      st = (seedAt !== undefined ? env.prefetch?.take(seedDir!.seed.indexPosition(seedAt)) : undefined) ?? mustLstat(fsPath);
    } catch (err) {
      if (listingValid) throw new RescanNeeded();
      if (errCode(err) !== 'ENOENT') this.warn(path, `cannot stat: ${errCode(err) ?? String(err)}`);
      e.mode = 0;
      return;
    }
    const kind = kindOfStats(st);
    if (kind === KIND_OTHER && e.kind === KIND_FILE) {
      this.notRead(e, path, 'not-a-file', 'no longer a regular file');
      return;
    }
    if (kind !== e.kind) {
      if (listingValid) throw new RescanNeeded();
      e.mode = 0;
      return;
    }
    const mode = this.gitMode(kind, st.mode, path);
    if (e.oid !== undefined && e.size === st.size && e.mtimeMs === st.mtimeMs && e.ctimeMs === st.ctimeMs && e.ino === st.ino && e.mode === mode) {
      if (e.mtimeMs < env.prevRefTimeMs) {
        this.counters.reusedFromCache++;
        return;
      }
      this.counters.racy++;
    }
    this.changed = true;
    if (kind === KIND_FILE && !e.lfs && st.size > env.maxFileBytes) {
      this.notRead(e, path, 'oversized', `larger than maxFileBytes (${st.size} > ${env.maxFileBytes})`, st.size);
      return;
    }
    if (e.conv !== undefined && seedAt === undefined && parseConversionKey(e.conv).filter !== undefined) {
      // A filter not run here: the index's id counts while its stat data matches (git ran the filter to refresh it).
      const oid = env.index?.matchStat(env.seedPrefix + path, st, mode);
      if (oid !== undefined) {
        this.record(e, st, mode, oid);
        return;
      }
    }
    if (seedAt !== undefined) {
      const oid = seedDir!.seed.match(seedAt, st, mode);
      if (oid !== undefined) {
        this.counters.seededFromIndex++;
        this.seededAsIndexed = mode === seedDir!.seed.entryMode(seedAt);
        this.record(e, st, mode, oid);
        return;
      }
    }
    return this.hashInto(e, fsPath, path, st, mode, kind);
  }

  /**
   * The mode `git add` records: with `core.symlinks=false` a file the index
   * has as a symlink stays one; with `core.fileMode=false` a file keeps the
   * index's mode (new files are 100644).
   */
  private gitMode(kind: number, stMode: number, path: string): number {
    if (kind === KIND_SYMLINK) return MODE_SYMLINK;
    const core = this.env.core;
    if (core.fileMode && core.symlinks) return stMode & 0o100 ? MODE_EXEC : MODE_FILE;
    const indexed = this.env.index?.entry(this.env.seedPrefix + path)?.mode;
    if (!core.symlinks && indexed === MODE_SYMLINK) return MODE_SYMLINK;
    if (!core.fileMode) return indexed === MODE_EXEC || indexed === MODE_FILE ? indexed : MODE_FILE;
    return stMode & 0o100 ? MODE_EXEC : MODE_FILE;
  }

  /**
   * A file present but not readable now is not deleted: its entry keeps the
   * content last read (checked again next snapshot); a file never read
   * before is left out. Either way it is reported.
   */
  private notRead(e: CachedEntry, path: string, reason: UnreadReason, why: string, size?: number): void {
    const kept = e.oid !== undefined && (e.mode === MODE_FILE || e.mode === MODE_EXEC);
    this.unread.push({ path, reason, ...(size !== undefined ? { size } : {}), kept });
    this.env.unreadMarks?.entries.add(e);
    this.warn(path, `${why}; ${kept ? 'kept the content last read' : 'not recorded'}`);
    this.changed = true;
    if (kept) {
      e.mtimeMs = NaN; // never matches: read again next time
    } else {
      e.mode = 0;
      e.oid = undefined;
    }
  }

  private record(e: CachedEntry, st: LiteStat, mode: number, oid: string): void {
    e.size = st.size;
    e.mtimeMs = st.mtimeMs;
    e.ctimeMs = st.ctimeMs;
    e.ino = st.ino;
    e.mode = mode;
    e.oid = oid;
  }

  /** Reads and hashes a file or symlink, re-reading while it changes underneath. */
  private hashInto(e: CachedEntry, fsPath: FsPath, path: string, st: LiteStat, mode: number, kind: number): void | Promise<void> {
    let content: Buffer | undefined;
    let stable = false;
    for (let attempt = 0; attempt <= READ_RETRIES && !stable; attempt++) {
      this.env.hooks.beforeRead?.(path);
      try {
        if (kind === KIND_SYMLINK) content = readlinkSync(fsPath, { encoding: 'buffer' });
        else if (e.lfs) content = this.lfsContent(fsPath);
        else content = this.readInside(fsPath);
        const after = mustLstat(fsPath);
        stable = sameStat(st, after) && (kind !== KIND_FILE || e.lfs || content.length === after.size);
        if (!stable) {
          st = after;
          if (kindOfStats(after) !== kind) break;
          mode = this.gitMode(kind, after.mode, path);
        }
      } catch (err) {
        if (err instanceof LeftRootError) {
          this.notRead(e, path, 'unreadable', err.message);
          return;
        }
        const code = errCode(err);
        // ELOOP: the name became a symlink after it was listed, like a file that went away meanwhile.
        if (code !== 'ENOENT' && code !== 'ELOOP') {
          this.notRead(e, path, 'unreadable', code === 'EACCES' || code === 'EPERM' ? 'permission denied' : `cannot read: ${code ?? String(err)}`);
          return;
        }
        e.mode = 0;
        e.oid = undefined;
        return;
      }
    }
    if (content === undefined || kindOfStats(st) !== kind) {
      e.mode = 0;
      e.oid = undefined;
      return;
    }
    const finish = (stored: Buffer): void => {
      const oid = this.hashed?.content === stored ? this.hashed.oid : hashObject('blob', stored);
      this.hashed = undefined;
      if (oid !== e.oid) this.queueWrite('blob', stored, oid);
      this.counters.hashed++;
      this.record(e, st, mode, oid);
      if (!stable) {
        this.warn(path, 'kept changing while being read; recorded the last content read');
        e.mtimeMs = NaN; // never matches: re-read next time
      } else if (st.mtimeMs >= this.env.prevRefTimeMs) {
        this.counters.racy++;
      }
    };
    const stored = kind === KIND_FILE && !e.lfs && (e.eol !== EOL_KEEP || e.conv !== undefined) ? this.clean(e, path, content) : content;
    if (stored instanceof Promise) return stored.then(finish);
    finish(stored);
  }

  /**
   * The content `git add` stores: UTF-8 for a `working-tree-encoding`,
   * CRLF → LF for text except (`text=auto`) a file whose indexed version
   * already has CRLF ("safer autocrlf"), `$Id$` for `ident`. A configured
   * filter is not run: the bytes are recorded and a warning says so.
   */
  private clean(e: CachedEntry, path: string, content: Buffer): Buffer | Promise<Buffer> {
    const c = e.conv !== undefined ? parseConversionKey(e.conv) : undefined;
    let input: Uint8Array = content;
    if (c?.filter !== undefined) this.warn(path, `its "${c.filter}" filter (filter.${c.filter}.clean) is not run; recorded the bytes on disk`);
    if (c?.unsupportedEncoding !== undefined) this.warn(path, `working-tree-encoding ${c.unsupportedEncoding} is not converted; recorded the bytes on disk`);
    if (c?.encoding !== undefined) {
      const utf8 = encodeToGit(input, c.encoding);
      if (utf8) input = utf8;
      else this.warn(path, `not valid ${c.encoding} as git requires for its working-tree-encoding; recorded the bytes on disk`);
    }
    const done = (b: Uint8Array): Buffer => {
      const out = c?.ident ? identToGit(b) : b;
      return Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    };
    const cleaned = cleanContent(input, e.eol);
    if (!cleaned) return done(input);
    if (e.eol !== EOL_AUTO) return done(cleaned);
    const indexed = this.env.index?.entry(this.env.seedPrefix + path);
    if (!indexed) return done(cleaned);
    // The usual cases need no blob read: the index holds one of the two candidates.
    const converted = done(cleaned);
    const cleanedOid = hashObject('blob', converted);
    this.hashed = { content: converted, oid: cleanedOid };
    if (indexed.oid === cleanedOid) return converted;
    const kept = done(input);
    if (indexed.oid === hashObject('blob', kept)) return kept;
    const crlf = this.env.index!.hasCrlf(indexed.oid);
    if (typeof crlf === 'boolean') return crlf ? kept : converted;
    return crlf.then((has) => (has ? kept : converted));
  }

  /** The LFS pointer for a file, streaming its content through SHA-256. */
  private lfsContent(fsPath: FsPath): Buffer {
    const fd = openInside(fsPath, this.rootPrefix);
    try {
      const size = fstatSync(fd).size;
      if (size < 1024) {
        const small = readFileSync(fd);
        if (isLfsPointer(small)) return small;
        return lfsPointer(createHash('sha256').update(small).digest('hex'), small.length);
      }
      const h = createHash('sha256');
      const chunk = Buffer.allocUnsafe(LFS_CHUNK);
      let total = 0;
      for (;;) {
        const n = readSync(fd, chunk, 0, LFS_CHUNK, null);
        if (n === 0) break;
        h.update(chunk.subarray(0, n));
        total += n;
      }
      return lfsPointer(h.digest('hex'), total);
    } finally {
      closeSync(fd);
    }
  }

  /** A file's whole content, read only if it lies inside the walked root (see `openInside`). */
  private readInside(fsPath: FsPath): Buffer {
    const fd = openInside(fsPath, this.rootPrefix);
    try {
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** `inRepository`: the id the index's cache-tree gives this directory; a tree with that id is already in the repository. */
  private writeTree(entries: CachedEntry[], inRepository?: string): string | undefined {
    const items: CachedEntry[] = [];
    // JS string order equals UTF-8 byte order unless a name holds surrogates
    // (U+D800 and up) or is raw bytes: only then compare encoded bytes.
    let simple = true;
    for (const e of entries) {
      if (e.mode === 0 || e.oid === undefined || (e.status !== STATUS_INCLUDED && e.status !== STATUS_TRACKED_ONLY)) continue;
      items.push(e);
      if (simple && (e.raw !== undefined || /[\uD800-\uFFFF]/.test(e.name))) simple = false;
    }
    if (items.length === 0) return undefined;
    let input: TreeEntryInput[];
    if (simple) {
      const key = (e: CachedEntry): string => (e.mode === MODE_TREE ? e.name + '/' : e.name);
      items.sort((a, b) => {
        const ka = key(a);
        const kb = key(b);
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      });
      input = items.map((e) => ({ name: e.name, mode: e.mode, oid: e.oid! }));
    } else {
      const named = items.map((e) => ({ e, name: treeNameBytes(e) }));
      named.sort((a, b) => compareTreeNames(a.name, a.e.mode === MODE_TREE, b.name, b.e.mode === MODE_TREE));
      input = named.map(({ e, name }) => ({ name, mode: e.mode, oid: e.oid! }));
    }
    const content = encodeTree(input);
    const oid = hashObject('tree', content);
    this.counters.treesWritten++;
    if (oid !== inRepository) this.queueWrite('tree', content, oid);
    return oid;
  }
}

/** The directory's previous entries by name (raw names by their bytes), for reusing what is unchanged; undefined when there were none. */
function previousByName(prev: DirState | undefined): Map<string, CachedEntry> | undefined {
  if (!prev || prev.entries.length === 0) return undefined;
  const byName = new Map<string, CachedEntry>();
  for (const e of prev.entries) byName.set(e.raw ? 'raw:' + e.raw.toString('hex') : e.name, e);
  return byName;
}
