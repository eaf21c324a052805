/**
 * File names are bytes. A name that is not valid UTF-8 is carried in a JS
 * string with each byte that does not decode mapped to a lone surrogate
 * U+DC80–U+DCFF (the "surrogateescape" convention), so it survives every
 * map, JSON message and comparison, and converts back to exactly the bytes
 * on disk. Node's own string paths would re-encode such a name as U+FFFD
 * and name another file; `fsPath` gives the form Node must be handed.
 */

const fatal = new TextDecoder('utf-8', { fatal: true });
const ESCAPE_LOW = 0xdc80;
const ESCAPE_HIGH = 0xdcff;
const HAS_ESCAPE = /[\udc80-\udcff]/;

/** The string form of a name or path given as bytes: UTF-8, with undecodable bytes escaped. */
export function decodePathBytes(bytes: Uint8Array): string {
  try {
    return fatal.decode(bytes);
  } catch {
    return decodeEscaping(bytes);
  }
}

/** The exact bytes a string made by `decodePathBytes` (or any plain string) stands for. */
export function encodePathBytes(path: string): Buffer {
  if (!HAS_ESCAPE.test(path)) return Buffer.from(path, 'utf8');
  const parts: Buffer[] = [];
  let plain = '';
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    const escaped = code >= ESCAPE_LOW && code <= ESCAPE_HIGH && !isPairedLow(path, i);
    if (!escaped) {
      plain += path[i];
      continue;
    }
    if (plain) parts.push(Buffer.from(plain, 'utf8'));
    plain = '';
    parts.push(Buffer.from([code - 0xdc00]));
  }
  if (plain) parts.push(Buffer.from(plain, 'utf8'));
  return Buffer.concat(parts);
}

/** True when a path holds bytes that are not UTF-8 (and so must reach Node as a Buffer). */
export function hasRawBytes(path: string): boolean {
  return HAS_ESCAPE.test(path) && encodePathBytes(path).toString('utf8') !== path;
}

/** What to hand Node's `fs` for a path: the string itself, or its bytes when it has undecodable ones. */
export function fsPath(path: string): string | Buffer {
  return hasRawBytes(path) ? encodePathBytes(path) : path;
}

/** A path for people to read: each undecodable byte shown as `\xNN`. */
export function displayPathBytes(path: string): string {
  if (!HAS_ESCAPE.test(path)) return path;
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code >= ESCAPE_LOW && code <= ESCAPE_HIGH && !isPairedLow(path, i)) out += `\\x${(code - 0xdc00).toString(16).padStart(2, '0')}`;
    else out += path[i];
  }
  return out;
}

function isPairedLow(s: string, i: number): boolean {
  if (i === 0) return false;
  const prev = s.charCodeAt(i - 1);
  return prev >= 0xd800 && prev <= 0xdbff;
}

function decodeEscaping(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const len = utf8SequenceLength(bytes, i);
    if (len === 0) {
      out += String.fromCharCode(0xdc00 + bytes[i]!);
      i++;
    } else {
      out += fatal.decode(bytes.subarray(i, i + len));
      i += len;
    }
  }
  return out;
}

/** Length of a well-formed UTF-8 sequence starting at `i`, or 0 when the byte there does not start one. */
function utf8SequenceLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number): boolean => i + k < b.length && (b[i + k]! & 0xc0) === 0x80;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    const c1 = b[i + 1]!;
    if (c === 0xe0 && c1 < 0xa0) return 0; // overlong
    if (c === 0xed && c1 >= 0xa0) return 0; // UTF-16 surrogate half
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const c1 = b[i + 1]!;
    if (c === 0xf0 && c1 < 0x90) return 0;
    if (c === 0xf4 && c1 >= 0x90) return 0;
    return 4;
  }
  return 0;
}
