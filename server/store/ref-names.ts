/**
 * Encoding arbitrary ids (session ids, turn ids) as single ref-name
 * components. Letters, digits, `_` and `-` stay readable; every other byte of
 * the UTF-8 form becomes `%XX`, which rules out everything git forbids in ref
 * names (`..`, `.lock`, leading dots, `~^:?*[\`, spaces, control bytes).
 * Ids with upper-case letters (which collide with lower-case ones on
 * case-insensitive filesystems) and very long ids get a hash suffix. The raw
 * id is always kept in the commit metadata, so decoding is never required.
 */
import { createHash } from 'node:crypto';

const MAX_READABLE = 80;

/** The ref-name component for an id; deterministic, never empty, at most ~100 bytes. */
export function encodeRefComponent(id: string): string {
  let encoded = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const c = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  const needsHash = encoded.length > MAX_READABLE || /[A-Z]/.test(id);
  if (!needsHash) return encoded;
  let readable = encoded.slice(0, MAX_READABLE);
  const cut = readable.lastIndexOf('%');
  if (cut >= 0 && cut > readable.length - 3) readable = readable.slice(0, cut);
  const hash = createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 12);
  return `${readable}--${hash}`;
}

/** Best-effort reverse of {@link encodeRefComponent} for display (hash suffixes are dropped). */
export function decodeRefComponent(component: string): string {
  const withoutHash = component.replace(/--[0-9a-f]{12}$/, '');
  try {
    return decodeURIComponent(withoutHash);
  } catch {
    return withoutHash;
  }
}
