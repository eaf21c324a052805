/**
 * `file:` URIs of paths whose names are bytes. `pathToFileURL` turns an
 * escaped byte (see `path-bytes.ts`) into `%EF%BF%BD` and `fileURLToPath`
 * throws on `%E9`, so a name that is not UTF-8 would get an id naming another
 * file and could not be read back. Here the raw bytes are percent-encoded
 * (`caf%E9.txt`) and decoded back to the same escaped string; every other
 * path gets exactly the URI `pathToFileURL` gives, so ids stay as they were.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { decodePathBytes, encodePathBytes, hasRawBytes } from './path-bytes.js';

/** ASCII bytes `pathToFileURL` writes as they are; every other byte is percent-encoded. */
const KEPT = new Uint8Array(256);
for (const c of "!$&'()*+,-./:;=@_") KEPT[c.charCodeAt(0)] = 1;
for (let b = 0x30; b <= 0x39; b++) KEPT[b] = 1;
for (let b = 0x41; b <= 0x5a; b++) KEPT[b] = 1;
for (let b = 0x61; b <= 0x7a; b++) KEPT[b] = 1;

const HEX = '0123456789ABCDEF';

/** The `file:` URI of an absolute (or cwd-relative) path, percent-encoding its exact bytes. */
export function fileUri(path: string): string {
  if (!hasRawBytes(path)) return pathToFileURL(path).href;
  let resolved = resolve(path);
  if (path.endsWith('/') && !resolved.endsWith('/')) resolved += '/';
  let out = 'file://';
  for (const b of encodePathBytes(resolved)) {
    out += KEPT[b] ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

/**
 * The path a `file:` URI names, as `fileUri` would have been given it
 * (undecodable bytes escaped); undefined for anything that is not a local
 * `file:` URI or encodes a `/` or a NUL inside a name.
 */
export function pathOfFileUri(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'file:' || (url.hostname !== '' && url.hostname !== 'localhost')) return undefined;
  const encoded = url.pathname;
  if (/%2f|%00/i.test(encoded)) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const code = encoded.charCodeAt(i);
    if (code === 0x25 && /^[0-9a-fA-F]{2}$/.test(encoded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      // The URL parser leaves only ASCII unencoded in a path.
      bytes.push(code);
    }
  }
  return decodePathBytes(Uint8Array.from(bytes));
}
