/**
 * The path components git refuses to write into a working tree (its
 * `verify_path`, with `core.protectNTFS` and `core.protectHFS` on, as git
 * has them on by default): `.git` in any case, and every other spelling a
 * filesystem reads as `.git` — trailing dots and spaces, an NTFS stream
 * (`.git::$INDEX_ALLOCATION`), the NTFS short name `GIT~1`, and on HFS+ the
 * invisible code points it ignores (`.g\u200cit`). Writing such a name would
 * write into the repository's own directory: its config, its hooks.
 *
 * Names are bytes: the checks run on the exact bytes a tree entry or a path
 * (see `path-bytes.ts`) stands for.
 */
import { displayPathBytes, encodePathBytes } from './path-bytes.js';

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const SPACE = 0x20;
const COLON = 0x3a;

/** Why git refuses to write a file or directory with this name, or undefined when it would write it. */
export function refusedComponent(name: Uint8Array | string): string | undefined {
  const bytes = typeof name === 'string' ? encodePathBytes(name) : name;
  if (bytes.byteLength === 0) return 'has an empty name';
  if (bytes.includes(0)) return 'has a NUL byte in its name';
  if (bytes.includes(SLASH)) return 'has a "/" in its name';
  if (bytes.byteLength === 1 && bytes[0] === DOT) return 'is named "."';
  if (bytes.byteLength === 2 && bytes[0] === DOT && bytes[1] === DOT) return 'is named ".."';
  if (bytes.byteLength === 4 && asciiLower(bytes) === '.git') return "is a .git directory (the repository's own files)";
  if (isNtfsDotGit(bytes, 0)) return 'is a name Windows reads as .git';
  // git's verify_path also splits a name at backslashes, Windows' separator.
  for (let i = 0; i < bytes.byteLength; i++) {
    if (bytes[i] === BACKSLASH && isNtfsDotGit(bytes, i + 1)) return 'is a name Windows reads as a path through .git';
  }
  if (isHfsDotGit(bytes)) return 'is a name macOS reads as .git (it ignores the invisible characters in it)';
  return undefined;
}

/** The first component of a `/`-separated relative path that git refuses to write, with why; undefined when there is none. */
export function refusedPath(relPath: string): { component: string; problem: string } | undefined {
  for (const component of relPath.split('/')) {
    const problem = refusedComponent(component);
    if (problem) return { component, problem };
  }
  return undefined;
}

/** A name or path quoted for a message, every invisible or control character written out (`.g\u200cit`), so it shows what the name really is. */
export function quotedName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this escapes for the message
  const escaped = name.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"\\]/g, (c) =>
    c === '"' || c === '\\' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${displayPathBytes(escaped)}"`;
}

function asciiLower(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('latin1').toLowerCase();
}

/**
 * git's `is_ntfs_dotgit`: `.git` or `git~1` (any case) followed only by
 * dots and spaces up to the end, a separator or a `:` (an alternate data
 * stream), all of which NTFS strips or resolves to the same directory.
 */
function isNtfsDotGit(bytes: Uint8Array, start: number): boolean {
  const lower = (i: number) => {
    const b = bytes[i];
    return b === undefined ? -1 : b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
  };
  let i = start;
  if (lower(i) === DOT && lower(i + 1) === 0x67 && lower(i + 2) === 0x69 && lower(i + 3) === 0x74) i += 4;
  else if (lower(i) === 0x67 && lower(i + 1) === 0x69 && lower(i + 2) === 0x74 && bytes[i + 3] === 0x7e && bytes[i + 4] === 0x31) i += 5;
  else return false;
  for (; i < bytes.byteLength; i++) {
    const b = bytes[i]!;
    if (b === BACKSLASH || b === SLASH || b === COLON) return true;
    if (b !== DOT && b !== SPACE) return false;
  }
  return true;
}

/** Code points HFS+ leaves out when it compares names (git's `next_hfs_char`). */
const HFS_IGNORED = new Set([0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff]);

/**
 * git's `is_hfs_dotgit`: `.git` in any case once the ignored code points are
 * left out. Like git, bytes that are not UTF-8 end the name there: `.git`
 * followed by a stray byte is refused too.
 */
function isHfsDotGit(bytes: Uint8Array): boolean {
  const points: number[] = [];
  for (let i = 0; i < bytes.byteLength; ) {
    const decoded = decodeUtf8(bytes, i);
    if (!decoded) break;
    i = decoded.next;
    if (!HFS_IGNORED.has(decoded.point)) points.push(decoded.point);
    if (points.length > 4) return false;
  }
  if (points.length !== 4 || points.some((p) => p > 127)) return false;
  return String.fromCharCode(...points).toLowerCase() === '.git';
}

/** One UTF-8 code point at `i` (shortest form, no surrogates), or undefined when the bytes there are not one. */
function decodeUtf8(bytes: Uint8Array, i: number): { point: number; next: number } | undefined {
  const b0 = bytes[i]!;
  if (b0 < 0x80) return { point: b0, next: i + 1 };
  const length = b0 >= 0xf0 && b0 <= 0xf4 ? 4 : b0 >= 0xe0 ? 3 : b0 >= 0xc2 && b0 < 0xe0 ? 2 : 0;
  if (length === 0 || b0 > 0xf4 || i + length > bytes.byteLength) return undefined;
  let point = b0 & (0xff >> (length + 1));
  for (let k = 1; k < length; k++) {
    const b = bytes[i + k]!;
    if ((b & 0xc0) !== 0x80) return undefined;
    point = (point << 6) | (b & 0x3f);
  }
  const shortest = length === 2 ? 0x80 : length === 3 ? 0x800 : 0x10000;
  if (point < shortest || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return undefined;
  return { point, next: i + length };
}
