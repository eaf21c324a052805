/**
 * The repository's index as `git add` consults it while adding a file: the
 * mode already recorded (`core.fileMode=false`, `core.symlinks=false`) and
 * whether the indexed version holds CRLF (`text=auto` leaves such files
 * alone). Read-only; re-read when the index file changes.
 */
import { lstatSync } from 'node:fs';
import { createDeltaBaseCache } from '../store/pack-reader.js';
import { ObjectDirectory } from '../store/object-directory.js';
import type { StoredObject } from '../store/types.js';
import { hasCrlfText } from './eol-conversion.js';
import { readIndexSeed, type IndexBytes, type IndexSeed } from './index-file.js';

/** One stage-0 index entry. */
export interface IndexEntry {
  mode: number;
  oid: string;
}

export class IndexLookup {
  private seed: IndexSeed | undefined;
  private stamp = '';
  private checked = false;
  private objects: ObjectDirectory | undefined;
  /** The index whose paths the last {@link membershipChanges} call saw; null before the first call. */
  private membershipSeen: IndexSeed | undefined | null = null;
  /** Answers of `hasCrlf` by blob id (blobs never change). */
  private readonly crlf = new Map<string, boolean>();

  constructor(
    private readonly indexFile: string,
    private readonly objectsDir: string,
  ) {}

  /** Makes the next lookup check whether the index file changed (call once per snapshot). */
  refresh(): void {
    this.checked = false;
  }

  /** Takes an index the caller has just parsed (the first snapshot's seed) instead of reading it again. */
  adopt(seed: IndexSeed, file: IndexBytes): void {
    this.seed = seed;
    this.stamp = `${file.buf.length}:${file.mtimeMs}:${file.ino}`;
    this.checked = true;
  }

  /** True when the index has an entry at `path` (relative to the work tree top): git never ignores such a path. */
  isTracked(path: string): boolean {
    return this.current()?.isTracked(path) === true;
  }

  /** True when the index has an entry below the directory `dir` ('a/b/'). */
  hasTrackedBelow(dir: string): boolean {
    return this.current()?.hasTrackedBelow(dir) === true;
  }

  /**
   * The paths (relative to the work tree top) added to or removed from the
   * index since the previous call, whose ignore decision may have changed;
   * 'all' at the first call.
   */
  membershipChanges(): string[] | 'all' {
    const seed = this.current();
    const prev = this.membershipSeen;
    this.membershipSeen = seed;
    if (prev === null) return 'all';
    if (prev === seed) return [];
    if (!prev || !seed) return 'all';
    return seed.membershipDiff(prev);
  }

  /** The id the index records at `path` when its stat data matches `st` exactly and is not racy (see `IndexSeed.match`). */
  matchStat(path: string, st: { mtimeMs: number; ctimeMs: number; ino: number; size: number }, mode: number): string | undefined {
    const seed = this.current();
    const slash = path.lastIndexOf('/');
    const i = seed?.directory(path.slice(0, slash + 1))?.names.get(path.slice(slash + 1));
    return i === undefined ? undefined : seed!.match(i, st, mode);
  }

  /** The entry at `path` (relative to the work tree top), or undefined. */
  entry(path: string): IndexEntry | undefined {
    const seed = this.current();
    if (!seed) return undefined;
    const slash = path.lastIndexOf('/');
    const i = seed.directory(path.slice(0, slash + 1))?.names.get(path.slice(slash + 1));
    return i === undefined ? undefined : { mode: seed.entryMode(i), oid: seed.entryOid(i) };
  }

  /**
   * True when the blob is text with CRLF line endings (convert.c
   * `has_crlf_in_index`); synchronous when known, else read from the
   * repository's objects. A blob that cannot be read counts as not CRLF.
   */
  hasCrlf(oid: string): boolean | Promise<boolean> {
    const known = this.crlf.get(oid);
    if (known !== undefined) return known;
    return this.readBlob(oid).then((content) => {
      const has = content !== undefined && hasCrlfText(content);
      this.crlf.set(oid, has);
      return has;
    });
  }

  private current(): IndexSeed | undefined {
    if (this.checked) return this.seed;
    this.checked = true;
    let stamp: string;
    try {
      const st = lstatSync(this.indexFile);
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {
      this.seed = undefined;
      this.stamp = '';
      return undefined;
    }
    if (stamp !== this.stamp) {
      this.seed = readIndexSeed(this.indexFile);
      this.stamp = stamp;
    }
    return this.seed;
  }

  private async readBlob(oid: string): Promise<Uint8Array | undefined> {
    this.objects ??= new ObjectDirectory(this.objectsDir, createDeltaBaseCache(4 * 1024 * 1024));
    try {
      const loose = await this.objects.readLoose(oid);
      if (loose) return loose.content;
      await this.objects.refresh();
      return (await this.packed(oid))?.content;
    } catch {
      return undefined;
    }
  }

  private async packed(oid: string): Promise<StoredObject | undefined> {
    const at = this.objects!.findPacked(Buffer.from(oid, 'hex'));
    if (!at) return undefined;
    return at.pack.readAt(at.position, async (base) => {
      const o = (await this.objects!.readLoose(base)) ?? (await this.packed(base));
      if (!o) throw new Error(`object ${base} not found`);
      return o;
    });
  }

  /** Closes the pack files opened to read blobs. */
  close(): void {
    this.objects?.close();
    this.objects = undefined;
  }
}
