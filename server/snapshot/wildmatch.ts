/**
 * Git's wildmatch glob semantics compiled to a test function: `*`, `?`,
 * bracket expressions with classes, backslash escapes, and `**` spanning
 * directories when it stands between slashes.
 */

/** A compiled glob: returns true when the text matches. */
export type GlobTest = (text: string) => boolean;

const NEVER: GlobTest = () => false;

const CLASSES: Record<string, string> = {
  alnum: 'a-zA-Z0-9',
  alpha: 'a-zA-Z',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '\\x21-\\x7e',
  lower: 'a-z',
  print: '\\x20-\\x7e',
  punct: '!-\\/:-@\\[-`{-~',
  space: ' \\t\\n\\r\\f\\v',
  upper: 'A-Z',
  xdigit: '0-9a-fA-F',
};

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? '\\' + ch : ch;
}

function escapeClassChar(ch: string): string {
  return /[\\\]^-]/.test(ch) ? '\\' + ch : ch;
}

/**
 * Parses a bracket expression starting at `glob[start] === '['`. Returns the
 * regex class and the index after `]`, or undefined when unterminated (git
 * then fails the whole match).
 */
function parseBracket(glob: string, start: number, pathname: boolean): { re: string; end: number } | undefined {
  let i = start + 1;
  let negate = false;
  if (glob[i] === '!' || glob[i] === '^') {
    negate = true;
    i++;
  }
  let body = '';
  let first = true;
  while (i < glob.length) {
    let ch = glob[i]!;
    if (ch === ']' && !first) {
      const cls = `[${negate ? '^' : ''}${body}]`;
      // With WM_PATHNAME a bracket never matches '/'.
      return { re: pathname ? `(?!/)${cls}` : cls, end: i + 1 };
    }
    first = false;
    if (ch === '[' && glob[i + 1] === ':') {
      const close = glob.indexOf(':]', i + 2);
      if (close < 0) return undefined;
      const name = glob.slice(i + 2, close);
      const cls = CLASSES[name];
      if (cls === undefined) return undefined;
      body += cls;
      i = close + 2;
      continue;
    }
    if (ch === '\\') {
      i++;
      if (i >= glob.length) return undefined;
      ch = glob[i]!;
    }
    if (glob[i + 1] === '-' && glob[i + 2] !== undefined && glob[i + 2] !== ']') {
      let hi = glob[i + 2]!;
      let next = i + 3;
      if (hi === '\\') {
        hi = glob[i + 3] ?? '';
        next = i + 4;
        if (hi === '') return undefined;
      }
      body += `${escapeClassChar(ch)}-${escapeClassChar(hi)}`;
      i = next;
      continue;
    }
    body += escapeClassChar(ch);
    i++;
  }
  return undefined;
}

/** True when the glob has no wildcard or escape characters. */
function isLiteralGlob(glob: string): boolean {
  return !/[*?[\\]/.test(glob);
}

/** Lowercases ASCII letters only, as git's case folding does (`tolower` in the C locale). */
function asciiLower(text: string): string {
  return /[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (s) => s.toLowerCase()) : text;
}

/**
 * Compiles a glob. With `pathname`, `*` and `?` do not match '/', and `**`
 * between slashes (or at either end) matches any number of directories.
 * With `caseFold` (`core.ignoreCase`), ASCII letters match either case.
 */
export function compileGlob(glob: string, pathname: boolean, caseFold = false): GlobTest {
  if (caseFold) {
    // Both sides folded to lower case: `[:upper:]` then has to accept lower-case letters.
    const folded = compileGlob(asciiLower(glob).replace(/\[:upper:\]/g, '[:lower:]'), pathname);
    return (text) => folded(asciiLower(text));
  }
  if (isLiteralGlob(glob)) return (text) => text === glob;
  if (glob.charCodeAt(0) === 0x2a && glob.length > 1 && isLiteralGlob(glob.slice(1)) && !pathname) {
    const suffix = glob.slice(1);
    return (text) => text.endsWith(suffix);
  }
  let re = '';
  let i = 0;
  while (i < glob.length) {
    const ch = glob[i]!;
    if (ch === '*') {
      let j = i;
      while (glob[j] === '*') j++;
      const stars = j - i;
      const atStart = i === 0 || glob[i - 1] === '/';
      const atEnd = j === glob.length || glob[j] === '/';
      if (pathname && stars >= 2 && atStart && atEnd) {
        if (j === glob.length) {
          re += '.*';
          i = j;
        } else {
          re += '(?:.*/)?';
          i = j + 1;
        }
      } else {
        re += pathname ? '[^/]*' : '.*';
        i = j;
      }
      continue;
    }
    if (ch === '?') {
      re += pathname ? '[^/]' : '.';
      i++;
      continue;
    }
    if (ch === '[') {
      const b = parseBracket(glob, i, pathname);
      if (!b) return NEVER;
      re += b.re;
      i = b.end;
      continue;
    }
    if (ch === '\\') {
      // A trailing backslash makes the pattern invalid: it never matches.
      if (i + 1 >= glob.length) return NEVER;
      re += escapeRegex(glob[i + 1]!);
      i += 2;
      continue;
    }
    re += escapeRegex(ch);
    i++;
  }
  const rx = new RegExp(`^${re}$`, 's');
  return (text) => rx.test(text);
}
