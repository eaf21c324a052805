import { describe, expect, it } from 'vitest';
import { decodePathBytes, displayPathBytes, encodePathBytes, fsPath, hasRawBytes } from '../../server/path-bytes.js';

describe('path bytes', () => {
  it('round-trips names that are not UTF-8 exactly', () => {
    for (const hex of ['636166e92e747874', 'ff', 'c3', 'e282', 'eda080', 'c0af', 'f5', '61ed9fbf62', 'f09f9880', '80808080']) {
      const bytes = Buffer.from(hex, 'hex');
      expect(encodePathBytes(decodePathBytes(bytes)).toString('hex')).toBe(hex);
    }
  });

  it('leaves UTF-8 names as plain strings', () => {
    const name = 'café/😀.txt';
    expect(decodePathBytes(Buffer.from(name))).toBe(name);
    expect(hasRawBytes(name)).toBe(false);
    expect(fsPath(name)).toBe(name);
  });

  it('hands Node the bytes of an escaped name and shows it readably', () => {
    const name = decodePathBytes(Buffer.from('636166e92e747874', 'hex'));
    expect(name).not.toContain('\uFFFD');
    expect(hasRawBytes(name)).toBe(true);
    expect(Buffer.isBuffer(fsPath(name))).toBe(true);
    expect(displayPathBytes(name)).toBe('caf\\xe9.txt');
  });
});
