/**
 * Git LFS pointers: what git-lfs's clean filter stores for paths with
 * `filter=lfs` (resolved in `git-attributes.ts`) instead of their content.
 */
import { createHash } from 'node:crypto';

const POINTER_RE = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:[0-9a-f]{64}\nsize [0-9]+\n(?:[a-z0-9-]+ [^\n]*\n)*$/;

/** True when the bytes already are an LFS pointer (git-lfs's clean filter passes those through). */
export function isLfsPointer(content: Uint8Array): boolean {
  if (content.length > 1024 || content.length < 80) return false;
  return POINTER_RE.test(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1'));
}

/** The pointer blob git-lfs's clean filter stores for content with this SHA-256 and size. */
export function lfsPointer(sha256Hex: string, size: number): Buffer {
  return Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256Hex}\nsize ${size}\n`, 'latin1');
}

/** Incremental SHA-256 for streaming large LFS files. */
export function newSha256(): ReturnType<typeof createHash> {
  return createHash('sha256');
}
