/**
 * Git's delta format (used by ofs-delta and ref-delta pack entries): two
 * varint sizes, then copy-from-base and insert-literal instructions.
 */
import { CorruptObjectError } from './errors.js';

function readSize(delta: Uint8Array, start: number): [value: number, next: number] {
  let value = 0;
  let shift = 1;
  let i = start;
  for (;;) {
    const byte = delta[i++];
    if (byte === undefined) throw new CorruptObjectError('delta header is truncated');
    value += (byte & 0x7f) * shift;
    shift *= 128;
    if ((byte & 0x80) === 0) return [value, i];
  }
}

/** Rebuilds an object from its base and a delta. */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Buffer {
  const [baseSize, afterBase] = readSize(delta, 0);
  if (baseSize !== base.byteLength) {
    throw new CorruptObjectError(`delta expects a ${baseSize}-byte base, got ${base.byteLength}`);
  }
  const [resultSize, start] = readSize(delta, afterBase);
  const out = Buffer.allocUnsafe(resultSize);
  let written = 0;
  let i = start;
  while (i < delta.byteLength) {
    const op = delta[i++]!;
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      if (op & 0x01) offset |= delta[i++]!;
      if (op & 0x02) offset |= delta[i++]! << 8;
      if (op & 0x04) offset |= delta[i++]! << 16;
      if (op & 0x08) offset += delta[i++]! * 0x1000000;
      if (op & 0x10) size |= delta[i++]!;
      if (op & 0x20) size |= delta[i++]! << 8;
      if (op & 0x40) size |= delta[i++]! << 16;
      if (size === 0) size = 0x10000;
      if (offset + size > base.byteLength || written + size > resultSize) {
        throw new CorruptObjectError('delta copies outside its base or result');
      }
      out.set(base.subarray(offset, offset + size), written);
      written += size;
    } else if (op !== 0) {
      if (i + op > delta.byteLength || written + op > resultSize) throw new CorruptObjectError('delta insert is truncated');
      out.set(delta.subarray(i, i + op), written);
      written += op;
      i += op;
    } else {
      throw new CorruptObjectError('delta uses the reserved opcode 0');
    }
  }
  if (written !== resultSize) throw new CorruptObjectError(`delta produced ${written} bytes, expected ${resultSize}`);
  return out;
}
