/**
 * Directory listings a snapshot may take from someone who already read
 * them: the file watcher lists every directory as it sets itself up, and
 * the first walk after it would otherwise list each one a second time.
 */

/** One directory's entries as read, with the directory's stat taken before they were read. */
export interface DirListing {
  /** Entry names (every name valid UTF-8: a listing with any other is not given). */
  names: string[];
  /** KIND_* of each entry from its directory entry type; 0 when the type was not reported. */
  kinds: Uint8Array;
  /** The directory's mtime, ctime and inode from an lstat made before the listing was read. */
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/**
 * Where a walk takes listings from. A listing is used only when the
 * directory's stat at the walk equals the one taken before the listing
 * was read, and a listing that may have changed since is not given at all
 * (the watcher drops a directory's listing at its first event). The stat
 * cache is then saved with a racy reference no later than `clockMs`, so a
 * change made after the listing was read in the same clock tick as the
 * stat is read again next time.
 */
export interface ListingSource {
  /** The file system's clock (a file's mtime, as the stat cache's reference time) read before any listing given was read. */
  readonly clockMs: number;
  /** The listing of `dir` (an absolute path as the walk spells it), at most once. */
  take(dir: string): DirListing | undefined;
  /** The walk is over: listings not taken can go. */
  release(): void;
}
