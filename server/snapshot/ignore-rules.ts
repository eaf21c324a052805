/**
 * Git ignore rules: parsing `.gitignore`-style files and deciding whether a
 * path is excluded, with git's precedence (deeper files win, the last match
 * in a file wins, a negation re-includes, an excluded directory is never
 * entered so nothing below it can be re-included).
 */
import { compileGlob, type GlobTest } from './wildmatch.js';

/** One parsed pattern line. */
export interface IgnorePattern {
  /** The line as written (after trimming), for diagnostics. */
  source: string;
  /** `!pattern`: a match re-includes the path. */
  negate: boolean;
  /** `pattern/`: matches directories only. */
  dirOnly: boolean;
  /** No slash in the pattern: it matches the last path component at any depth. */
  basename: boolean;
  /** Tests the basename (basename patterns) or the path relative to the file's directory. */
  test: GlobTest;
}

/** Removes trailing spaces that are not escaped with a backslash. */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 0x20) {
    // Count backslashes before this space: an odd count escapes it.
    let bs = 0;
    for (let k = end - 2; k >= 0 && line.charCodeAt(k) === 0x5c; k--) bs++;
    if (bs % 2 === 1) break;
    end--;
  }
  return line.slice(0, end);
}

/** Parses one line of an ignore file; undefined for blanks and comments. `caseFold`: `core.ignoreCase`. */
export function parseIgnoreLine(raw: string, caseFold = false): IgnorePattern | undefined {
  let line = trimTrailingSpaces(raw);
  if (line === '' || line.charCodeAt(0) === 0x23 /* # */) return undefined;
  const source = line;
  let negate = false;
  if (line.charCodeAt(0) === 0x21 /* ! */) {
    negate = true;
    line = line.slice(1);
  }
  let dirOnly = false;
  if (line.endsWith('/')) {
    dirOnly = true;
    line = line.replace(/\/+$/, '');
  }
  if (line === '') return undefined;
  const basename = !line.includes('/');
  if (line.charCodeAt(0) === 0x2f) line = line.slice(1);
  return { source, negate, dirOnly, basename, test: compileGlob(line, !basename, caseFold) };
}

/** Parses the text of an ignore file (a leading UTF-8 BOM is skipped, as git does). `caseFold`: `core.ignoreCase`. */
export function parseIgnoreFile(text: string, caseFold = false): IgnorePattern[] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const out: IgnorePattern[] = [];
  for (const line of text.split('\n')) {
    const p = parseIgnoreLine(line, caseFold);
    if (p) out.push(p);
  }
  return out;
}

/**
 * Patterns from one source, applying to paths below `base`. Paths handed to
 * `IgnoreStack.isIgnored` are relative to the walk root; `prepend` and
 * `strip` turn them into paths relative to the source's directory.
 */
export interface IgnoreLevel {
  /** Patterns in file order. */
  patterns: IgnorePattern[];
  /** Prefix added to walk-root paths (for sources above the walk root). */
  prepend: string;
  /** Characters removed from the front of walk-root paths (sources below the root). */
  strip: number;
}

/** Finds the deciding pattern of one level, last match wins. */
function matchLevel(level: IgnoreLevel, path: string, name: string, isDir: boolean): IgnorePattern | undefined {
  const pats = level.patterns;
  let rel: string | undefined;
  for (let i = pats.length - 1; i >= 0; i--) {
    const p = pats[i]!;
    if (p.dirOnly && !isDir) continue;
    if (p.basename) {
      if (p.test(name)) return p;
    } else {
      rel ??= level.prepend + (level.strip ? path.slice(level.strip) : path);
      if (p.test(rel)) return p;
    }
  }
  return undefined;
}

/** Not excluded. */
export const NOT_IGNORED = 0;
/** Excluded by `.gitignore`, `info/exclude` or the global excludes: git still records a path its index has. */
export const IGNORED_BY_GIT = 1;
/** Excluded by the snapshot's own extra excludes: never recorded. */
export const IGNORED_BY_EXTRA = 2;
export type IgnoreDecision = typeof NOT_IGNORED | typeof IGNORED_BY_GIT | typeof IGNORED_BY_EXTRA;

/**
 * An immutable chain of ignore levels: the per-directory `.gitignore` files
 * from the walk root down, then the repository-wide sources. Directories
 * without an ignore file share their parent's stack.
 */
export class IgnoreStack {
  private constructor(
    private readonly dirLevels: readonly IgnoreLevel[],
    private readonly first: readonly IgnoreLevel[],
    private readonly last: readonly IgnoreLevel[],
  ) {}

  /**
   * `first` is consulted before any `.gitignore` (extra excludes), `last`
   * after all of them, in order (info/exclude, global excludes, built-ins).
   */
  static create(first: IgnoreLevel[], last: IgnoreLevel[]): IgnoreStack {
    return new IgnoreStack([], first, last);
  }

  /** A stack with one more (deeper) directory level. */
  push(level: IgnoreLevel): IgnoreStack {
    if (level.patterns.length === 0) return this;
    return new IgnoreStack([...this.dirLevels, level], this.first, this.last);
  }

  /** True when git would exclude this path (relative to the walk root). */
  isIgnored(path: string, name: string, isDir: boolean): boolean {
    return this.decide(path, name, isDir) !== NOT_IGNORED;
  }

  /**
   * Whether this path is excluded, and by what: {@link IGNORED_BY_GIT} (a
   * git source, which a path in the index overrides) or
   * {@link IGNORED_BY_EXTRA} (the `first` levels, absolute).
   */
  decide(path: string, name: string, isDir: boolean): IgnoreDecision {
    for (const l of this.first) {
      const p = matchLevel(l, path, name, isDir);
      if (p) return p.negate ? NOT_IGNORED : IGNORED_BY_EXTRA;
    }
    return this.byGit(path, name, isDir) ? IGNORED_BY_GIT : NOT_IGNORED;
  }

  private byGit(path: string, name: string, isDir: boolean): boolean {
    for (let i = this.dirLevels.length - 1; i >= 0; i--) {
      const p = matchLevel(this.dirLevels[i]!, path, name, isDir);
      if (p) return !p.negate;
    }
    for (const l of this.last) {
      const p = matchLevel(l, path, name, isDir);
      if (p) return !p.negate;
    }
    return false;
  }
}
