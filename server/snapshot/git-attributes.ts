/**
 * Git attributes as `git add` resolves them: `.gitattributes` at every
 * level, `$GIT_DIR/info/attributes` and the global attributes file, each
 * attribute decided on its own by the most specific source (within a file
 * the last matching line), macros (`[attr]name …`, and the built-in
 * `binary`) expanded where they are set. Only the attributes that change
 * what is stored are resolved: `text`, `crlf`, `eol`, `filter`, `ident`
 * and `working-tree-encoding`.
 */
import { compileGlob, type GlobTest } from './wildmatch.js';

/** `true` for `attr`, `false` for `-attr`, `null` for `!attr` (unspecified), else the value of `attr=value`. */
export type AttrValue = boolean | null | string;

/** One attribute as a line or macro sets it. */
export type AttrSetting = readonly [name: string, value: AttrValue];

/** One pattern line. */
interface AttrLine {
  /** No slash in the pattern: matches the basename at any depth. */
  basename: boolean;
  test: GlobTest;
  attrs: readonly AttrSetting[];
}

/** A parsed attributes file. */
export interface AttributeRules {
  lines: readonly AttrLine[];
  /** Macros it defines (only honoured in the sources git reads them from). */
  macros: ReadonlyMap<string, readonly AttrSetting[]>;
}

/** The attributes the snapshot and the write-back look at, as resolved for one path. */
export interface PathAttributes {
  text: AttrValue | undefined;
  crlf: AttrValue | undefined;
  eol: AttrValue | undefined;
  filter: AttrValue | undefined;
  ident: AttrValue | undefined;
  'working-tree-encoding': AttrValue | undefined;
}

const RELEVANT = new Set(['text', 'crlf', 'eol', 'filter', 'ident', 'working-tree-encoding']);
const BUILTIN_MACROS = new Map<string, readonly AttrSetting[]>([
  [
    'binary',
    [
      ['diff', false],
      ['merge', false],
      ['text', false],
    ],
  ],
]);
const NAME_RE = /^[A-Za-z0-9._][A-Za-z0-9._-]*$/;

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

/** Parses attribute tokens; undefined when one is invalid (git then drops the whole line). */
function parseSettings(tokens: readonly string[]): AttrSetting[] | undefined {
  const out: AttrSetting[] = [];
  for (const t of tokens) {
    let setting: AttrSetting;
    if (t.startsWith('-')) setting = [t.slice(1), false];
    else if (t.startsWith('!')) setting = [t.slice(1), null];
    else {
      const eq = t.indexOf('=');
      setting = eq < 0 ? [t, true] : [t.slice(0, eq), t.slice(eq + 1)];
    }
    if (!NAME_RE.test(setting[0]) || setting[0].startsWith('builtin_')) return undefined;
    out.push(setting);
  }
  return out;
}

/**
 * Parses a `.gitattributes`-style file. `macros`: whether `[attr]` lines
 * are honoured (the work tree's top file, info/attributes and the global
 * file; git refuses them deeper down). `caseFold`: `core.ignoreCase`.
 */
export function parseAttributes(text: string, opts: { macros: boolean; caseFold: boolean }): AttributeRules {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines: AttrLine[] = [];
  const macros = new Map<string, readonly AttrSetting[]>();
  for (const raw of text.split('\n')) {
    const parts = splitLine(raw);
    if (!parts) continue;
    const attrs = parseSettings(parts.attrs);
    if (!attrs) continue;
    let pattern = parts.pattern;
    if (pattern.startsWith('[attr]')) {
      const name = pattern.slice(6);
      if (opts.macros && NAME_RE.test(name)) macros.set(name, attrs);
      continue;
    }
    // Negative patterns are refused by git; directory patterns never match files.
    if (attrs.length === 0 || pattern.startsWith('!') || pattern.endsWith('/')) continue;
    const basename = !pattern.includes('/');
    if (pattern.startsWith('/')) pattern = pattern.slice(1);
    lines.push({ basename, test: compileGlob(pattern, !basename, opts.caseFold), attrs });
  }
  return { lines, macros };
}

/** Rules of one attributes source and how to map walk-root paths onto it. */
export interface AttributeLevel {
  rules: AttributeRules;
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
  /** The levels with only the lines that can decide a relevant attribute, in lookup order. */
  private readonly searched: readonly AttributeLevel[];

  private constructor(
    private readonly dirLevels: readonly AttributeLevel[],
    private readonly first: readonly AttributeLevel[],
    private readonly last: readonly AttributeLevel[],
    private readonly macros: ReadonlyMap<string, readonly AttrSetting[]>,
  ) {
    const ordered = [...first, ...[...dirLevels].reverse(), ...last];
    this.searched = ordered.map((l) => narrow(l, macros)).filter((l) => l.rules.lines.length > 0);
  }

  static create(first: AttributeLevel[], last: AttributeLevel[]): AttributeStack {
    return new AttributeStack([], first, last, mergeMacros([], first, last));
  }

  /** A stack with one more (deeper) `.gitattributes` level. */
  push(level: AttributeLevel): AttributeStack {
    if (level.rules.lines.length === 0 && level.rules.macros.size === 0) return this;
    const dirLevels = [...this.dirLevels, level];
    const macros = level.rules.macros.size === 0 ? this.macros : mergeMacros(dirLevels, this.first, this.last);
    return new AttributeStack(dirLevels, this.first, this.last, macros);
  }

  /**
   * True when no line can set an attribute that changes what is stored (the common
   * case, also with `.gitattributes` holding only `-diff` or `linguist-*`
   * lines): nothing to match.
   */
  get empty(): boolean {
    return this.searched.length === 0;
  }

  /** The attributes that change what is stored, for the file at `path` (relative to the walk root) named `name`. */
  lookup(path: string, name: string): PathAttributes {
    const found = new Map<string, AttrValue>();
    const state = { missing: RELEVANT.size };
    const level = (l: AttributeLevel): boolean => {
      const lines = l.rules.lines;
      let rel: string | undefined;
      for (let i = lines.length - 1; i >= 0; i--) {
        const line = lines[i]!;
        let hit: boolean;
        if (line.basename) hit = line.test(name);
        else {
          rel ??= l.prepend + (l.strip ? path.slice(l.strip) : path);
          hit = line.test(rel);
        }
        if (hit && this.fill(line.attrs, found, state)) return true;
      }
      return false;
    };
    for (const l of this.searched) if (level(l)) break;
    return {
      text: found.get('text'),
      crlf: found.get('crlf'),
      eol: found.get('eol'),
      filter: found.get('filter'),
      ident: found.get('ident'),
      'working-tree-encoding': found.get('working-tree-encoding'),
    };
  }

  /** True when the file has `filter=lfs`. */
  isLfs(path: string, name: string): boolean {
    return this.lookup(path, name).filter === 'lfs';
  }

  /**
   * git's fill_one: the later attributes of a line first, each only if no
   * more specific source decided it, a macro set to true expanding in place.
   * Returns true once every relevant attribute is decided.
   */
  private fill(attrs: readonly AttrSetting[], found: Map<string, AttrValue>, state: { missing: number }): boolean {
    for (let i = attrs.length - 1; i >= 0; i--) {
      const [name, value] = attrs[i]!;
      if (found.has(name)) continue;
      found.set(name, value);
      if (RELEVANT.has(name) && --state.missing === 0) return true;
      const macro = value === true ? this.macros.get(name) : undefined;
      if (macro && this.fill(macro, found, state)) return true;
    }
    return false;
  }
}

/** The level without lines that set nothing relevant, directly or through a macro. */
function narrow(level: AttributeLevel, macros: ReadonlyMap<string, readonly AttrSetting[]>): AttributeLevel {
  const lines = level.rules.lines.filter((line) => line.attrs.some(([name]) => RELEVANT.has(name) || macros.has(name)));
  return lines.length === level.rules.lines.length ? level : { ...level, rules: { lines, macros: level.rules.macros } };
}

/** Macro definitions by precedence: info/attributes, then the top `.gitattributes`, the global file, the built-ins. */
function mergeMacros(
  dirLevels: readonly AttributeLevel[],
  first: readonly AttributeLevel[],
  last: readonly AttributeLevel[],
): Map<string, readonly AttrSetting[]> {
  const merged = new Map(BUILTIN_MACROS);
  for (const l of [...last, ...dirLevels, ...first]) for (const [k, v] of l.rules.macros) merged.set(k, v);
  return merged;
}
