/**
 * The conversions git applies besides line endings, as convert.c does
 * them: `working-tree-encoding` (the working tree holds UTF-16 or
 * ISO-8859-1, git stores UTF-8) and `ident` (`$Id$` in git, `$Id: <blob
 * id> $` in the working tree). Clean order: encoding, line endings, ident;
 * smudge order: ident, line endings, encoding.
 */
import type { AttrValue } from './git-attributes.js';
import { hashObject } from './git-objects.js';

/** The working-tree encodings converted both ways; any other is left as bytes (see docs/snapshot.md). */
export type WorkingTreeEncoding = 'UTF-16' | 'UTF-16LE' | 'UTF-16BE' | 'UTF-16LE-BOM' | 'UTF-16BE-BOM' | 'ISO-8859-1';

const ENCODINGS: ReadonlyMap<string, WorkingTreeEncoding> = new Map([
  ['UTF16', 'UTF-16'],
  ['UTF16LE', 'UTF-16LE'],
  ['UTF16BE', 'UTF-16BE'],
  ['UTF16LEBOM', 'UTF-16LE-BOM'],
  ['UTF16BEBOM', 'UTF-16BE-BOM'],
  ['ISO88591', 'ISO-8859-1'],
  ['LATIN1', 'ISO-8859-1'],
]);

/** The `working-tree-encoding` attribute's value as a supported encoding; undefined for none, UTF-8 (git ignores it) and unsupported ones. */
export function workingTreeEncoding(value: AttrValue | undefined): WorkingTreeEncoding | undefined {
  if (typeof value !== 'string') return undefined;
  return ENCODINGS.get(value.toUpperCase().replace(/[-_]/g, ''));
}

/** True when the `working-tree-encoding` value names an encoding other than UTF-8 that is not converted. */
export function isUnsupportedEncoding(value: AttrValue | undefined): boolean {
  if (typeof value !== 'string' || value === '') return false;
  const key = value.toUpperCase().replace(/[-_]/g, '');
  return key !== 'UTF8' && !ENCODINGS.has(key);
}

const utf16 = new TextDecoder('utf-16le', { fatal: true });
const utf8 = new TextDecoder('utf-8', { fatal: true });

function swapped(bytes: Uint8Array, from: number): Buffer {
  const out = Buffer.from(bytes.subarray(from));
  out.swap16();
  return out;
}

/**
 * `encode_to_git`: the UTF-8 bytes git stores, or undefined when git
 * refuses the file (a BOM missing for UTF-16 or present for UTF-16LE/BE,
 * bytes that are not valid in the encoding) and the bytes are kept.
 */
export function encodeToGit(content: Uint8Array, encoding: WorkingTreeEncoding): Uint8Array | undefined {
  if (content.length === 0) return content;
  if (encoding === 'ISO-8859-1') return Buffer.from(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1'), 'utf8');
  const le = content.length >= 2 && content[0] === 0xff && content[1] === 0xfe;
  const be = content.length >= 2 && content[0] === 0xfe && content[1] === 0xff;
  let units: Uint8Array;
  if (encoding === 'UTF-16') {
    if (!le && !be) return undefined;
    units = le ? content.subarray(2) : swapped(content, 2);
  } else if (encoding === 'UTF-16LE' || encoding === 'UTF-16BE') {
    if (le || be) return undefined;
    units = encoding === 'UTF-16LE' ? content : swapped(content, 0);
  } else {
    // iconv has no decoder for the -BOM names: git cannot add such a file.
    return undefined;
  }
  if (units.length % 2 !== 0) return undefined;
  try {
    return Buffer.from(utf16.decode(units), 'utf8');
  } catch {
    return undefined;
  }
}

/** `encode_to_worktree`: the bytes `git checkout` writes for UTF-8 content (a blob that is not UTF-8 is written as it is). */
export function encodeToWorktree(blob: Uint8Array, encoding: WorkingTreeEncoding): Uint8Array {
  if (blob.length === 0) return blob;
  let text: string;
  try {
    text = utf8.decode(blob);
  } catch {
    return blob;
  }
  if (encoding === 'ISO-8859-1') {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return blob;
    return Buffer.from(text, 'latin1');
  }
  const units = Buffer.from(text, 'utf16le');
  // iconv's "UTF-16" writes a BOM and the machine's byte order (big-endian where it omits the BOM, as on macOS, and git adds one).
  const bigEndian = encoding === 'UTF-16BE' || encoding === 'UTF-16BE-BOM' || (encoding === 'UTF-16' && process.platform === 'darwin');
  const bom = encoding === 'UTF-16' || encoding.endsWith('-BOM');
  if (bigEndian) units.swap16();
  return bom ? Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), units]) : units;
}

const DOLLAR = 0x24;
const NL = 0x0a;

function isId(b: Uint8Array, at: number): boolean {
  return b[at] === 0x49 && b[at + 1] === 0x64;
}

/** convert.c `count_ident`: `$Id$` and `$Id: … $` (no newline before the closing `$`). */
function countIdent(b: Uint8Array): number {
  let count = 0;
  let i = 0;
  const n = b.length;
  while (i < n) {
    if (b[i++] !== DOLLAR) continue;
    if (n - i < 3) break;
    if (!isId(b, i)) continue;
    const c = b[i + 2];
    i += 3;
    if (c === DOLLAR) count++;
    if (c !== 0x3a) continue;
    while (i < n) {
      const d = b[i++];
      if (d === DOLLAR) {
        count++;
        break;
      }
      if (d === NL) break;
    }
  }
  return count;
}

/** `ident_to_git`: every `$Id: … $` collapses to `$Id$`. */
export function identToGit(content: Uint8Array): Uint8Array {
  if (content.indexOf(DOLLAR) < 0 || countIdent(content) === 0) return content;
  const out: number[] = [];
  let i = 0;
  const n = content.length;
  for (;;) {
    const dollar = content.indexOf(DOLLAR, i);
    if (dollar < 0) break;
    for (let k = i; k <= dollar; k++) out.push(content[k]!);
    i = dollar + 1;
    if (n - i > 3 && isId(content, i) && content[i + 2] === 0x3a) {
      const close = content.indexOf(DOLLAR, i + 3);
      if (close < 0) break;
      const nl = content.indexOf(NL, i + 3);
      if (nl >= 0 && nl < close) continue;
      out.push(0x49, 0x64, DOLLAR);
      i = close + 1;
    }
  }
  for (let k = i; k < n; k++) out.push(content[k]!);
  return Buffer.from(out);
}

/** `ident_to_worktree`: `$Id$` (and git-style `$Id:…$`) become `$Id: <id of the blob> $`. */
export function identToWorktree(blob: Uint8Array): Uint8Array {
  if (blob.indexOf(DOLLAR) < 0 || countIdent(blob) === 0) return blob;
  const expanded = Buffer.from(`Id: ${hashObject('blob', blob)} $`, 'latin1');
  const parts: Uint8Array[] = [];
  let i = 0;
  const n = blob.length;
  for (;;) {
    const dollar = blob.indexOf(DOLLAR, i);
    if (dollar < 0) break;
    parts.push(blob.subarray(i, dollar + 1));
    i = dollar + 1;
    if (n - i < 3 || !isId(blob, i)) continue;
    if (blob[i + 2] === DOLLAR) {
      i += 3;
    } else if (blob[i + 2] === 0x3a) {
      const close = blob.indexOf(DOLLAR, i + 3);
      if (close < 0) break;
      const nl = blob.indexOf(NL, i + 3);
      if (nl >= 0 && nl < close) continue;
      const space = blob.indexOf(0x20, i + 4);
      // Spaces elsewhere than before the closing `$`: another system's id, kept.
      if (space >= 0 && space < close - 1) continue;
      i = close + 1;
    } else {
      continue;
    }
    parts.push(expanded);
  }
  parts.push(blob.subarray(i));
  return Buffer.concat(parts);
}
