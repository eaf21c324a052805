/**
 * The store's retention settings as users write them: a byte budget
 * (`500MB`, `2GiB`) and an age in days, from flags or environment variables.
 */

/** Environment variable holding the store budget when `--store-budget` is not given. */
export const STORE_BUDGET_ENV = 'CHANGESET_SERVER_STORE_BUDGET';
/** Environment variable holding the retention age when `--retain-days` is not given. */
export const RETAIN_DAYS_ENV = 'CHANGESET_SERVER_RETAIN_DAYS';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

/**
 * Bytes of a size such as `500MB` (decimal units: KB, MB, GB, TB), `2GiB`
 * (binary: KiB, MiB, GiB, TiB; K, M, G, T alone are binary too) or a plain
 * number of bytes. Returns an error message instead when it is not one.
 */
export function parseByteSize(text: string): number | string {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return `a size like 500MB, 2GiB or a number of bytes, got "${text}"`;
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes < 1 || !Number.isSafeInteger(bytes)) return `a size of at least 1 byte, got "${text}"`;
  return bytes;
}

/** Days from a positive number such as `30` or `0.5`; an error message when it is not one. */
export function parseRetainDays(text: string): number | string {
  if (!/^\s*\d+(?:\.\d+)?\s*$/.test(text) || !(Number(text) > 0)) return `a positive number of days, got "${text}"`;
  return Number(text);
}
