import { randomBytes } from 'node:crypto';

// Crockford's base32, as the ULID spec uses.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
let lastRandom = new Uint8Array(10);

/**
 * Returns a ULID: 48 bits of milliseconds and 80 random bits, 26 characters
 * that sort by creation time. Ids made within one millisecond increment the
 * random part, so they still sort in creation order.
 */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    now = lastTime;
    incrementRandom(lastRandom);
  } else {
    lastTime = now;
    lastRandom = new Uint8Array(randomBytes(10));
  }
  return encodeTime(now) + encodeRandom(lastRandom);
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits → 16 characters of 5 bits each.
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

function incrementRandom(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 255) {
      bytes[i]!++;
      return;
    }
    bytes[i] = 0;
  }
}
