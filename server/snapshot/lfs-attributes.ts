/**
 * Git LFS pointers: what git-lfs's clean filter stores for paths with
 * `filter=lfs` (resolved in `git-attributes.ts`) instead of their content.
 * The rules are git-lfs's own (its pointer decoder, as `git-lfs clean`
 * applies it), not the stricter wording of its specification: content
 * git-lfs would pass through as a pointer is stored as is, everything else
 * is replaced by a pointer to it.
 */

/** git-lfs never reads content of this size or more as a pointer. */
const POINTER_SIZE_CUTOFF = 1024;
/** The version URLs git-lfs accepts, early names included. */
const VERSION_ALIASES: ReadonlySet<string> = new Set(['http://git-media.io/v/2', 'https://hawser.github.com/spec/v1', 'https://git-lfs.github.com/spec/v1']);
const HEADER_RE = /git-media|hawser|git-lfs/;
const OID_RE = /^sha256:[0-9a-f]{64}$/;
/** An extension key as git-lfs matches it: a prefix match, one priority digit. */
const EXTENSION_KEY_RE = /^ext-[0-9]-[0-9A-Za-z_]/;
/** What Go's `strconv.ParseInt(s, 10, 64)` accepts. */
const SIZE_RE = /^[+-]?[0-9]+$/;
const INT64_MAX = 2n ** 63n - 1n;
const KEYS = ['version', 'oid', 'size'] as const;

/** True when the bytes already are an LFS pointer (git-lfs's clean filter passes those through unchanged). */
export function isLfsPointer(content: Uint8Array): boolean {
  if (content.length >= POINTER_SIZE_CUTOFF || content.length === 0) return false;
  const text = Buffer.from(content.buffer, content.byteOffset, content.byteLength)
    .toString('latin1')
    .replace(/^[\t\n\v\f\r ]+|[\t\n\v\f\r ]+$/g, '');
  if (!HEADER_RE.test(text)) return false;
  const values = new Map<string, string>();
  const extensions = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length === 0) continue;
    const space = line.indexOf(' ');
    if (space < 0) return false;
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    const expected = KEYS[values.size];
    if (expected === undefined) return false;
    if (key === expected) values.set(key, value);
    else if (EXTENSION_KEY_RE.test(key)) extensions.set(key, value);
    else return false;
  }
  if (!VERSION_ALIASES.has(values.get('version') ?? '')) return false;
  if (!OID_RE.test(values.get('oid') ?? '')) return false;
  const size = values.get('size') ?? '';
  if (!SIZE_RE.test(size) || BigInt(size) < 0n || BigInt(size) > INT64_MAX) return false;
  const priorities = new Set<string>();
  for (const [key, value] of extensions) {
    const priority = key.split('-')[1]!;
    if (priorities.has(priority) || !OID_RE.test(value)) return false;
    priorities.add(priority);
  }
  return true;
}

/** The pointer blob git-lfs's clean filter stores for content with this SHA-256 and size: empty content stays empty. */
export function lfsPointer(sha256Hex: string, size: number): Buffer {
  if (size === 0) return Buffer.alloc(0);
  return Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256Hex}\nsize ${size}\n`, 'latin1');
}
