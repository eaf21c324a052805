/**
 * The part of `.gitattributes` the snapshot needs: which paths have
 * `filter=lfs`, so they are recorded as Git LFS pointers instead of content.
 */
import { createHash } from 'node:crypto';
import { compileGlob, type GlobTest } from './wildmatch.js';

/** One attribute line that mentions the `filter` attribute. */
export interface FilterRule {
  /** Matches the basename (no slash in the pattern) or the path relative to the file's directory. */
  basename: boolean;
  /** Compiled pattern. */
  test: GlobTest;
  /** True for `filter=lfs`; false when the line sets another filter or unsets it. */
  lfs: boolean;
}

/** Splits an attributes line into the pattern and the attribute tokens (C-quoted patterns supported). */
function splitLine(line: string): { pattern: string; attrs: string[] } | undefined {
  let rest = line.trim();
  if (rest === '' || rest.startsWith('#')) return undefined;
  let pattern: string;
  if (rest.startsWith('"')) {
    let i = 1;
    let out = '';
    while (i < rest.length && rest[i] !== '"') {
      if (rest[i] === '\\' && i + 1 < rest.length) {
        const c = rest[i + 1]!;
        out += c === 'n' ? '\n' : c === 't' ? '\t' : c;
        i += 2;
      } else out += rest[i++];
    }
    pattern = out;
    rest = rest.slice(i + 1);
  } else {
    const m = /^(\S+)(.*)$/s.exec(rest);
    if (!m) return undefined;
    pattern = m[1]!;
    rest = m[2]!;
  }
  return { pattern, attrs: rest.split(/[ \t\r]+/).filter((a) => a !== '') };
}

/** Parses a `.gitattributes` file, keeping only lines that set or unset `filter`. */
export function parseFilterRules(text: string): FilterRule[] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const rules: FilterRule[] = [];
  for (const raw of text.split('\n')) {
    const parts = splitLine(raw);
    if (!parts || parts.pattern.startsWith('[attr]')) continue;
    let lfs: boolean | undefined;
    for (const a of parts.attrs) {
      if (a.startsWith('filter=')) lfs = a === 'filter=lfs';
      else if (a === '-filter' || a === '!filter' || a === 'filter') lfs = false;
    }
    if (lfs === undefined) continue;
    let pattern = parts.pattern;
    // Negative patterns are forbidden in attributes; directory patterns never match files.
    if (pattern.startsWith('!') || pattern.endsWith('/')) continue;
    const basename = !pattern.includes('/');
    if (pattern.startsWith('/')) pattern = pattern.slice(1);
    rules.push({ basename, test: compileGlob(pattern, !basename), lfs });
  }
  return rules;
}

/** Filter rules of one attributes source and how to map walk-root paths onto it. */
export interface AttributeLevel {
  /** Rules in file order. */
  rules: FilterRule[];
  /** Prefix added to walk-root paths (sources above the walk root). */
  prepend: string;
  /** Characters removed from the front of walk-root paths (sources below the root). */
  strip: number;
}

/**
 * Attribute sources in precedence order, highest first: `info/attributes`,
 * the deepest `.gitattributes` up to the root one, then the global file.
 */
export class AttributeStack {
  private constructor(
    private readonly dirLevels: readonly AttributeLevel[],
    private readonly first: readonly AttributeLevel[],
    private readonly last: readonly AttributeLevel[],
  ) {}

  static create(first: AttributeLevel[], last: AttributeLevel[]): AttributeStack {
    return new AttributeStack([], first, last);
  }

  /** A stack with one more (deeper) `.gitattributes` level. */
  push(level: AttributeLevel): AttributeStack {
    if (level.rules.length === 0) return this;
    return new AttributeStack([...this.dirLevels, level], this.first, this.last);
  }

  /** True when there is no rule at all (the common case: skip matching). */
  get empty(): boolean {
    return this.dirLevels.length === 0 && this.first.length === 0 && this.last.length === 0;
  }

  /** True when the file at `path` (relative to the walk root) has `filter=lfs`. */
  isLfs(path: string, name: string): boolean {
    const check = (l: AttributeLevel): boolean | undefined => {
      for (let i = l.rules.length - 1; i >= 0; i--) {
        const r = l.rules[i]!;
        const hit = r.basename ? r.test(name) : r.test(l.prepend + (l.strip ? path.slice(l.strip) : path));
        if (hit) return r.lfs;
      }
      return undefined;
    };
    for (const l of this.first) {
      const v = check(l);
      if (v !== undefined) return v;
    }
    for (let i = this.dirLevels.length - 1; i >= 0; i--) {
      const v = check(this.dirLevels[i]!);
      if (v !== undefined) return v;
    }
    for (const l of this.last) {
      const v = check(l);
      if (v !== undefined) return v;
    }
    return false;
  }
}

const POINTER_RE = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:[0-9a-f]{64}\nsize [0-9]+\n(?:[a-z0-9-]+ [^\n]*\n)*$/;

/** True when the bytes already are an LFS pointer (git-lfs's clean filter passes those through). */
export function isLfsPointer(content: Uint8Array): boolean {
  if (content.length > 1024 || content.length < 80) return false;
  return POINTER_RE.test(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1'));
}

/** The pointer blob git-lfs's clean filter stores for content with this SHA-256 and size. */
export function lfsPointer(sha256Hex: string, size: number): Buffer {
  return Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256Hex}\nsize ${size}\n`, 'latin1');
}

/** Incremental SHA-256 for streaming large LFS files. */
export function newSha256(): ReturnType<typeof createHash> {
  return createHash('sha256');
}
