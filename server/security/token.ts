import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Environment variable that supplies the bearer token when `--token` is not given. */
export const TOKEN_ENV = 'CHANGESET_SERVER_TOKEN';

/** A fresh bearer token: 32 random bytes, base64url (never starting with `-`, so it reads as a value on any command line). */
export function generateToken(): string {
  for (;;) {
    const token = randomBytes(32).toString('base64url');
    if (!token.startsWith('-')) return token;
  }
}

/** Why a user-supplied token cannot be used, or undefined when it can. */
export function tokenProblem(token: string): string | undefined {
  if (token.length === 0) return 'the token must not be empty';
  if (token.length > 4096) return 'the token must be at most 4096 characters';
  // Tokens travel in headers and query strings; anything outside visible ASCII would not survive both.
  if (!/^[\x21-\x7e]+$/.test(token)) return 'the token must be visible ASCII characters without spaces';
  return undefined;
}

/**
 * Compares a presented token with the expected one in constant time. Both
 * are hashed first, so the comparison runs on equal-length buffers and
 * leaks neither content nor length.
 */
export function tokensEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
