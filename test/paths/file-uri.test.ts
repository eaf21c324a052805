import { pathToFileURL, fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileUri, pathOfFileUri } from '../../server/file-uri.js';
import { decodePathBytes } from '../../server/path-bytes.js';

const latin1 = (hex: string): string => decodePathBytes(Buffer.from(hex, 'hex'));

describe('file URIs of byte names', () => {
  it('percent-encodes the raw bytes of a name that is not UTF-8 and reads them back to the same string', () => {
    const path = `/work/${latin1('636166e92e747874')}`;
    expect(fileUri(path)).toBe('file:///work/caf%E9.txt');
    expect(pathOfFileUri('file:///work/caf%E9.txt')).toBe(path);
    expect(pathOfFileUri('file:///work/caf%e9.txt')).toBe(path);
    const dir = `/w/dir-${latin1('ff')}/sp ace #?%/${latin1('c3')}x`;
    expect(fileUri(dir)).toBe('file:///w/dir-%FF/sp%20ace%20%23%3F%25/%C3x');
    expect(pathOfFileUri(fileUri(dir))).toBe(dir);
  });

  it('gives UTF-8 paths exactly the URI pathToFileURL gives, for every ASCII character', () => {
    for (let b = 1; b < 0x80; b++) {
      const c = String.fromCharCode(b);
      if (c === '/') continue;
      const path = `/d/x${c}y`;
      expect(fileUri(path)).toBe(pathToFileURL(path).href);
      // The same character beside a raw byte is encoded the same way.
      expect(fileUri(`${path}${latin1('e9')}`)).toBe(`${pathToFileURL(path).href}%E9`);
      expect(pathOfFileUri(fileUri(`${path}${latin1('e9')}`))).toBe(`${path}${latin1('e9')}`);
    }
    for (const path of ['/a/café/日本語.txt', '/emoji-😀.md', '/new dir/é.txt']) {
      expect(fileUri(path)).toBe(pathToFileURL(path).href);
      expect(pathOfFileUri(fileUri(path))).toBe(fileURLToPath(fileUri(path)));
    }
  });

  it('refuses what is not a local file URI or hides a separator or NUL in a name', () => {
    for (const uri of ['http://x/a', 'file://host/a', 'file:///a%2Fb', 'file:///a%00b', 'not a uri']) expect(pathOfFileUri(uri)).toBeUndefined();
    expect(pathOfFileUri('file://localhost/a%20b')).toBe('/a b');
  });
});
